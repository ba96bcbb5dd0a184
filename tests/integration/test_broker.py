"""A real broker (in-process) against raw sockets and a real ZooKeeper: the 0.7 bytes, errors and znodes."""

from __future__ import annotations

import struct

import pytest

from tests.support.wire import connect, is_closed_by_peer, read_response, round_trip
from tests.unit.protocol.golden07 import FETCH_FRAME, HELLO_ENTRY, OFFSETS_FRAME, PRODUCE_FRAME
from zkafka.protocol.v07 import (
    FetchRequest,
    MultiFetchRequest,
    MultiProducerRequest,
    OffsetRequest,
    ProducerRequest,
    decode_multifetch_response,
    decode_offsets_response,
    encode_request,
)
from zkafka.records.format07 import iter_messages
from zkafka.records.message07 import build_message_set
from zkafka.server.registry import BrokerIdConflictError
from zkafka.utils import wait_until
from zkafka.zk.client import get_children, session_id

pytestmark = pytest.mark.integration


def produce(sock, topic, partition, payloads):
    sock.sendall(encode_request(ProducerRequest(topic, partition, build_message_set(payloads))))


def latest_offset(port, topic, partition):
    with connect(port) as sock:
        error, body = round_trip(sock, OffsetRequest(topic, partition, -1, 1))
    assert error == 0
    return decode_offsets_response(body)[0]


def fetch_payloads(port, topic, partition, offset=0, max_size=1 << 20):
    with connect(port) as sock:
        error, body = round_trip(sock, FetchRequest(topic, partition, offset, max_size))
    assert error == 0
    return [m.payload for m, _ in iter_messages(body, offset)]


def test_worked_example_frames_get_the_reference_answers(start_broker, tmp_path):
    broker = start_broker(0)
    with connect(broker.port) as sock:
        sock.sendall(PRODUCE_FRAME)
        wait_until(lambda: latest_offset(broker.port, "test", 0) == 15, message="hello flushed")
        sock.sendall(FETCH_FRAME)
        assert read_response(sock) == (0, HELLO_ENTRY)
        sock.sendall(OFFSETS_FRAME)
        assert read_response(sock) == (0, struct.pack(">iq", 1, 15))
    segment = tmp_path / "broker-0" / "test-0" / "00000000000000000000.kafka"
    assert segment.read_bytes() == HELLO_ENTRY


def test_message_sets_on_disk_are_byte_identical(start_broker, tmp_path):
    broker = start_broker(0)
    first, second = build_message_set([b"a", b"bb"]), build_message_set([b"c" * 300], codec=1)
    with connect(broker.port) as sock:
        sock.sendall(
            encode_request(
                MultiProducerRequest((ProducerRequest("t", 2, first), ProducerRequest("t", 2, second)))
            )
        )
    wait_until(lambda: latest_offset(broker.port, "t", 2) == len(first) + len(second))
    assert (tmp_path / "broker-0" / "t-2" / "00000000000000000000.kafka").read_bytes() == first + second
    assert fetch_payloads(broker.port, "t", 2) == [b"a", b"bb", b"c" * 300]


def test_fetch_and_offsets_semantics(start_broker):
    broker = start_broker(0)
    data = build_message_set([b"x" * 10, b"y" * 10])
    with connect(broker.port) as sock:
        sock.sendall(encode_request(ProducerRequest("f", 1, data)))
        wait_until(lambda: latest_offset(broker.port, "f", 1) == len(data))
        # a fetch is not aligned to messages: the partial trailing message is the client's to drop
        error, body = round_trip(sock, FetchRequest("f", 1, 0, 30))
        assert error == 0 and len(body) == 30
        assert [m.payload for m, _ in iter_messages(body)] == [b"x" * 10]
        assert round_trip(sock, FetchRequest("f", 1, len(data), 100)) == (0, b"")  # at the end: empty
        assert round_trip(sock, FetchRequest("f", 1, len(data) + 1, 100)) == (1, b"")  # past it
        assert round_trip(sock, FetchRequest("f", 9, 0, 100)) == (3, b"")  # wrong partition
        assert round_trip(sock, FetchRequest("nothing-here", 0, 0, 100)) == (0, b"")  # no log
        assert round_trip(sock, FetchRequest("../x", 0, 0, 100))[0] == -1  # invalid topic
        error, body = round_trip(sock, OffsetRequest("f", 1, -2, 5))
        assert decode_offsets_response(body) == [0]
        error, body = round_trip(sock, OffsetRequest("nothing-here", 0, -1, 5))
        assert decode_offsets_response(body) == [0]
        error, body = round_trip(sock, OffsetRequest("nothing-here", 0, 12345, 5))
        assert decode_offsets_response(body) == []
        error, body = round_trip(
            sock, MultiFetchRequest((FetchRequest("f", 1, 0, 1000), FetchRequest("f", 7, 0, 10)))
        )
        parts = decode_multifetch_response(body)
        assert error == 0 and [(e, bytes(b)) for e, b in parts] == [(0, data), (3, b"")]


def test_partition_minus_one_picks_a_partition(start_broker):
    broker = start_broker(0)
    with connect(broker.port) as sock:
        for _ in range(40):
            produce(sock, "rand", -1, [b"m"])

    def counts():
        return [latest_offset(broker.port, "rand", p) // 11 for p in range(4)]

    wait_until(lambda: sum(counts()) == 40, message="40 messages stored")
    assert sum(1 for c in counts() if c > 0) >= 2


BAD_FRAMES = {
    "garbage body": struct.pack(">ih", 10, 0) + b"\xff" * 8,
    "2 GB size prefix": struct.pack(">i", 0x7FFFFFFF) + b"\x00\x00",
    "zero size": struct.pack(">i", 0),
    "negative size": struct.pack(">i", -4),
    "unknown request type": struct.pack(">ih", 2, 42),
    "../x topic": encode_request(ProducerRequest("../x", 0, build_message_set([b"evil"]))),
    "slash topic": encode_request(ProducerRequest("a/b", 0, build_message_set([b"evil"]))),
    "control char topic": encode_request(ProducerRequest("a\x01b", 0, build_message_set([b"evil"]))),
    "partition out of range": encode_request(ProducerRequest("good", 4, build_message_set([b"evil"]))),
    "negative partition": encode_request(ProducerRequest("good", -7, build_message_set([b"evil"]))),
    "partial first message": encode_request(ProducerRequest("good", 0, build_message_set([b"evil"])[:-2])),
}


def _crc_corrupt_frame():
    data = bytearray(build_message_set([b"fine", b"evil"]))
    data[-1] ^= 0x01
    return encode_request(ProducerRequest("good", 0, bytes(data)))


BAD_FRAMES["crc-corrupt message"] = _crc_corrupt_frame()


@pytest.mark.parametrize("name", sorted(BAD_FRAMES))
def test_bad_input_closes_only_its_connection(start_broker, tmp_path, name):
    broker = start_broker(0)
    good = connect(broker.port)
    produce(good, "good", 0, [b"before"])
    wait_until(lambda: fetch_payloads(broker.port, "good", 0) == [b"before"])
    size_before = latest_offset(broker.port, "good", 0)

    bad = connect(broker.port)
    bad.sendall(BAD_FRAMES[name])
    assert is_closed_by_peer(bad), f"{name}: the broker kept the connection open"
    bad.close()

    # the log is untouched and the other client is still served on its open connection
    produce(good, "good", 0, [b"after"])
    wait_until(lambda: fetch_payloads(broker.port, "good", 0) == [b"before", b"after"])
    assert latest_offset(broker.port, "good", 0) == size_before + len(build_message_set([b"after"]))
    assert not (tmp_path / "broker-0" / "..x-0").exists()
    assert sorted(p.name for p in (tmp_path / "broker-0").iterdir()) == ["good-0"]
    good.close()


def test_oversize_message_is_dropped_and_connection_stays(start_broker):
    broker = start_broker(0, max_message_size="100")
    with connect(broker.port) as sock:
        produce(sock, "big", 0, [b"x" * 101])
        produce(sock, "big", 0, [b"ok"])
        wait_until(lambda: fetch_payloads(broker.port, "big", 0) == [b"ok"])


def test_registration_values_and_topics(start_broker, zk_client, tmp_path):
    broker = start_broker(3)
    value = zk_client.get("/brokers/ids/3")[0].decode()
    creator, host, port = value.split(":")
    assert host == "127.0.0.1" and int(port) == broker.port
    assert creator.startswith("127.0.0.1-") and creator.split("-", 1)[1].isdigit()
    assert zk_client.exists("/brokers/ids/3").ephemeralOwner != 0
    with connect(broker.port) as sock:
        produce(sock, "reg", 1, [b"m"])
    wait_until(lambda: zk_client.exists("/brokers/topics/reg/3"), message="topic registered")
    assert zk_client.get("/brokers/topics/reg/3")[0] == b"4"
    assert zk_client.exists("/brokers/topics/reg/3").ephemeralOwner != 0


def test_topics_on_disk_are_registered_at_start(start_broker, zk_client, tmp_path):
    (tmp_path / "broker-0" / "ondisk-2").mkdir(parents=True)
    start_broker(0, topic_partition_count_map="ondisk:3")
    assert zk_client.get("/brokers/topics/ondisk/0")[0] == b"3"


def test_two_brokers_register(start_broker, zk_client):
    b0, b1 = start_broker(0), start_broker(1)
    assert sorted(zk_client.get_children("/brokers/ids")) == ["0", "1"]
    for b in (b0, b1):
        with connect(b.port) as sock:
            produce(sock, "shared", 0, [b"m"])
    wait_until(lambda: sorted(get_children(zk_client, "/brokers/topics/shared")) == ["0", "1"])


def test_broker_id_held_by_another_live_session_refuses_to_start(start_broker):
    start_broker(5)
    with pytest.raises(BrokerIdConflictError, match="broker id 5 is already registered"):
        start_broker(5)


def test_clean_shutdown_removes_znodes_at_once(start_broker, zk_client):
    broker = start_broker(0)
    assert zk_client.exists("/brokers/ids/0")
    broker.stop()
    assert zk_client.exists("/brokers/ids/0") is None  # no waiting for the session timeout


def test_session_expiry_reregisters_broker_and_topics(start_broker, zk_client, zookeeper_server):
    from zkafka.launch.zookeeper_server import expire_session

    broker = start_broker(0)
    with connect(broker.port) as sock:
        produce(sock, "exp", 0, [b"m"])
    wait_until(lambda: zk_client.exists("/brokers/topics/exp/0"))
    client = broker.server.zookeeper.client
    old_session = session_id(client)
    old_value = zk_client.get("/brokers/ids/0")[0]
    expire_session(client.client_id, zookeeper_server.connect_string)

    def reregistered():
        stat = zk_client.exists("/brokers/ids/0")
        topic = zk_client.exists("/brokers/topics/exp/0")
        return stat and topic and stat.ephemeralOwner != old_session and topic.ephemeralOwner != old_session

    wait_until(reregistered, timeout=20, message="re-registration after expiry")
    assert zk_client.get("/brokers/ids/0")[0] != old_value  # a new creator id
    assert broker.server.zookeeper.registrations == 2
    assert fetch_payloads(broker.port, "exp", 0) == [b"m"]


def test_standalone_broker_without_zookeeper(start_broker):
    broker = start_broker(0, zk=None)
    with connect(broker.port) as sock:
        produce(sock, "solo", 0, [b"alone"])
    wait_until(lambda: fetch_payloads(broker.port, "solo", 0) == [b"alone"])


def test_magic_zero_messages_from_old_clients_are_stored_and_served_as_sent(start_broker):
    import zlib

    broker = start_broker(0)
    entries = b"".join(struct.pack(">iBI", 5 + len(p), 0, zlib.crc32(p)) + p for p in (b"brod", b"samsa"))
    with connect(broker.port) as sock:
        sock.sendall(encode_request(ProducerRequest("old", 0, entries)))
        wait_until(lambda: latest_offset(broker.port, "old", 0) == len(entries))
        assert round_trip(sock, FetchRequest("old", 0, 0, 1000)) == (0, entries)
    assert fetch_payloads(broker.port, "old", 0) == [b"brod", b"samsa"]

"""KafkaRequestHandlers on a LogManager in a temporary directory: decoded requests in, response frames out
(no sockets, no ZooKeeper)."""

from __future__ import annotations

import pytest

from tests.support.wire import wire_bytes
from zkafka.config07 import BrokerConfig
from zkafka.errors import InvalidTopicError
from zkafka.log.log_manager07 import LogManager
from zkafka.network.send import FileRegion
from zkafka.protocol import EARLIEST_TIME, LATEST_TIME
from zkafka.protocol.v07 import (
    RANDOM_PARTITION,
    FetchRequest,
    MultiFetchRequest,
    MultiProducerRequest,
    OffsetRequest,
    ProducerRequest,
    decode_response,
)
from zkafka.records.message07 import build_message_set
from zkafka.server.apis07 import KafkaRequestHandlers


@pytest.fixture
def handlers(tmp_path):
    config = BrokerConfig(
        {
            "brokerid": "0",
            "log.dir": str(tmp_path),
            "enable.zookeeper": "false",
            "num.partitions": "4",
            "log.flush.interval": "1",  # readers see flushed bytes only
            "max.message.size": "100",
        }
    )
    manager = LogManager(config)
    yield KafkaRequestHandlers(manager)
    manager.close()


def answer(handlers, request) -> tuple:
    frame = wire_bytes(handlers(request))
    assert int.from_bytes(frame[:4], "big") == len(frame) - 4
    return decode_response(request.type_id, frame[4:])


def test_produce_has_no_response_and_fetch_sends_the_bytes_from_the_segment(handlers):
    data = build_message_set([b"hello", b"world"])
    assert handlers(ProducerRequest("t", 1, data)) is None
    parts = handlers(FetchRequest("t", 1, 0, 1 << 20))
    assert isinstance(parts[-1], FileRegion)  # the message set is not read into memory
    assert wire_bytes(parts) == (len(data) + 2).to_bytes(4, "big") + b"\x00\x00" + data


def test_fetch_error_codes(handlers):
    data = build_message_set([b"x" * 10])
    handlers(ProducerRequest("t", 0, data))
    assert answer(handlers, FetchRequest("t", 0, len(data), 100)) == (0, b"")  # at the end
    assert answer(handlers, FetchRequest("t", 0, len(data) + 1, 100)) == (1, b"")  # past it
    assert answer(handlers, FetchRequest("t", 9, 0, 100)) == (3, b"")  # no such partition
    assert answer(handlers, FetchRequest("absent", 0, 0, 100)) == (0, b"")  # no log
    assert answer(handlers, FetchRequest("../x", 0, 0, 100)) == (-1, b"")  # not a topic name


def test_multiproduce_and_multifetch(handlers):
    first, second = build_message_set([b"a"]), build_message_set([b"b", b"c"])
    handlers(MultiProducerRequest([ProducerRequest("m", 0, first), ProducerRequest("m", 2, second)]))
    fetches = [FetchRequest("m", 0, 0, 1000), FetchRequest("m", 7, 0, 10), FetchRequest("m", 2, 0, 1000)]
    response = answer(handlers, MultiFetchRequest(fetches))
    assert response.error == 0
    assert [(e, bytes(b)) for e, b in response.parts] == [(0, first), (3, b""), (0, second)]


def test_offsets(handlers):
    data = build_message_set([b"x"])
    assert answer(handlers, OffsetRequest("o", 0, LATEST_TIME, 1)) == (0, [0])  # no log yet
    assert answer(handlers, OffsetRequest("o", 0, 12345, 1)) == (0, [])
    handlers(ProducerRequest("o", 0, data))
    assert answer(handlers, OffsetRequest("o", 0, LATEST_TIME, 5)) == (0, [len(data), 0])
    assert answer(handlers, OffsetRequest("o", 0, EARLIEST_TIME, 5)) == (0, [0])


def test_random_partition_appends_to_a_partition_of_the_topic(handlers):
    data = build_message_set([b"r"])
    for _ in range(20):
        handlers(ProducerRequest("r", RANDOM_PARTITION, data))
    sizes = [answer(handlers, OffsetRequest("r", p, LATEST_TIME, 1)).offsets[0] for p in range(4)]
    assert sum(sizes) == 20 * len(data)


def test_an_oversized_message_is_dropped_and_an_invalid_topic_raises(handlers):
    handlers(ProducerRequest("big", 0, build_message_set([b"x" * 101])))
    assert answer(handlers, OffsetRequest("big", 0, LATEST_TIME, 1)) == (0, [0])
    with pytest.raises(InvalidTopicError):
        handlers(ProducerRequest("../x", 0, build_message_set([b"evil"])))  # the server closes the connection

"""Producer configuration checks and broker.list mode (random broker, partition -1), on real sockets."""

from __future__ import annotations

import threading

import pytest

from tests.support.frame_recorder import FrameRecorder
from zkafka.errors import InvalidConfigError
from zkafka.producer import Producer, ProducerClosedError, ProducerData
from zkafka.producer.broker_partition_info07 import ConfigBrokerPartitionInfo, parse_broker_list
from zkafka.producer.partitioner import DefaultPartitioner
from zkafka.protocol.v07 import MULTIPRODUCE, PRODUCE, RANDOM_PARTITION
from zkafka.records.compression import GZIP, SNAPPY
from zkafka.records.format07 import ByteBufferMessageSet
from zkafka.utils import wait_until as gwait
from zkafka.zk.paths07 import Broker, BrokerPartition


@pytest.fixture
def recorders():
    servers = [FrameRecorder(), FrameRecorder()]
    try:
        yield servers
    finally:
        for server in servers:
            server.stop()


def broker_list(servers: list[FrameRecorder]) -> str:
    return ",".join(f"{i}:127.0.0.1:{s.port}" for i, s in enumerate(servers))


@pytest.mark.parametrize(
    "props",
    [{}, {"zk.connect": "127.0.0.1:2181", "broker.list": "0:127.0.0.1:9092"}],
    ids=["neither", "both"],
)
def test_exactly_one_of_zk_connect_and_broker_list(props):
    with pytest.raises(InvalidConfigError, match="zk.connect, broker.list"):
        Producer(props)


def test_partitioner_is_refused_with_broker_list():
    with pytest.raises(InvalidConfigError, match="partitioner.class"):
        Producer({"broker.list": "0:127.0.0.1:9092", "partitioner.class": "x.Y"})
    with pytest.raises(InvalidConfigError, match="partitioner.class"):
        Producer({"broker.list": "0:127.0.0.1:9092"}, partitioner=DefaultPartitioner())


def test_bad_producer_type_and_codec_name_the_key():
    with pytest.raises(InvalidConfigError, match="producer.type"):
        Producer({"broker.list": "0:h:1", "producer.type": "batch"})
    with pytest.raises(InvalidConfigError, match="compression.codec"):
        Producer({"broker.list": "0:h:1", "compression.codec": "lz4"})


def test_broker_list_parsing():
    assert parse_broker_list("0:a:1, 2:b:3") == {0: Broker(0, "a", 1), 2: Broker(2, "b", 3)}
    for bad in ("", "0:a", "x:a:1", "0:a:port"):
        with pytest.raises(InvalidConfigError, match="broker.list"):
            parse_broker_list(bad)
    info = ConfigBrokerPartitionInfo({"broker.list": "3:a:1,1:b:2"})
    assert info.get_broker_partition_info("any") == [BrokerPartition(1, 0), BrokerPartition(3, 0)]


def test_codec_names_are_accepted():
    producer = Producer({"broker.list": "0:127.0.0.1:1", "compression.codec": "snappy"})
    assert producer.codec == SNAPPY
    producer.close()


def test_broker_list_sync_sends_to_random_brokers_with_partition_minus_one(recorders):
    producer = Producer({"broker.list": broker_list(recorders)})
    for i in range(60):
        producer.send("t", [b"%d" % i], key="ignored")
    gwait(lambda: sum(len(r.frames) for r in recorders) == 60)
    for server in recorders:
        assert server.frames, "every broker of the list gets some traffic"
        assert {(kind, request.partition) for _, kind, request in server.frames} == {
            (PRODUCE, RANDOM_PARTITION)
        }
    received = sorted(m for r in recorders for m in r.messages())
    assert received == sorted(b"%d" % i for i in range(60))
    producer.close()


def test_sync_compresses_every_topic_and_ignores_compressed_topics(recorders):
    producer = Producer(
        {"broker.list": broker_list(recorders[:1]), "compression.codec": "1", "compressed.topics": "other"}
    )
    producer.send("t", [b"a", b"b", b"c"])
    gwait(lambda: recorders[0].frames)
    [(_, _, request)] = recorders[0].frames
    [(wrapper, _)] = list(ByteBufferMessageSet(bytes(request.messages)).shallow_iter())
    assert wrapper.codec == GZIP
    assert recorders[0].messages() == [b"a", b"b", b"c"]
    producer.close()


def test_send_all_makes_one_request_per_broker(recorders):
    producer = Producer(
        {"broker.list": broker_list(recorders[:1]), "serializer.class": "kafka.serializer.StringEncoder"}
    )
    producer.send_all([ProducerData("a", ["1", "2"]), ProducerData("b", "3")])
    producer.send_all([ProducerData("c", ["4"])])
    gwait(lambda: len(recorders[0].frames) == 2)
    kinds = [(kind, len(getattr(request, "produces", [request]))) for _, kind, request in recorders[0].frames]
    assert kinds == [(MULTIPRODUCE, 2), (PRODUCE, 1)]
    assert recorders[0].messages() == [b"1", b"2", b"3", b"4"]
    producer.close()


def test_single_messages_and_iterables_are_accepted(recorders):
    producer = Producer(
        {"broker.list": broker_list(recorders[:1]), "serializer.class": "kafka.serializer.StringEncoder"}
    )
    producer.send("t", "one")
    producer.send("t", b"two")
    producer.send("t", (s for s in ["three", "four"]))
    gwait(lambda: len(recorders[0].frames) == 3)
    assert recorders[0].messages() == [b"one", b"two", b"three", b"four"]
    producer.close()


def test_async_broker_list_close_delivers_everything(recorders):
    producer = Producer(
        {
            "broker.list": broker_list(recorders),
            "producer.type": "async",
            "batch.size": "7",
            "queue.time": "60000",
        }
    )
    for i in range(100):
        producer.send("t", b"%d" % i)
    producer.close()
    gwait(lambda: sum(len(r.messages()) for r in recorders) == 100)
    assert sorted(m for r in recorders for m in r.messages()) == sorted(b"%d" % i for i in range(100))
    assert all(r.messages() for r in recorders)


def test_closed_producer_refuses_and_other_threads_are_refused(recorders):
    producer = Producer({"broker.list": broker_list(recorders[:1])})
    errors: list[BaseException] = []

    def use_from_another_thread():
        try:
            producer.send("t", b"x")
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=use_from_another_thread)
    thread.start()
    thread.join()
    assert isinstance(errors[0], RuntimeError) and "thread" in str(errors[0])
    producer.close()
    producer.close()  # idempotent
    with pytest.raises(ProducerClosedError):
        producer.send("t", b"x")

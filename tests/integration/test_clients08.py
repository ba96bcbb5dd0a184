"""zkafka's 0.8 producer and SimpleConsumer08 against a real ZooKeeper and a real zkafka 0.8 broker.

Keys land where Kafka's DefaultPartitioner puts them, every acks level delivers, compressed sets come back
message for message, sends survive a broker restart through retries, and what cannot be delivered is
raised with its count — never dropped silently.
"""

from __future__ import annotations

import threading
import time

import pytest

from zkafka.consumer.simple08 import NO_OFFSET, SimpleConsumer08
from zkafka.errors import InvalidTopicError, OffsetOutOfRangeError, UnknownTopicOrPartitionError
from zkafka.launch.zookeeper_server import free_port
from zkafka.producer.errors import FailedToSendMessageError
from zkafka.producer.partitioner import DefaultPartitioner08
from zkafka.producer.producer08 import KeyedMessage, Producer08
from zkafka.protocol import EARLIEST_TIME, LATEST_TIME
from zkafka.records.compression import GZIP, LZ4, SNAPPY
from zkafka.records.format08 import iter_messages
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration

PARTITIONS = 4


def producer(port: int, **props: str) -> Producer08:
    config = {
        "metadata.broker.list": f"127.0.0.1:{port}",
        "request.required.acks": "1",
        "retry.backoff.ms": "50",
    }
    config.update({k.replace("_", "."): str(v) for k, v in props.items()})
    return Producer08(config)


def consume_all(
    port: int, topic: str, partitions: int = PARTITIONS
) -> dict[int, list[tuple[int, bytes, bytes]]]:
    """Every message of every partition, as (offset, key, value), read up to the high watermark."""
    out = {}
    with SimpleConsumer08("127.0.0.1", port, client_id="test-reader") as consumer:
        for partition in range(partitions):
            end = consumer.latest_offset(topic, partition)
            offset, got = 0, []
            while offset < end:
                fetched = consumer.fetch(topic, partition, offset, 4096)
                got.extend((m.offset, m.key, m.value) for m in fetched)
                offset = fetched.next_offset
            out[partition] = got
    return out


def ready_topic(port: int, topic: str, partitions: int = PARTITIONS) -> None:
    """Auto-create ``topic`` and wait until all its partitions have leaders (the broker elects them right
    after it answers the first Metadata request with LEADER_NOT_AVAILABLE), so that the placement of keyed
    messages is checked against the whole partition count."""

    def ready():
        with SimpleConsumer08("127.0.0.1", port) as consumer:
            (answer,) = consumer.topic_metadata([topic]).topics
        return answer.error == 0 and sum(p.leader >= 0 for p in answer.partitions) == partitions

    wait_until(ready, timeout=20, message=f"leaders for the {partitions} partitions of {topic}")


def wait_consumed(port: int, topic: str, count: int, partitions: int = PARTITIONS) -> dict:
    def enough():
        found = consume_all(port, topic, partitions)
        return found if sum(map(len, found.values())) >= count else None

    return wait_until(enough, timeout=20, message=f"{count} messages in {topic}")


@pytest.fixture
def broker(start_broker08):
    return start_broker08(0, num_partitions=str(PARTITIONS))


@pytest.mark.parametrize("acks", [0, 1, -1])
def test_keyed_messages_land_where_the_default_partitioner_puts_them(broker, acks):
    topic = f"keys{acks + 1}"
    keys = [f"user-{i}" for i in range(20)]
    sent = [KeyedMessage(topic, key, f"{key} #{n}".encode()) for n in range(5) for key in keys]
    ready_topic(broker.port, topic)
    with producer(broker.port, request_required_acks=acks) as p:
        p.send(*sent[:50])
        for message in sent[50:]:
            p.send(message)
    found = wait_consumed(broker.port, topic, len(sent))
    assert sum(map(len, found.values())) == len(sent)  # exactly once
    partitioner = DefaultPartitioner08()
    for partition, messages in found.items():
        assert [offset for offset, _, _ in messages] == list(range(len(messages)))
        for _, key, _ in messages:
            assert partitioner.partition(key.decode(), PARTITIONS) == partition
    for key in keys:
        partition = partitioner.partition(key, PARTITIONS)
        values = [v for _, k, v in found[partition] if k == key.encode()]
        assert values == [f"{key} #{n}".encode() for n in range(5)]  # in send order


def test_null_keys_stick_to_one_partition_with_a_leader(broker):
    with producer(broker.port) as p:
        for i in range(30):
            p.send(KeyedMessage("sticky", None, b"m%d" % i))
    found = wait_consumed(broker.port, "sticky", 30)
    (partition,) = [p for p, messages in found.items() if messages]
    assert [v for _, k, v in found[partition]] == [b"m%d" % i for i in range(30)]
    assert all(k is None for _, k, _ in found[partition])


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4])
def test_compressed_sets_come_back_message_for_message(broker, codec):
    topic = f"compressed{codec}"
    ready_topic(broker.port, topic)
    with producer(broker.port, compression_codec=codec, compressed_topics=topic) as p:
        for batch in range(3):
            p.send(*[KeyedMessage(topic, "k", b"%d-%d" % (batch, i)) for i in range(40)])
    partition = DefaultPartitioner08().partition("k", PARTITIONS)
    found = wait_consumed(broker.port, topic, 120)
    assert [(o, v) for o, _, v in found[partition]] == [(i, b"%d-%d" % divmod(i, 40)) for i in range(120)]
    with SimpleConsumer08("127.0.0.1", broker.port) as consumer:
        data = consumer.fetch(topic, partition, 0).data
        wrappers = list(iter_messages(data, deep=False))
        assert [(w.offset, w.codec) for w in wrappers] == [(39, codec), (79, codec), (119, codec)]
        # A fetch into the middle of a wrapper skips its earlier messages.
        assert [m.offset for m in consumer.fetch(topic, partition, 50)][:3] == [50, 51, 52]


@pytest.mark.parametrize("codec", [0, GZIP])
def test_send_batch_puts_a_batch_on_one_partition_in_order(broker, codec):
    topic = f"batches{codec}"
    ready_topic(broker.port, topic)
    with producer(broker.port, compression_codec=codec) as p:
        p.send_batch(topic, [b"k-%d" % i for i in range(50)], key="user-3")
        p.send_batch(topic, [b"n-%d" % i for i in range(30)] + [None])
        p.send_batch(topic, (b"p-%d" % i for i in range(10)), key=b"ignored", part_key="user-3")
        p.send_batch(topic, [])
    found = wait_consumed(broker.port, topic, 91)
    keyed = DefaultPartitioner08().partition("user-3", PARTITIONS)
    assert [(k, v) for _, k, v in found[keyed] if k is not None] == [
        (b"user-3", b"k-%d" % i) for i in range(50)
    ] + [(b"ignored", b"p-%d" % i) for i in range(10)]
    assert [o for o, _, _ in found[keyed]] == list(range(len(found[keyed])))
    (nulls,) = [[v for _, k, v in m if k is None] for m in found.values() if any(k is None for _, k, _ in m)]
    assert nulls == [b"n-%d" % i for i in range(30)] + [None]


def test_async_send_batch_and_string_values_through_an_encoder(broker):
    from zkafka.producer.encoders import JAVA_STRING_ENCODER

    with producer(broker.port, producer_type="async", serializer_class=JAVA_STRING_ENCODER) as p:
        p.send_batch("async-batch", ["a", "b", b"c"], key="k")
    assert p.undelivered == 0
    found = wait_consumed(broker.port, "async-batch", 3)
    assert [(k, v) for m in found.values() for _, k, v in m] == [(b"k", b"a"), (b"k", b"b"), (b"k", b"c")]
    with producer(broker.port) as p, pytest.raises(TypeError, match="DefaultEncoder sends bytes, not str"):
        p.send_batch("async-batch", [b"a", "b"])


def test_async_producer_delivers_everything_queued_by_close(broker):
    with producer(broker.port, producer_type="async", batch_num_messages=200, queue_buffering_max_ms=50) as p:
        for i in range(1000):
            p.send(KeyedMessage("async", str(i % 7), b"%d" % i))
    assert p.undelivered == 0
    found = wait_consumed(broker.port, "async", 1000)
    assert sorted(int(v) for m in found.values() for _, _, v in m) == list(range(1000))


def test_sends_are_retried_across_a_broker_restart(start_broker08):
    port = free_port()
    first = start_broker08(0, port=str(port), num_partitions=str(PARTITIONS))
    p = producer(port, message_send_max_retries=40, retry_backoff_ms=100, request_timeout_ms=2000)
    p.send(*[KeyedMessage("restart", str(i), b"before-%d" % i) for i in range(20)])
    first.stop()
    restarted = threading.Timer(
        0.5, lambda: start_broker08(0, port=str(port), num_partitions=str(PARTITIONS))
    )
    restarted.start()
    try:
        began = time.monotonic()
        p.send(*[KeyedMessage("restart", str(i), b"after-%d" % i) for i in range(20)])
        assert time.monotonic() - began >= 0.4  # it did wait for the broker
    finally:
        restarted.join()
        p.close()
    found = wait_consumed(port, "restart", 40)
    values = sorted(v for m in found.values() for _, _, v in m)
    assert values == sorted([b"before-%d" % i for i in range(20)] + [b"after-%d" % i for i in range(20)])


def test_undeliverable_messages_are_raised_with_their_count():
    port = free_port()  # nothing listens here
    p = producer(port, message_send_max_retries=2, retry_backoff_ms=10, request_timeout_ms=500)
    with pytest.raises(
        FailedToSendMessageError, match="7 of 7 messages to lost not delivered after 2 retries"
    ) as err:
        p.send(*[KeyedMessage("lost", None, b"x")] * 7)
    assert err.value.undelivered == 7
    p.close()
    q = producer(
        port, producer_type="async", message_send_max_retries=1, retry_backoff_ms=10, request_timeout_ms=500
    )
    for _ in range(5):
        q.send(KeyedMessage("lost", "k", b"y"))
    with pytest.raises(FailedToSendMessageError, match="5 messages were not delivered") as err:
        q.close()
    assert err.value.undelivered == q.undelivered == 5
    r = producer(port, message_send_max_retries=1, retry_backoff_ms=10, request_timeout_ms=500)
    with pytest.raises(FailedToSendMessageError, match="9 of 9 messages to lost not delivered") as err:
        r.send_batch("lost", [b"z"] * 9, key="k")
    assert err.value.undelivered == 9
    r.close()


def test_a_batch_with_no_partition_or_leader_is_not_delivered(broker):
    class OutOfRange:
        def partition(self, key, n):
            return n

    ready_topic(broker.port, "unplaced")
    config = {"metadata.broker.list": f"127.0.0.1:{broker.port}", "request.required.acks": "1"}
    p = Producer08(
        {**config, "message.send.max.retries": "1", "retry.backoff.ms": "10"}, partitioner=OutOfRange()
    )
    for count in (3, 5):  # with the topic's metadata known, a lone batch is placed without the collation
        with pytest.raises(FailedToSendMessageError, match=f"{count} of {count} messages to unplaced") as err:
            p.send_batch("unplaced", [b"v"] * count, key="k")
        assert err.value.undelivered == count
    p.close()
    assert consume_all(broker.port, "unplaced") == {p: [] for p in range(PARTITIONS)}


def test_topic_names_are_checked_before_anything_is_sent():
    p = producer(free_port())
    with pytest.raises(InvalidTopicError):
        p.send(KeyedMessage("good", None, b"1"), KeyedMessage("no spaces", None, b"2"))
    p.close()


def test_simple_consumer_offsets_long_poll_and_errors(broker):
    ready_topic(broker.port, "simple")
    with producer(broker.port) as p:
        p.send(*[KeyedMessage("simple", "k", b"v%d" % i) for i in range(10)])
    partition = DefaultPartitioner08().partition("k", PARTITIONS)
    other = (partition + 1) % PARTITIONS
    with SimpleConsumer08("127.0.0.1", broker.port, socket_timeout_ms=5000) as consumer:
        assert consumer.get_offsets_before("simple", partition, LATEST_TIME) == [10]
        assert consumer.get_offsets_before("simple", partition, EARLIEST_TIME) == [0]
        assert consumer.get_offsets_before("simple", other, LATEST_TIME, 5) == [0]
        # Long poll: an empty partition answers at max_wait_ms.
        began = time.monotonic()
        assert list(consumer.fetch("simple", other, 0, max_wait_ms=300, min_bytes=1)) == []
        assert time.monotonic() - began >= 0.28
        # Several partitions in one request, answers in request order.
        first, second = consumer.multifetch([("simple", partition, 8, 1024), ("simple", other, 0, 1024)])
        assert [m.value for m in first] == [b"v8", b"v9"]
        assert (second.partition, list(second), first.high_watermark) == (other, [], 10)
        # A fetch size that cuts the second message: one message, the next fetch resumes at it.
        entry = len(consumer.fetch("simple", partition, 0).data) // 10
        cut = consumer.fetch("simple", partition, 0, max_bytes=entry + entry // 2)
        assert [m.offset for m in cut] == [0] and cut.next_offset == 1
        with pytest.raises(OffsetOutOfRangeError):
            consumer.fetch("simple", partition, 11)
        with pytest.raises(UnknownTopicOrPartitionError):
            consumer.fetch("simple", PARTITIONS + 3, 0)


def test_simple_consumer_commits_and_fetches_offsets(broker):
    with producer(broker.port) as p:
        p.send(KeyedMessage("committed", None, b"x"))
    with SimpleConsumer08("127.0.0.1", broker.port) as consumer:
        assert consumer.fetch_offsets("g", [("committed", 0)])[("committed", 0)].offset == NO_OFFSET
        consumer.commit_offsets("g", {("committed", 0): 42, ("committed", 1): (7, "meta")})
        found = consumer.fetch_offsets("g", [("committed", 0), ("committed", 1)])
        # v0 keeps offsets in ZooKeeper, where 0.8.2 writes the offset alone: the metadata comes back "".
        assert found == {("committed", 0): (42, ""), ("committed", 1): (7, "")}


def test_simple_consumer_reconnects_once_after_a_broker_restart(start_broker08):
    port = free_port()
    first = start_broker08(0, port=str(port))
    with producer(port) as p:
        p.send(KeyedMessage("again", None, b"kept"))
    with SimpleConsumer08("127.0.0.1", port) as consumer:
        assert [m.value for m in consumer.fetch("again", 0, 0)] == [b"kept"]
        first.stop()
        second = start_broker08(0, port=str(port))
        wait_until(lambda: consumer_ready(port), message="the restarted broker leads again")
        assert [m.value for m in consumer.fetch("again", 0, 0)] == [b"kept"]  # same consumer, new connection
        assert second.port == port


def consumer_ready(port: int) -> bool:
    with SimpleConsumer08("127.0.0.1", port) as c:
        meta = c.topic_metadata(["again"])
    return all(t.error == 0 and t.partitions and t.partitions[0].leader >= 0 for t in meta.topics)

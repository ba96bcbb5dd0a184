"""The producer against a real ZooKeeper and real in-process brokers: partitioning, the broker cache and its
watchers, async batching, compression, queue policies, close.

What the brokers stored is read back with SimpleConsumer; waits poll with a deadline on the gevent hub
(the producer's greenlets run on the test's thread, each broker on its own).
"""

from __future__ import annotations

import threading
import time
import zlib
from collections import Counter
from typing import Any

import pytest
from kazoo.client import KazooClient

from tests.support.producers import (
    PARTITIONS,
    seed_topic,
    stored,
    wait_stored,
    zk_producer,
)
from tests.support.zookeeper import wait_topic_registered
from zkafka.launch.zookeeper_server import free_port
from zkafka.producer import Producer, QueueFullError
from zkafka.records.compression import GZIP, NO_COMPRESSION, SNAPPY
from zkafka.utils import wait_until as gwait
from zkafka.utils.java import java_abs, java_mod, to_int32

pytestmark = pytest.mark.integration


@pytest.fixture
def two_brokers(start_broker):
    return {0: start_broker(0), 1: start_broker(1)}


# -- partitioning ------------------------------------------------------------------------------------------


def test_keyed_messages_land_on_the_partition_the_java_hash_predicts(two_brokers, zk_connect, zk_client):
    for broker in two_brokers.values():
        seed_topic(broker, "keyed")
    wait_topic_registered(zk_client, "keyed", [0, 1])
    producer = zk_producer(zk_connect, serializer_class="kafka.serializer.StringEncoder")
    gwait(lambda: len(producer.partitions_for("keyed")) == 8, message="8 candidates")
    candidates = producer.partitions_for("keyed")
    assert candidates == [(b, p) for b in (0, 1) for p in range(4)]
    # Java: "key".hashCode() = 106079, "hello" = 99162322, "polygenelubricants" = Integer.MIN_VALUE
    # (abs stays negative, MIN_VALUE % 8 == 0); index into the sorted (broker, partition) list.
    expected = {"key": (1, 3), "hello": (0, 2), "polygenelubricants": (0, 0)}
    for key in [*expected, "user-17", "\u00e9t\u00e9"]:
        producer.send("keyed", [f"{key}|{i}" for i in range(3)], key=key)
    raw_key = b"\x00\x01binary"
    expected_raw = candidates[java_mod(java_abs(to_int32(zlib.crc32(raw_key))), 8)]
    producer.send("keyed", "raw|0", key=raw_key)
    producer.close()

    where: dict[str, set] = {}
    for place, payloads in wait_stored(two_brokers, "keyed", 16, b"").items():
        for payload in payloads:
            if payload != b"seed":
                where.setdefault(payload.decode().split("|")[0], set()).add(place)
    for key, place in expected.items():
        assert where[key] == {place}, key
    assert where["raw"] == {expected_raw}
    assert all(len(places) == 1 for places in where.values())


def test_messages_without_a_key_spread_over_every_partition(two_brokers, zk_connect, zk_client):
    for broker in two_brokers.values():
        seed_topic(broker, "spread")
    wait_topic_registered(zk_client, "spread", [0, 1])
    producer = zk_producer(zk_connect)
    gwait(lambda: len(producer.partitions_for("spread")) == 8)
    for i in range(400):
        producer.send("spread", b"m%d" % i)
    producer.close()
    counts = {place: len(p) for place, p in wait_stored(two_brokers, "spread", 400, b"m").items()}
    assert sum(counts.values()) == 400
    assert all(n > 0 for n in counts.values()), counts


# -- the broker cache and its watchers ---------------------------------------------------------------------


def test_a_new_topic_bootstraps_to_partition_0_of_each_broker_then_widens(two_brokers, zk_connect):
    producer = zk_producer(zk_connect)
    assert producer.partitions_for("fresh") == [(0, 0), (1, 0)]

    def widened():
        producer.send("fresh", b"boot")
        return len(producer.partitions_for("fresh")) == 8

    gwait(widened, message="the candidates widened to all 8 partitions")
    for i in range(300):
        producer.send("fresh", b"w%d" % i)
    producer.close()
    counts = {place: len(p) for place, p in wait_stored(two_brokers, "fresh", 300, b"w").items()}
    assert sum(counts.values()) == 300 and all(counts.values()), counts


def test_a_broker_joining_mid_stream_gets_traffic_without_a_producer_restart(
    start_broker, zk_connect, zk_client
):
    # Broker 1 already hosts the topic (as after a restart); it is down while the stream starts.
    first = start_broker(1)
    seed_topic(first, "joined")
    wait_topic_registered(zk_client, "joined", [1])
    first.stop()
    broker0 = start_broker(0)
    seed_topic(broker0, "joined")
    wait_topic_registered(zk_client, "joined", [0])
    producer = zk_producer(zk_connect)
    gwait(lambda: producer.partitions_for("joined") == [(0, p) for p in range(4)])
    sent = 0
    for _ in range(50):
        producer.send("joined", b"st-%d" % sent)
        sent += 1
    broker1 = start_broker(1)  # same id and log directory: registers itself and its topics
    deadline = time.monotonic() + 15
    while 1 not in producer.brokers:  # a plain loop: only send() gives the watches their turn
        assert time.monotonic() < deadline, "the producer never saw broker 1 while sending"
        producer.send("joined", b"st-%d" % sent)
        sent += 1

    def broker1_receives():
        nonlocal sent
        producer.send("joined", b"st-%d" % sent)
        sent += 1
        return any(stored(broker1.port, "joined", p)[1:] for p in range(PARTITIONS))

    gwait(broker1_receives, message="broker 1 receiving traffic")
    assert len(producer.partitions_for("joined")) == 8
    assert 1 in producer.brokers
    producer.close()
    stream = wait_stored({0: broker0, 1: broker1}, "joined", sent, b"st-")
    assert sum(map(len, stream.values())) == sent
    assert any(payloads for (b, _), payloads in stream.items() if b == 1)


def test_session_expiry_rebuilds_the_cache_and_its_watches(start_broker, zk_connect):
    broker0 = start_broker(0)
    producer = zk_producer(zk_connect)
    producer.send("expiry", b"before")
    session = producer.info.zk.client_id
    # A second client on the same session closes it: the server expires the producer's session.
    thief = KazooClient(hosts=zk_connect, client_id=session)
    thief.start(timeout=10)
    thief.stop()
    thief.close()
    gwait(
        lambda: producer.info.zk.connected and producer.info.zk.client_id[0] != session[0],
        message="a new ZooKeeper session",
    )
    broker1 = start_broker(1)  # seen only if the watches were set again on the new session
    gwait(lambda: 1 in producer.brokers, message="broker 1 seen after the expiry")
    assert producer.partitions_for("after-expiry") == [(0, 0), (1, 0)]
    for i in range(40):
        producer.send("after-expiry", b"a%d" % i)
    producer.close()
    found = wait_stored({0: broker0, 1: broker1}, "after-expiry", 40)
    counts = {b: sum(len(p) for (bid, _), p in found.items() if bid == b) for b in (0, 1)}
    assert counts[0] + counts[1] == 40 and counts[0] and counts[1], counts


# -- async batching, compression, close --------------------------------------------------------------------


def one_partition_producer(zk_connect: str, broker: Any, topic: str, **props: str) -> tuple[Producer, int]:
    """An async producer and a key; the key's partition of ``topic`` on ``broker``."""
    seed_topic(broker, topic)
    producer = zk_producer(zk_connect, producer_type="async", **props)
    gwait(lambda: len(producer.partitions_for(topic)) == PARTITIONS)
    return producer, producer.partitioner.partition("k", PARTITIONS)


def test_async_batches_hold_batch_size_events(start_broker, zk_connect):
    broker = start_broker(0)
    producer, partition = one_partition_producer(
        zk_connect, broker, "batched", batch_size="10", queue_time="60000", compression_codec="gzip"
    )
    for i in range(35):
        producer.send("batched", b"b%d" % i, key="k")
    producer.close()
    wait_stored({0: broker}, "batched", 35, b"b")
    # One gzip wrapper per dispatched batch: full batches of 10, and the rest sent by close.
    wrappers = [w for w in stored(broker.port, "batched", partition, deep=False) if w[0] == GZIP]
    assert wrappers == [(GZIP, 10), (GZIP, 10), (GZIP, 10), (GZIP, 5)]
    assert [m for m in stored(broker.port, "batched", partition) if m != b"seed"] == [
        b"b%d" % i for i in range(35)
    ]


def test_async_sends_a_partial_batch_after_queue_time(start_broker, zk_connect):
    broker = start_broker(0)
    producer, partition = one_partition_producer(
        zk_connect, broker, "timed", batch_size="1000", queue_time="150", compression_codec="snappy"
    )

    def wrappers():
        return [w for w in stored(broker.port, "timed", partition, deep=False) if w[0] == SNAPPY]

    for i in range(5):
        producer.send("timed", b"t%d" % i, key="k")
    gwait(lambda: wrappers() == [(SNAPPY, 5)], message="the first batch, sent on queue.time")
    producer.send("timed", [b"t5", b"t6", b"t7"], key="k")
    gwait(lambda: wrappers() == [(SNAPPY, 5), (SNAPPY, 3)], message="the second batch")
    producer.close()
    assert wrappers() == [(SNAPPY, 5), (SNAPPY, 3)]


@pytest.mark.parametrize("codec", [GZIP, SNAPPY])
def test_compressed_sets_decode_on_the_broker(start_broker, zk_connect, codec):
    broker = start_broker(0)
    seed_topic(broker, "zipped")
    producer = zk_producer(zk_connect, compression_codec=str(codec))
    gwait(lambda: len(producer.partitions_for("zipped")) == PARTITIONS)
    payloads = [b"payload %d " % i * (i % 5 + 1) for i in range(200)]
    producer.send("zipped", payloads, key="same")
    producer.close()
    wait_stored({0: broker}, "zipped", 200, b"payload")
    partition = producer.partitioner.partition("same", PARTITIONS)
    assert (codec, 200) in stored(broker.port, "zipped", partition, deep=False)
    assert [m for m in stored(broker.port, "zipped", partition) if m != b"seed"] == payloads


def test_async_compresses_only_the_compressed_topics(start_broker, zk_connect):
    broker = start_broker(0)
    producer = zk_producer(
        zk_connect, producer_type="async", compression_codec="1", compressed_topics="zip-me", batch_size="4"
    )
    for topic in ("zip-me", "plain"):
        producer.send(topic, [b"1", b"2", b"3", b"4"])  # keyless: partition 0 while bootstrapping
    producer.close()
    for topic in ("zip-me", "plain"):
        wait_stored({0: broker}, topic, 4)
    codecs = {
        topic: {codec for codec, _ in stored(broker.port, topic, 0, deep=False)}
        for topic in ("zip-me", "plain")
    }
    assert codecs == {"zip-me": {GZIP}, "plain": {NO_COMPRESSION}}
    assert stored(broker.port, "zip-me", 0) == stored(broker.port, "plain", 0) == [b"1", b"2", b"3", b"4"]


def test_close_loses_nothing_that_was_enqueued(two_brokers, zk_connect):
    producer = zk_producer(
        zk_connect, producer_type="async", batch_size="50", queue_time="60000", queue_size="100000"
    )
    expected = []
    for i in range(700):
        events = [b"c%d-%d" % (i, j) for j in range(i % 4 + 1)]
        producer.send("closing", events, key=None if i % 3 else f"key{i}")
        expected.extend(events)
    producer.close()
    received = [m for p in wait_stored(two_brokers, "closing", len(expected)).values() for m in p]
    assert Counter(received) == Counter(expected)


# -- queue-full policies against a broker that is not up yet -------------------------------------------------


def late_broker_producer(port: int, policy: str) -> Producer:
    """An async producer whose broker is down: the first batch is stuck connecting, the queue then fills."""
    producer = Producer(
        {
            "broker.list": f"0:127.0.0.1:{port}",
            "producer.type": "async",
            "batch.size": "10",
            "queue.size": "10",
            "queue.time": "60000",
            "queue.enqueueTimeout.ms": policy,
            "num.retries": "3",
        }
    )
    producer.send("late", [b"first-%d" % i for i in range(10)])
    producer.send("late", [b"queued-%d" % i for i in range(10)])
    return producer


def total_stored(broker: Any, topic: str) -> list[bytes]:
    return [m for p in range(PARTITIONS) for m in stored(broker.port, topic, p)]


def test_queue_full_drops_with_enqueue_timeout_0_and_waits_with_a_positive_one(start_broker):
    port = free_port()
    producer = late_broker_producer(port, "0")
    with pytest.raises(QueueFullError) as caught:
        producer.send("late", [b"x", b"y", b"z"])
    assert caught.value.dropped == 3
    waiting = late_broker_producer(free_port(), "300")
    started = time.monotonic()
    with pytest.raises(QueueFullError):
        waiting.send("late", b"waited")
    assert time.monotonic() - started >= 0.29
    broker = start_broker(0, port=str(port))
    producer.close()
    gwait(lambda: len(total_stored(broker, "late")) == 20)
    assert sorted(total_stored(broker, "late")) == sorted(
        [b"first-%d" % i for i in range(10)] + [b"queued-%d" % i for i in range(10)]
    )
    waiting.close(timeout=0.1)


def test_queue_full_blocks_with_a_negative_enqueue_timeout(start_broker):
    port = free_port()
    producer = late_broker_producer(port, "-1")
    brokers: list[Any] = []
    timer = threading.Timer(0.3, lambda: brokers.append(start_broker(0, port=str(port))))
    timer.start()
    try:
        producer.send("late", b"blocked")  # returns once the broker is up and the queue drained
        assert brokers
        producer.close()
        gwait(lambda: len(total_stored(brokers[0], "late")) == 21)
    finally:
        timer.join()

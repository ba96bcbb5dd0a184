"""One high-level consumer against real brokers: offsets reset, topic filters, timeouts, compression, errors."""

from __future__ import annotations

import time

import gevent
import pytest

from tests.support.consumers import (
    Collector,
    check_collectors,
    committed,
    connector_factory,
    consumer_config,
    owners,
)
from tests.support.wire import Producer
from zkafka.consumer import (
    Blacklist,
    ConsumerRebalanceFailedError,
    ConsumerTimeoutError,
    Whitelist,
    ZookeeperConsumerConnector,
)
from zkafka.errors import InvalidMessageSizeError
from zkafka.records.compression import GZIP, SNAPPY
from zkafka.utils import wait_until as gwait
from zkafka.zk.client import get_children, update_persistent

pytestmark = pytest.mark.integration


@pytest.fixture
def broker(start_broker, zk_client):
    b = start_broker(0)
    producer = Producer(b.port)
    yield b, producer
    producer.close()


@pytest.fixture
def connect(zk_connect):
    def config(group: str = "g", **overrides):
        return consumer_config(zk_connect, group, **overrides)

    yield from connector_factory(ZookeeperConsumerConnector, config)


def registered(zk_client, topic):
    gwait(lambda: get_children(zk_client, f"/brokers/topics/{topic}"), message=f"{topic} registered")


@pytest.mark.parametrize("reset", ["smallest", "largest"])
def test_autooffset_reset_without_a_committed_offset(broker, connect, zk_client, reset):
    _, producer = broker
    producer.send("t", 0, [b"old-1", b"old-2"])
    registered(zk_client, "t")
    c = connect(autooffset_reset=reset, consumer_timeout_ms="2000")
    stream = c.create_message_streams({"t": 1})["t"][0]
    producer.send("t", 0, [b"new"])
    got = []
    while b"new" not in got:
        got.append(next(stream).message.payload)
    assert got == ([b"old-1", b"old-2", b"new"] if reset == "smallest" else [b"new"])


@pytest.mark.parametrize("reset", ["smallest", "largest"])
def test_offset_out_of_range_is_reset_and_written_to_zookeeper(broker, connect, zk_client, reset):
    _, producer = broker
    end = producer.send("t", 1, [b"a", b"b"])
    registered(zk_client, "t")
    update_persistent(zk_client, "/consumers/g/offsets/t/0-1", str(end + 1000))
    c = connect(autooffset_reset=reset, consumer_timeout_ms="3000")
    stream = c.create_message_streams({"t": 1})["t"][0]
    gwait(lambda: committed(zk_client, "g", "t").get("0-1") in (0, end), message="offset reset")
    assert committed(zk_client, "g", "t")["0-1"] == (0 if reset == "smallest" else end)
    producer.send("t", 1, [b"c"])
    got = []
    while b"c" not in got:
        got.append(next(stream).message.payload)
    assert got == ([b"a", b"b", b"c"] if reset == "smallest" else [b"c"])


def test_an_unknown_autooffset_reset_fails_the_rebalance_clearly(broker, connect, zk_client):
    broker[1].send("t", 0, [b"x"])
    registered(zk_client, "t")
    c = connect(autooffset_reset="nonsense")
    with pytest.raises(ConsumerRebalanceFailedError, match="autooffset.reset"):
        c.create_message_streams({"t": 1})


def test_a_partition_held_by_someone_else_fails_the_rebalance_after_the_retries(broker, connect, zk_client):
    broker[1].send("t", 0, [b"x"])
    registered(zk_client, "t")
    zk_client.create("/consumers/g/owners/t/0-1", b"g_stranger-0", ephemeral=True, makepath=True)
    c = connect(rebalance_retries_max="3", rebalance_backoff_ms="100")
    started = time.monotonic()
    with pytest.raises(ConsumerRebalanceFailedError, match="can't rebalance after 3 retries"):
        c.create_message_streams({"t": 1})
    assert c.rebalancer.attempts == 3
    # each attempt waits up to 100 ms for the node to go, then backs off 100 ms
    assert time.monotonic() - started >= 0.4
    assert owners(zk_client, "g") == {("t", "0-1"): "g_stranger-0"}  # it released what it had claimed


def test_consumer_timeout_raises_and_the_stream_stays_usable(broker, connect, zk_client):
    _, producer = broker
    producer.send("t", 0, [b"first"])
    registered(zk_client, "t")
    stream = connect(consumer_timeout_ms="300").create_message_streams({"t": 1})["t"][0]
    assert next(stream).message.payload == b"first"
    started = time.monotonic()
    with pytest.raises(ConsumerTimeoutError):
        next(stream)
    assert time.monotonic() - started >= 0.25
    with pytest.raises(ConsumerTimeoutError):
        for _ in stream:
            pass
    producer.send("t", 3, [b"second"])
    assert next(stream).message.payload == b"second"


def test_whitelist_picks_up_a_topic_created_after_start(broker, connect, zk_client):
    _, producer = broker
    producer.send("logs-a", 0, [b"a"])
    producer.send("other", 0, [b"not for us"])
    registered(zk_client, "logs-a")
    registered(zk_client, "other")
    c = connect()
    collector = Collector(c.create_message_streams_by_filter(Whitelist("logs-.*"), 1))
    gwait(lambda: collector.payloads() == [b"a"])
    producer.send("logs-b", 2, [b"b"])
    gwait(lambda: sorted(collector.payloads()) == [b"a", b"b"], message="new topic consumed")
    value = zk_client.get(f"/consumers/g/ids/{c.consumer_id}")[0]
    assert value == b"*1*logs-.*"
    assert {t for t, _ in owners(zk_client, "g")} == {"logs-a", "logs-b"}


def test_blacklist_takes_every_other_topic(broker, connect, zk_client):
    _, producer = broker
    for topic in ("keep1", "skip", "keep2"):
        producer.send(topic, 0, [topic.encode()])
        registered(zk_client, topic)
    c = connect()
    collector = Collector(c.create_message_streams_by_filter(Blacklist("skip"), 1))
    gwait(lambda: sorted(collector.payloads()) == [b"keep1", b"keep2"])
    assert zk_client.get(f"/consumers/g/ids/{c.consumer_id}")[0] == b"!1!skip"
    gevent.sleep(0.2)
    assert b"skip" not in collector.payloads()


def test_every_wildcard_stream_gets_data_unlike_0_7(broker, connect, zk_client):
    _, producer = broker
    for topic in ("w1", "w2"):
        for p in range(4):
            producer.send(topic, p, [f"{topic}-{p}".encode()])
        registered(zk_client, topic)
    streams = connect().create_message_streams_by_filter(Whitelist("w1,w2"), 2)
    collectors = [Collector([s]) for s in streams]
    gwait(lambda: sum(len(c.messages) for c in collectors) == 8)
    # thread -0 owns partitions 0-0 and 0-1 of each topic, thread -1 the other two
    for i, collector in enumerate(collectors):
        assert sorted(collector.payloads()) == sorted(
            f"{t}-{p}".encode() for t in ("w1", "w2") for p in ((0, 1) if i == 0 else (2, 3))
        )


@pytest.mark.parametrize("codec", [GZIP, SNAPPY])
def test_compressed_sets_deep_and_shallow(broker, connect, zk_client, codec):
    _, producer = broker
    end_first = producer.send("z", 0, [b"p1", b"p2", b"p3"], codec=codec)
    end = producer.send("z", 0, [b"p4"], codec=codec)
    registered(zk_client, "z")
    deep = connect(group="deep", consumer_timeout_ms="2000").create_message_streams({"z": 1})["z"][0]
    got = [next(deep) for _ in range(4)]
    assert [m.message.payload for m in got] == [b"p1", b"p2", b"p3", b"p4"]
    # inner messages but the last report the wrapper's start; the last one the offset after the wrapper
    assert [m.offset for m in got] == [0, 0, end_first, end]
    shallow = connect(group="shallow", shallowiterator_enable="true", consumer_timeout_ms="2000")
    stream = shallow.create_message_streams({"z": 1})["z"][0]
    wrappers = [next(stream) for _ in range(2)]
    assert [m.message.codec for m in wrappers] == [codec, codec]
    assert [m.offset for m in wrappers] == [end_first, end]


def test_a_stream_error_in_a_collector_fails_the_test_unless_it_is_expected(broker, connect, zk_client):
    _, producer = broker
    producer.send("big", 0, [b"x" * 5000])
    registered(zk_client, "big")
    unread = Collector(connect(group="a", fetch_size="1000").create_message_streams({"big": 1})["big"])
    gwait(lambda: unread.errors, message="the stream error")
    with pytest.raises(AssertionError, match="InvalidMessageSizeError"):
        check_collectors()  # what the teardown of every integration test does
    with pytest.raises(AssertionError, match="InvalidMessageSizeError"):
        unread.stop()
    expected = Collector(
        connect(group="b", fetch_size="1000").create_message_streams({"big": 1})["big"], expect_errors=True
    )
    gwait(lambda: expected.errors, message="the expected stream error")
    assert [type(e) for e in expected.errors] == [InvalidMessageSizeError]
    check_collectors()
    expected.stop()


def test_a_message_larger_than_fetch_size_surfaces_in_the_iterator(broker, connect, zk_client):
    _, producer = broker
    producer.send("big", 0, [b"x" * 5000])
    registered(zk_client, "big")
    stream = connect(fetch_size="1000", consumer_timeout_ms="2000").create_message_streams({"big": 1})["big"][
        0
    ]
    with pytest.raises(InvalidMessageSizeError, match="fetch.size"):
        next(stream)

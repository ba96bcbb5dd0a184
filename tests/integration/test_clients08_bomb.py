"""A compression bomb in a fetch answer: the 0.8 clients raise a clear error instead of inflating it all, and
read on past it. The broker here is told to accept it (message.max.bytes of 16 MB), as an older or foreign
broker might have; the clients' cap is their fetch size.
"""

from __future__ import annotations

import tracemalloc

import pytest

from tests.support.bombs import bomb_set08
from tests.support.consumers import connector_factory
from tests.support.consumers08 import consumer08_config, start_cluster08
from tests.support.server08 import Client08, produce_request
from zkafka.consumer.connector08 import ZookeeperConsumerConnector08
from zkafka.consumer.simple08 import SimpleConsumer08
from zkafka.errors import MessageSizeTooLargeError
from zkafka.records import format08
from zkafka.records.compression import GZIP, LZ4, SNAPPY

pytestmark = pytest.mark.integration

FETCH_SIZE = 64 * 1024
LARGE = str(16 << 20)


@pytest.fixture
def connectors08():
    yield from connector_factory(ZookeeperConsumerConnector08, consumer08_config)


def seeded(start_broker08, zk_client, codec: int):
    """A broker whose topic ``t`` holds "a", a bomb inflating to 100x FETCH_SIZE, then "b" (offsets 0, 1, 2)."""
    (broker,) = start_cluster08(
        lambda i: start_broker08(i, message_max_bytes=LARGE, replica_fetch_max_bytes=LARGE),
        zk_client,
        brokers=1,
        topics={"t": 1},
    )
    inflated = 100 * FETCH_SIZE if codec == GZIP else 20 * FETCH_SIZE  # snappy inflates ~21x at most
    bomb = bomb_set08(inflated, codec)
    assert len(bomb) < FETCH_SIZE
    with Client08(broker.port) as client:
        for message_set in (
            format08.build_message_set([(None, b"a")]),
            bomb,
            format08.build_message_set([(None, b"b")]),
        ):
            assert client.call(produce_request("t", 0, message_set)).topics[0].partitions[0].error == 0
    return broker


CODECS = pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4], ids=["gzip", "snappy", "lz4"])


@CODECS
def test_simple_consumer08_refuses_a_bomb_past_its_fetch_size(start_broker08, zk_client, codec):
    broker = seeded(start_broker08, zk_client, codec)
    with SimpleConsumer08("127.0.0.1", broker.port) as consumer:
        fetched = consumer.fetch("t", 0, 0, max_bytes=FETCH_SIZE)
        after = [m.value for m in consumer.fetch("t", 0, 2, max_bytes=FETCH_SIZE)]
        big = consumer.fetch("t", 0, 0, max_bytes=128 * FETCH_SIZE).messages()  # a fetch size it fits
    # tracemalloc counts every thread's allocations: stop the in-process broker so the peak is the client's.
    broker.stop()
    read = []
    tracemalloc.start()
    with pytest.raises(MessageSizeTooLargeError, match="t-0 at offset 0: compressed message at position"):
        read.extend(m.value for m in fetched)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert read == [b"a"]
    assert peak < 4 * FETCH_SIZE  # the whole bomb would take 100x
    assert after == [b"b"]
    assert [len(m.value) for m in big][0::2] == [1, 1]


@CODECS
def test_the_high_level_consumer_raises_at_the_bomb_and_reads_on(
    start_broker08, zk_client, zk_connect, connectors08, codec
):
    seeded(start_broker08, zk_client, codec)
    connector = connectors08(
        zk_connect, "g", fetch_message_max_bytes=str(FETCH_SIZE), consumer_timeout_ms="10000"
    )
    (stream,) = connector.create_message_streams({"t": 1})["t"]
    it = iter(stream)
    assert next(it).message == b"a"
    with pytest.raises(MessageSizeTooLargeError, match="t:0: compressed message at position"):
        next(it)
    assert next(it).message == b"b"

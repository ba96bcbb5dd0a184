"""zkafka's own 0.8-line clients negotiate their request versions with ApiVersions: against a current zkafka
broker the producer sends record batches (Produce v3+) with headers and timestamps, which a third-party client
(kafka-python unpinned), the simple and the group consumer (Fetch v11) and the console consumer
(``print.timestamp``, ``print.headers``) read back unchanged; with ``api.version.request=false`` the producer
speaks 0.8.2's versions and refuses headers. A real ZooKeeper, in-process brokers."""

from __future__ import annotations

import random
import time

import pytest
from click.testing import CliRunner

kafka = pytest.importorskip("kafka")

from tests.integration.test_group_consumer import consumer  # noqa: E402
from tests.integration.test_message_format_v2 import V2  # noqa: E402
from zkafka.admin.topics import create_topic  # noqa: E402
from zkafka.cli import main  # noqa: E402
from zkafka.client08.api_versions import OLD_DIALECT, negotiate  # noqa: E402
from zkafka.client08.channel import broker_channel  # noqa: E402
from zkafka.consumer.simple08 import SimpleConsumer08  # noqa: E402
from zkafka.producer.errors import FailedToSendMessageError  # noqa: E402
from zkafka.producer.producer08 import KeyedMessage, Producer08  # noqa: E402
from zkafka.protocol.api_keys import FETCH, PRODUCE  # noqa: E402
from zkafka.protocol.fetch import MAX_VERSION as FETCH_MAX  # noqa: E402
from zkafka.protocol.produce import MAX_VERSION as PRODUCE_MAX  # noqa: E402
from zkafka.records.record_batch import read_batches  # noqa: E402
from zkafka.utils import wait_until  # noqa: E402

pytestmark = pytest.mark.integration

T0 = 1_700_000_000_000


@pytest.fixture
def broker(start_broker08, zk_client):
    server = start_broker08(1)
    create_topic(zk_client, "v2", 1, 1, V2, rng=random.Random(1))
    wait_until(lambda: server.server.replica_manager.local_log("v2", 0) is not None, 20, message="v2 log")
    return server


def producer(broker, **config) -> Producer08:
    return Producer08(
        {"metadata.broker.list": f"127.0.0.1:{broker.port}", "request.required.acks": "1", **config}
    )


def test_negotiated_versions_are_the_newest_both_know(broker):
    channel = broker_channel("127.0.0.1", broker.port, "negotiate")
    pinned = broker_channel("127.0.0.1", broker.port, "pinned", api_version_request=False)
    try:
        versions = negotiate(channel)
        assert versions[PRODUCE] == PRODUCE_MAX and versions[FETCH] == FETCH_MAX
        assert negotiate(pinned) is OLD_DIALECT
    finally:
        channel.close()
        pinned.close()


def test_headers_and_timestamps_reach_a_v2_topic_and_kafka_python(broker):
    with producer(broker, **{"compression.codec": "gzip"}) as p:
        p.send(KeyedMessage("v2", b"k0", b"v0", headers=[("h", b"1"), ("n", None)], timestamp_ms=T0))
        p.send(KeyedMessage("v2", b"k1", b"v1", timestamp_ms=T0 + 5))
    log = broker.server.replica_manager.local_log("v2", 0)
    batches = list(read_batches(log.read(0, 1 << 20, None).read()))
    records = [r for b in batches for r in b.records]
    assert [(r.key, r.value, r.timestamp) for r in records] == [(b"k0", b"v0", T0), (b"k1", b"v1", T0 + 5)]
    assert [tuple(h) for h in records[0].headers] == [("h", b"1"), ("n", None)]
    consumer = kafka.KafkaConsumer(
        bootstrap_servers=f"127.0.0.1:{broker.port}",
        auto_offset_reset="earliest",
        consumer_timeout_ms=5000,
        enable_auto_commit=False,
    )
    try:
        consumer.assign([kafka.TopicPartition("v2", 0)])
        got = [(r.value, r.timestamp, list(r.headers)) for r in consumer]
    finally:
        consumer.close()
    assert got == [(b"v0", T0, [("h", b"1"), ("n", None)]), (b"v1", T0 + 5, [])]


def test_zkafka_consumers_read_headers_and_timestamps(broker):
    with producer(broker) as p:
        p.send(KeyedMessage("v2", b"k0", b"v0", headers=[("h", b"1")], timestamp_ms=T0))
        p.send(KeyedMessage("v2", None, b"v1", timestamp_ms=T0 + 5))
    bootstrap = f"127.0.0.1:{broker.port}"
    with SimpleConsumer08("127.0.0.1", broker.port) as simple:
        fetched = simple.fetch("v2", 0, 1)
        assert [(m.offset, m.value, m.timestamp, m.headers) for m in fetched] == [(1, b"v1", T0 + 5, ())]
        assert fetched.next_offset == 2
    group = consumer(bootstrap)
    try:
        group.subscribe(["v2"])
        got: list = []
        deadline = time.monotonic() + 30
        while len(got) < 2:
            assert time.monotonic() < deadline, got
            got += [r for records in group.poll(100).values() for r in records]
    finally:
        group.close()
    assert [(r.value, r.timestamp, r.timestamp_type, [tuple(h) for h in r.headers]) for r in got] == [
        (b"v0", T0, 0, [("h", b"1")]),
        (b"v1", T0 + 5, 0, []),
    ]
    result = CliRunner().invoke(
        main,
        ["console-consumer", "--bootstrap-server", bootstrap, "--topic", "v2", "--from-beginning"]
        + ["--max-messages", "2", "--property", "print.timestamp=true", "--property", "print.headers=true"],
    )
    assert result.exit_code == 0, result.output
    assert f"CreateTime:{T0}\th:1\tv0\nCreateTime:{T0 + 5}\tNO_HEADERS\tv1\n" in result.output


def test_pinned_to_0_8_2_sends_message_sets_and_refuses_headers(broker):
    with producer(broker, **{"api.version.request": "false"}) as p:
        p.send(KeyedMessage("v2", b"k", b"plain"))
        with pytest.raises(FailedToSendMessageError, match="headers"):
            p.send(KeyedMessage("v2", None, b"x", headers=[("h", b"1")]))
    log = broker.server.replica_manager.local_log("v2", 0)
    (batch,) = read_batches(log.read(0, 1 << 20, None).read())
    assert [(r.key, r.value) for r in batch.records] == [(b"k", b"plain")]

"""Real third-party group clients, unpinned, against the group APIs at Kafka 3.4's versions: kafka-python 2.x
(it picks each API's version from ApiVersions: JoinGroup v5 with KIP-394's MEMBER_ID_REQUIRED round,
SyncGroup and Heartbeat v3, OffsetCommit v7, OffsetFetch v5, FindCoordinator v2) and librdkafka through
confluent-kafka with its default configuration (``session.timeout.ms`` 45 s, within Kafka 2.x's
``group.max.session.timeout.ms``) and with ``group.instance.id`` (KIP-345). Each pair of members splits a
topic, commits, and a restarted member resumes from the commits (both static members restart into their old
places, without a rebalance). The versions used are read from the broker's
request log. A real ZooKeeper and in-process brokers.
"""

from __future__ import annotations

import time

import pytest

kafka = pytest.importorskip("kafka")
confluent_kafka = pytest.importorskip("confluent_kafka")
from kafka import KafkaConsumer, TopicPartition  # noqa: E402

from tests.integration.test_coordinator_kafka_python import TOPIC, produce, start_with_topic  # noqa: E402

pytestmark = pytest.mark.integration


@pytest.fixture
def bootstrap(start_broker08):
    return f"127.0.0.1:{start_with_topic(start_broker08).port}"


def poll_until(consumers, count: int, poll_one, until=lambda: True) -> list[list[bytes]]:
    """Poll each in turn (``poll_one(consumer)`` gives its new values) until ``count`` values arrived and
    ``until()``; what each received."""
    received: list[list[bytes]] = [[] for _ in consumers]
    deadline = time.monotonic() + 90
    while sum(map(len, received)) < count or not until():
        assert time.monotonic() < deadline, f"timed out: {[len(r) for r in received]} of {count} received"
        for got, consumer in zip(received, consumers, strict=True):
            got.extend(poll_one(consumer))
    return received


# -- kafka-python --------------------------------------------------------------------------------------------


def kp_consumer(bootstrap: str, group: str) -> KafkaConsumer:
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest", enable_auto_commit=False,
        session_timeout_ms=6000, heartbeat_interval_ms=500,
    )  # fmt: skip
    consumer.subscribe([TOPIC])
    return consumer


def kp_poll(consumer: KafkaConsumer) -> list[bytes]:
    return [r.value for records in consumer.poll(timeout_ms=100).values() for r in records]


def test_kafka_python_unpinned_splits_commits_and_resumes_with_the_versions_it_picks(bootstrap, served):
    group = "kp-versions"
    first, second = kp_consumer(bootstrap, group), kp_consumer(bootstrap, group)
    try:
        poll_until([first, second], 0, kp_poll, until=lambda: len(first.assignment()) == len(second.assignment()) == 2)
        sent = produce(bootstrap, 120)
        received = poll_until([first, second], len(sent), kp_poll)
        assert sorted(received[0] + received[1]) == sorted(sent) and all(received)
        assert not first.assignment() & second.assignment()
        first.commit()
        second.commit()
    finally:
        first.close()
        second.close()
    more = produce(bootstrap, 30, start=120)
    restarted = kp_consumer(bootstrap, group)
    try:
        assert sorted(poll_until([restarted], len(more), kp_poll)[0]) == sorted(more)
        assert sum(restarted.committed(TopicPartition(TOPIC, p)) or 0 for p in range(4)) == len(sent)
    finally:
        restarted.close()
    used = served()
    assert {"JoinGroupRequestV5", "SyncGroupRequestV3", "LeaveGroupRequestV3"} <= used
    assert {"OffsetCommitRequestV7", "OffsetFetchRequestV5", "FindCoordinatorRequestV2"} <= used
    for api, version in (("JoinGroup", 5), ("Heartbeat", 3), ("OffsetCommit", 7)):  # its highest, and no other
        assert {n for n in used if n.startswith(f"{api}RequestV")} <= {f"{api}RequestV{version}"}


# -- librdkafka ----------------------------------------------------------------------------------------------


def rd_produce(bootstrap: str, values: list[bytes]) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "acks": 1})
    failed: list = []
    for i, value in enumerate(values):
        producer.produce(TOPIC, key=b"k%d" % i, value=value, on_delivery=lambda e, m: e and failed.append(e))
    assert producer.flush(30) == 0 and not failed


def rd_consumer(bootstrap: str, group: str, **config) -> confluent_kafka.Consumer:
    """librdkafka's defaults but for the group, the reset policy and manual commits."""
    consumer = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
         "enable.auto.commit": False, **config}
    )  # fmt: skip
    consumer.subscribe([TOPIC])
    return consumer


def rd_poll(consumer) -> list[bytes]:
    message = consumer.poll(0.1)
    if message is None:
        return []
    assert not message.error(), message.error()
    return [message.value()]


@pytest.mark.parametrize(
    "static", [False, True], ids=["defaults", "group.instance.id"]
)
def test_librdkafka_splits_commits_and_resumes(bootstrap, served, static):
    group = f"rd-{'static' if static else 'dynamic'}"

    def member(n: int):
        return rd_consumer(bootstrap, group, **({"group.instance.id": f"rd-{n}"} if static else {}))

    first, second = member(1), member(2)
    try:
        poll_until([first, second], 0, rd_poll, until=lambda: len(first.assignment()) == len(second.assignment()) == 2)
        sent = [b"m-%05d" % i for i in range(100)]
        rd_produce(bootstrap, sent)
        received = poll_until([first, second], len(sent), rd_poll)
        assert sorted(received[0] + received[1]) == sorted(sent)
        for consumer, got in zip((first, second), received, strict=True):
            if got:  # librdkafka refuses a commit with nothing consumed (_NO_OFFSET)
                consumer.commit(asynchronous=False)
    finally:
        first.close()
        second.close()
    more = [b"m-%05d" % i for i in range(100, 120)]
    rd_produce(bootstrap, more)
    # Static members sent no LeaveGroup: both restart into their old places (no rebalance, KIP-345); a
    # dynamic member left, and one restarted member takes every partition.
    restarted = [member(1), member(2)] if static else [member(1)]
    try:
        received = poll_until(restarted, len(more), rd_poll)
        assert sorted(sum(received, [])) == sorted(more)  # each once: nothing read twice
        committed = restarted[0].committed([confluent_kafka.TopicPartition(TOPIC, p) for p in range(4)], 10)
        assert sum(max(tp.offset, 0) for tp in committed) == len(sent)
    finally:
        for consumer in restarted:
            consumer.close()
    used = served()
    joins = sorted(n for n in used if n.startswith("JoinGroupRequestV"))
    assert joins and all(int(n.rpartition("V")[2]) >= 4 for n in joins), joins  # KIP-394's round
    assert {"OffsetCommitRequestV8", "OffsetFetchRequestV8"} <= used  # flexible; OffsetFetch's batched groups
    print(f"\nlibrdkafka {confluent_kafka.libversion()[0]} ({'static' if static else 'dynamic'}): {sorted(used)}")

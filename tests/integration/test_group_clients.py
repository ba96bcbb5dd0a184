"""Real third-party group clients, unpinned, against the group APIs at Kafka 3.4's versions: kafka-python 2.x
(it picks each API's version from ApiVersions: JoinGroup v5 with KIP-394's MEMBER_ID_REQUIRED round,
SyncGroup and Heartbeat v3, OffsetCommit v7, OffsetFetch v5, FindCoordinator v2) and librdkafka through
confluent-kafka with its default configuration (``session.timeout.ms`` 45 s, within Kafka 2.x's
``group.max.session.timeout.ms``) and with ``group.instance.id`` (KIP-345). Each pair of members splits a
topic, commits, and a restarted member resumes from the commits (both static members restart into their old
places, without a rebalance). The versions used are read from the broker's
request log. librdkafka with ``cooperative-sticky`` and zkafka's GroupConsumers share one cooperative group
(KIP-429), each side leading in turn. A real ZooKeeper and in-process brokers.
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
        assert sorted(sum(received, [])) == sorted(more)  # each once, nothing before the commits again: nothing read twice
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


# -- a mixed cooperative group: librdkafka and zkafka's GroupConsumer -----------------------------------------


def test_librdkafka_and_zkafka_in_one_cooperative_sticky_group_agree_and_both_consume(bootstrap):
    """librdkafka with ``partition.assignment.strategy=cooperative-sticky`` and zkafka GroupConsumers in one
    group, each side leading in turn: every partition owned by exactly one member after each incremental
    rebalance, and every member consumes."""
    from zkafka.consumer.group import GroupConsumer

    group = "mixed-cooperative"
    every = {(TOPIC, p) for p in range(4)}

    def rd():
        return rd_consumer(
            bootstrap, group, **{"partition.assignment.strategy": "cooperative-sticky",
                                 "session.timeout.ms": 6000, "heartbeat.interval.ms": 300}
        )  # fmt: skip

    def zk():
        consumer = GroupConsumer(
            {"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
             "enable.auto.commit": "false", "partition.assignment.strategy": "cooperative-sticky",
             "session.timeout.ms": "6000", "heartbeat.interval.ms": "300", "fetch.max.wait.ms": "100"}
        )  # fmt: skip
        consumer.subscribe([TOPIC])
        return consumer

    def owned(members) -> list[set]:
        return [{(tp.topic, tp.partition) for tp in m.assignment()} for m in members]

    def agreed(members) -> bool:
        shares = owned(members)
        return sum(map(len, shares)) == 4 and set().union(*shares) == every and all(shares)

    def poll_one(member) -> list[bytes]:
        if isinstance(member, GroupConsumer):
            return [r.value for records in member.poll(20).values() for r in records]
        message = member.poll(0.02)
        return [] if message is None or message.error() else [message.value()]

    members = [rd()]  # librdkafka joins first: it leads
    try:
        poll_until(members, 0, poll_one, until=lambda: len(members[0].assignment()) == 4)
        members.append(zk())
        poll_until(members, 0, poll_one, until=lambda: agreed(members))
        sent = [b"a-%05d" % i for i in range(100)]
        rd_produce(bootstrap, sent)
        received = poll_until(members, len(sent), poll_one)
        assert sorted(sum(received, [])) == sorted(sent) and all(received)
        for member in members:  # committed: partitions that move later resume from here
            member.commit() if isinstance(member, GroupConsumer) else member.commit(asynchronous=False)
        members.append(zk())  # a third member: an incremental rebalance led by librdkafka
        poll_until(members, 0, poll_one, until=lambda: agreed(members))
        members.pop(0).close()  # the librdkafka leader leaves: a zkafka member leads ...
        members.append(rd())  # ... and assigns a new librdkafka member its share
        poll_until(members, 0, poll_one, until=lambda: agreed(members))
        shares = owned(members)
        more = [b"b-%05d" % i for i in range(200)]
        rd_produce(bootstrap, more)
        received = poll_until(members, len(more), poll_one)
        assert sorted(sum(received, [])) == sorted(more)  # each once, nothing before the commits again
        assert all(received[i] for i, share in enumerate(shares) if share)
        print(f"\nmixed cooperative group (zkafka, zkafka, librdkafka): {[sorted(p for _, p in s) for s in shares]}")
    finally:
        for member in members:
            member.close()

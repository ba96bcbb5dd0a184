"""zkafka's own 0.9 group consumer (zkafka.consumer09.GroupConsumer) against real brokers and a real
ZooKeeper: members split a topic and read everything once, commit, and a restart resumes from the commits;
listeners see revocations before the join and assignments after; every rebalance trigger (a member joins,
leaves, misses its session timeout; partitions are added; a new topic matches a pattern); seek, position,
committed, auto.offset.reset, enable.auto.commit; and a group mixing kafka-python and zkafka members."""

from __future__ import annotations

import time

import gevent
import pytest

from tests.integration.test_coordinator_kafka_python import TOPIC, produce, start_with_topic
from zkafka.consumer09 import GroupConsumer, TopicPartition
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration

GROUP = "zgroup"
ALL = {TopicPartition(TOPIC, p) for p in range(4)}


@pytest.fixture
def bootstrap(start_broker08):
    return f"127.0.0.1:{start_with_topic(start_broker08, **{'group.min.session.timeout.ms': '1000'}).port}"


def consumer(bootstrap: str, **config) -> GroupConsumer:
    props = {
        "bootstrap.servers": bootstrap,
        "group.id": GROUP,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": "false",
        "session.timeout.ms": "6000",
        "heartbeat.interval.ms": "300",
        "fetch.max.wait.ms": "100",
        "metadata.max.age.ms": "500",
    }
    props.update({k.replace("_", "."): str(v) for k, v in config.items()})
    return GroupConsumer(props)


def poll_until(consumers, done, timeout: float = 60.0) -> list[list]:
    """Poll each consumer in turn until ``done(received)``; received[i] = [(partition, offset, value)]."""
    received: list[list] = [[] for _ in consumers]
    deadline = time.monotonic() + timeout
    while not done(received):
        assert time.monotonic() < deadline, f"timed out: {[len(r) for r in received]} received"
        for got, c in zip(received, consumers, strict=True):
            for records in c.poll(50).values():
                got.extend((r.partition, r.offset, r.value) for r in records)
    return received


def values_of(received) -> list[bytes]:
    return sorted(v for got in received for _, _, v in got)


def test_two_members_split_the_topic_read_everything_once_commit_and_a_restart_resumes(bootstrap):
    a, b = consumer(bootstrap), consumer(bootstrap)
    a.subscribe([TOPIC])
    b.subscribe([TOPIC])
    try:
        poll_until([a, b], lambda r: len(a.assignment()) == len(b.assignment()) == 2)
        assert a.assignment() | b.assignment() == ALL
        sent = produce(bootstrap, 200)
        received = poll_until([a, b], lambda r: sum(map(len, r)) >= len(sent))
        assert values_of(received) == sorted(sent)
        for c, got in zip((a, b), received, strict=True):
            assert {p for p, _, _ in got} <= {tp.partition for tp in c.assignment()}
        a.commit()
        b.commit()
    finally:
        a.close()
        b.close()
    more = produce(bootstrap, 20, start=200)
    restarted = consumer(bootstrap)
    restarted.subscribe([TOPIC])
    try:
        received = poll_until([restarted], lambda r: len(r[0]) >= len(more))
        assert values_of(received) == sorted(more)
        assert sum(restarted.committed(tp).offset for tp in ALL) == 200
    finally:
        restarted.close()

"""zkafka's own 0.9 group consumer (zkafka.consumer.group.GroupConsumer) against real brokers and a real
ZooKeeper: members split a topic and read everything once, commit, and a restart resumes from the commits;
listeners see revocations before the join and assignments after; every rebalance trigger (a member joins,
leaves, misses its session timeout; partitions are added; a new topic matches a pattern); seek, position,
committed, auto.offset.reset, enable.auto.commit; and a group mixing kafka-python and zkafka members."""

from __future__ import annotations

import time

import pytest

kafka = pytest.importorskip("kafka")
from kafka import KafkaProducer  # noqa: E402

from tests.integration.test_coordinator_kafka_python import TOPIC, produce, start_with_topic  # noqa: E402
from tests.support.descriptors import tcp_ports_connected_to  # noqa: E402
from zkafka.consumer.group import (  # noqa: E402
    GroupConsumer,
    NoOffsetForPartitionError,
    OffsetAndMetadata,
    TopicPartition,
)
from zkafka.utils import wait_until  # noqa: E402

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
    a, b = consumer(bootstrap, max_poll_records=7), consumer(bootstrap, max_poll_records=7)  # leftovers kept
    a.subscribe([TOPIC])
    b.subscribe([TOPIC])
    try:
        poll_until([a, b], lambda r: len(a.assignment()) == len(b.assignment()) == 2)
        assert a.assignment() | b.assignment() == ALL
        sent = produce(bootstrap, 200)
        polls = [a.poll, b.poll]
        a.poll = lambda timeout: _at_most(7, polls[0](timeout))
        b.poll = lambda timeout: _at_most(7, polls[1](timeout))
        received = poll_until([a, b], lambda r: sum(map(len, r)) >= len(sent))
        assert values_of(received) == sorted(sent)  # max.poll.records: nothing lost or repeated
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


def _at_most(limit: int, records: dict) -> dict:
    assert sum(map(len, records.values())) <= limit
    return records


class Recorder:
    """A rebalance listener noting each call, and the assignment the consumer had at that moment."""

    def __init__(self, name: str, log: list) -> None:
        self.name, self.log, self.consumer = name, log, None

    def on_partitions_revoked(self, revoked) -> None:
        self.log.append((self.name, "revoked", set(revoked), self.consumer.assignment()))

    def on_partitions_assigned(self, assigned) -> None:
        self.log.append((self.name, "assigned", set(assigned), self.consumer.assignment()))


def listening(bootstrap: str, name: str, log: list, **config) -> GroupConsumer:
    c = consumer(bootstrap, **config)
    recorder = Recorder(name, log)
    recorder.consumer = c
    c.subscribe([TOPIC], listener=recorder)
    return c


def test_a_joining_and_a_leaving_member_move_partitions_with_revocations_before_assignments(bootstrap):
    log: list = []
    a = listening(bootstrap, "a", log)
    b = None
    try:
        poll_until([a], lambda r: a.assignment() == ALL)
        assert log == [("a", "assigned", ALL, ALL)]
        # its expiry would come after poll_until's 60 s
        b = listening(bootstrap, "b", log, session_timeout_ms=120_000, request_timeout_ms=130_000)
        poll_until([a, b], lambda r: len(a.assignment()) == len(b.assignment()) == 2)
        # a gave everything up (still owning it while told) before the join, then got its half
        a_calls = [entry for entry in log if entry[0] == "a"]
        assert a_calls[1] == ("a", "revoked", ALL, ALL)
        assert a_calls[2][1] == "assigned" and a_calls[2][2] == a.assignment()
        assert not a.assignment() & b.assignment()
        sent = produce(bootstrap, 100)
        received = poll_until([a, b], lambda r: sum(map(len, r)) >= 100)
        assert values_of(received) == sorted(sent)
        a.commit()
        b.commit()
        owned = b.assignment()
        b.close()  # LeaveGroup: a takes b's partitions at once, not after the session timeout
        assert log[-1] == ("b", "revoked", owned, owned)  # told first, still owning them (eager onLeavePrepare)
        poll_until([a], lambda r: a.assignment() == ALL)
        more = produce(bootstrap, 40, start=100)
        received = poll_until([a], lambda r: len(r[0]) >= 40)
        assert values_of(received) == sorted(more)  # b's committed partitions resumed, nothing repeated
    finally:
        a.close()
        if b is not None:
            b.close()


def test_partitions_added_to_a_subscribed_topic_rebalance_the_group(bootstrap, zk_connect):
    from click.testing import CliRunner

    from zkafka.cli import main

    a, b = consumer(bootstrap), consumer(bootstrap)
    a.subscribe([TOPIC])
    b.subscribe([TOPIC])
    try:
        poll_until([a, b], lambda r: len(a.assignment()) == len(b.assignment()) == 2)
        result = CliRunner().invoke(
            main, ["topics", "--zookeeper", zk_connect, "--alter", "--topic", TOPIC, "--partitions", "6"]
        )
        assert result.exit_code == 0, result.output
        six = {TopicPartition(TOPIC, p) for p in range(6)}
        poll_until([a, b], lambda r: a.assignment() | b.assignment() == six and len(a.assignment()) == 3)
        assert not a.assignment() & b.assignment()
    finally:
        a.close()
        b.close()


def test_a_pattern_subscription_takes_a_new_matching_topic(bootstrap):
    a = consumer(bootstrap)
    a.subscribe(pattern=r"ord.*|fresh-\d+")
    try:
        poll_until([a], lambda r: a.assignment() == ALL)
        producer = KafkaProducer(bootstrap_servers=bootstrap, api_version=(0, 9), acks=1)
        producer.send("fresh-1", b"hello").get(30)  # auto-creates the topic
        producer.send("unmatched", b"no").get(30)
        producer.close()
        received = poll_until([a], lambda r: any(v == b"hello" for _, _, v in r[0]))
        assert TopicPartition("fresh-1", 0) in a.assignment()
        assert a.subscription() == {TOPIC, "fresh-1"}
        assert all(tp.topic != "unmatched" for tp in a.assignment()) and received
    finally:
        a.close()


def test_seek_position_committed_and_auto_offset_reset(bootstrap):
    produce(bootstrap, 40)
    tp = TopicPartition(TOPIC, 0)
    latest = consumer(bootstrap, auto_offset_reset="latest")
    latest.assign([tp])
    try:
        end = latest.position(tp)
        assert end > 0 and latest.committed(tp) is None
        assert poll_until([latest], lambda r: True) == [[]]
        latest.seek(tp, end - 2)
        received = poll_until([latest], lambda r: len(r[0]) >= 2)
        assert [o for _, o, _ in received[0]] == [end - 2, end - 1]
        assert latest.position(tp) == end
        latest.commit({tp: end - 1})
        assert latest.committed(tp).offset == end - 1
        latest.seek_to_beginning(tp)
        assert latest.position(tp) == 0
    finally:
        latest.close()
    strict = consumer(bootstrap, auto_offset_reset="none", group_id="never-committed")
    strict.assign([tp])
    try:
        with pytest.raises(NoOffsetForPartitionError, match="orders-0"):
            strict.poll(100)
    finally:
        strict.close()


def test_enable_auto_commit_commits_positions_in_the_background_and_at_close(bootstrap):
    sent = produce(bootstrap, 50)
    a = consumer(bootstrap, enable_auto_commit="true", auto_commit_interval_ms=200)
    a.subscribe([TOPIC])
    try:
        received = poll_until([a], lambda r: len(r[0]) >= len(sent))
        assert values_of(received) == sorted(sent)
        wait_until(lambda: a.poll(50) == {} and committed_total(a) == 50, 10, message="auto commits")
        more = produce(bootstrap, 10, start=50)
        poll_until([a], lambda r: len(r[0]) >= len(more))
    finally:
        a.close()  # commits the positions
    b = consumer(bootstrap)
    try:
        assert committed_total(b) == 60
    finally:
        b.close()


def test_a_closed_consumer_leaves_no_connection_open(bootstrap):
    """Its fetches are long polls (``fetch.max.wait.ms``): one under way at close is cut short and its
    connection closed then, not when the thread's hub next runs (which may be never)."""
    port = int(bootstrap.rsplit(":", 1)[1])
    before = tcp_ports_connected_to().count(port)
    sent = produce(bootstrap, 20)
    c = consumer(bootstrap, fetch_max_wait_ms=500)
    c.subscribe([TOPIC])
    try:
        poll_until([c], lambda r: len(r[0]) >= len(sent))
        assert tcp_ports_connected_to().count(port) > before
    finally:
        c.close()
    assert tcp_ports_connected_to().count(port) == before


def test_a_consumer_closed_while_its_join_waits_leaves_no_connection_open(bootstrap):
    """B's JoinGroup waits for A, which does not poll, to join again (up to A's session timeout); B closed
    meanwhile cuts it short and closes its connections."""
    port = int(bootstrap.rsplit(":", 1)[1])
    a = consumer(bootstrap)
    a.subscribe([TOPIC])
    try:
        poll_until([a], lambda r: len(a.assignment()) == 4)
        before = tcp_ports_connected_to().count(port)
        b = consumer(bootstrap)
        b.subscribe([TOPIC])
        try:
            b.poll(200)  # its join starts and waits for a
            assert not b.assignment() and tcp_ports_connected_to().count(port) > before
        finally:
            b.close()
        assert tcp_ports_connected_to().count(port) == before
    finally:
        a.close()


def committed_total(c: GroupConsumer) -> int:
    return sum((c.committed(tp) or OffsetAndMetadata(0)).offset for tp in ALL)


def test_ten_members_joining_at_once_rebalance_once_and_own_every_partition_once(start_broker08):
    broker = start_broker08(
        0,
        num_partitions="40",
        **{
            "offsets.topic.num.partitions": "3",
            "group.min.session.timeout.ms": "1000",
            "group.initial.rebalance.delay.ms": "1500",
        },
    )
    bootstrap = f"127.0.0.1:{broker.port}"
    produce(bootstrap, 1)  # creates TOPIC with 40 partitions
    members = [consumer(bootstrap) for _ in range(10)]
    started = time.monotonic()
    for m in members:
        m.subscribe([TOPIC])
    try:
        poll_until(members, lambda r: all(len(m.assignment()) == 4 for m in members))
        settled = time.monotonic() - started
        owned = [tp for m in members for tp in m.assignment()]
        assert len(owned) == len(set(owned)) == 40
        assert {m.coordinator.generation for m in members} == {1}  # one rebalance
        assert all(m.coordinator.rebalances == 1 for m in members)
        print(f"10 members x 40 partitions: one generation, settled in {settled:.2f} s")
    finally:
        for m in members:
            m.close()

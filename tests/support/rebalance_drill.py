"""The rebalance drill shared by tests/integration/test_cooperative_rebalance.py and
benchmarks/rebalance_gap.py: a settled group of zkafka GroupConsumers reading a topic that a producer keeps
writing to (one record per partition between two rounds of polls), joined by one more member; each member's
consumption is timed through the rebalance(s) until the group has settled again.

The members start a heartbeat interval apart between them, so that they hear of a rebalance at different
moments, as members started at different times do. What it measures, per member that was there before: the partitions it owned before and after, what its
listener was told, how many records it was handed while its own join was running, and its longest
consumption gap (the longest time between two polls that handed it records) from the newcomer's arrival
until the group settled.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field

from tests.support.server08 import Client08
from zkafka.consumer.group import GroupConsumer, TopicPartition
from zkafka.protocol.produce import ProduceRequestPartition, ProduceRequestTopic, ProduceRequestV0
from zkafka.records import format08


@dataclass
class MemberFigures:
    name: str
    before: set = field(default_factory=set)
    after: set = field(default_factory=set)
    revoked: list = field(default_factory=list)  # each on_partitions_revoked call's partitions
    assigned: list = field(default_factory=list)
    lost: list = field(default_factory=list)
    calls: list = field(default_factory=list)  # "revoked", "assigned", "lost", in order
    received_while_joining: int = 0
    longest_gap: float = 0.0

    @property
    def unaffected(self) -> bool:
        """It kept every partition it had."""
        return self.before <= self.after


class Listener:
    """A rebalance listener noting every call in a member's figures."""

    def __init__(self, figures: MemberFigures) -> None:
        self.figures = figures

    def on_partitions_revoked(self, revoked) -> None:
        self.figures.revoked.append(set(revoked))
        self.figures.calls.append("revoked")

    def on_partitions_assigned(self, assigned) -> None:
        self.figures.assigned.append(set(assigned))
        self.figures.calls.append("assigned")

    def on_partitions_lost(self, lost) -> None:
        self.figures.lost.append(set(lost))
        self.figures.calls.append("lost")


@dataclass
class DrillResult:
    strategy: str
    members: list[MemberFigures]
    moved: int  # partitions owned before by one member and after by another
    seconds: float  # from the newcomer's subscribe until the group settled
    joins: int  # joins the old members completed meanwhile (eager: one each; cooperative: two each)


class Producer:
    """One record to every partition of ``topic`` per ``round()`` (ProduceRequest v0 on a raw socket)."""

    def __init__(self, port: int, topic: str, partitions: int) -> None:
        self.client = Client08(port)
        self.topic, self.partitions, self.sent = topic, partitions, 0

    def round(self) -> None:
        message_set = format08.build_message_set([(None, b"r-%d" % self.sent)])
        every = [ProduceRequestPartition(p, message_set) for p in range(self.partitions)]
        self.client.call(ProduceRequestV0(1, 5000, [ProduceRequestTopic(self.topic, every)]))
        self.sent += 1

    def close(self) -> None:
        self.client.sock.close()


def member_config(bootstrap: str, group: str, strategy: str, name: str, **overrides: str) -> dict[str, str]:
    """A drill member's configuration; ``overrides`` by Kafka name (``"heartbeat.interval.ms": "3000"``)."""
    return {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "client.id": name,
        "partition.assignment.strategy": strategy,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": "true",
        "session.timeout.ms": "6000",
        "heartbeat.interval.ms": "300",
        "max.poll.interval.ms": "10000",
        "fetch.max.wait.ms": "100",
        "max.poll.records": "50",
        **overrides,
    }


def settled(consumers: list[GroupConsumer], topic: str, partitions: int) -> bool:
    """Every partition owned once, shares even, no member joining or about to."""
    owned = [c.assignment() for c in consumers]
    every = {TopicPartition(topic, p) for p in range(partitions)}
    if sum(map(len, owned)) != partitions or set().union(*owned) != every:
        return False
    if max(map(len, owned)) - min(map(len, owned)) > 1:
        return False
    return not any(c.coordinator.joining or c.coordinator.rejoin_needed for c in consumers)


class Drill:
    """A group of GroupConsumers polled in turn, the producer writing a round between two passes."""

    def __init__(
        self,
        bootstrap: str,
        port: int,
        topic: str,
        partitions: int,
        strategy: str,
        **config: str,
    ) -> None:
        self.bootstrap, self.topic, self.partitions, self.strategy = bootstrap, topic, partitions, strategy
        self.config = config
        self.group = f"drill-{strategy}"
        self.producer = Producer(port, topic, partitions)
        self.consumers: list[GroupConsumer] = []
        self.figures: list[MemberFigures] = []
        self.receipts: dict[str, list[float]] = {}  # member -> times of the polls that handed it records

    def add_member(self, strategy: str | None = None) -> None:
        """One more member (``partition.assignment.strategy`` the drill's unless ``strategy``)."""
        figures = MemberFigures(f"m{len(self.consumers)}")
        consumer = GroupConsumer(
            member_config(self.bootstrap, self.group, strategy or self.strategy, figures.name, **self.config)
        )
        consumer.subscribe([self.topic], listener=Listener(figures))
        self.consumers.append(consumer)
        self.figures.append(figures)
        self.receipts[figures.name] = []

    def run_until(self, done, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        max_records = int(self.member_config("max.poll.records"))
        while not done():
            assert time.monotonic() < deadline, f"drill timed out ({self.strategy})"
            self.producer.round()
            for consumer, figures in zip(self.consumers, self.figures, strict=True):
                count = sum(map(len, consumer.poll(10).values()))
                assert count <= max_records  # max.poll.records
                if count:
                    self.receipts[figures.name].append(time.monotonic())
                    if consumer.coordinator.joining:
                        figures.received_while_joining += count

    def member_config(self, key: str) -> str:
        return member_config(self.bootstrap, self.group, self.strategy, "", **self.config)[key]

    def settled(self) -> bool:
        return settled(self.consumers, self.topic, self.partitions)

    def close(self) -> None:
        for c in self.consumers:
            c.close()
        self.producer.close()


def grow_by_one(
    bootstrap: str,
    port: int,
    topic: str,
    partitions: int,
    members: int,
    strategy: str,
    timeout: float = 120.0,
    **config: str,
) -> DrillResult:
    """``members`` consumers settle on ``topic`` and consume; one more joins; the old members' figures."""
    drill = Drill(bootstrap, port, topic, partitions, strategy, **config)
    try:
        spacing = int(drill.member_config("heartbeat.interval.ms")) / 1000.0 / members
        for _ in range(members):  # started apart, as members are: their heartbeats spread over an interval
            drill.add_member()
            until = time.monotonic() + spacing
            drill.run_until(lambda until=until: time.monotonic() >= until, timeout)
        drill.run_until(drill.settled, timeout)
        drill.run_until(lambda: all(drill.receipts.values()), timeout)  # every member consuming
        for f, c in zip(drill.figures, drill.consumers, strict=True):
            f.before, f.revoked, f.assigned, f.received_while_joining = c.assignment(), [], [], 0
        joins = [c.coordinator.rebalances for c in drill.consumers]
        started = time.monotonic()
        drill.add_member()
        drill.run_until(drill.settled, timeout)
        ended = time.monotonic()
        old = drill.figures[:members]
        for f, c in zip(old, drill.consumers, strict=False):
            f.after = c.assignment()
            f.longest_gap = _longest_gap(drill.receipts[f.name], started, ended)
        moved = sum(len(f.before - f.after) for f in old)
        done = sum(c.coordinator.rebalances - j for c, j in zip(drill.consumers, joins, strict=False))
        # copies: closing the members revokes every partition (on_partitions_revoked), after the drill
        return DrillResult(strategy, copy.deepcopy(old), moved, ended - started, done)
    finally:
        drill.close()


def _longest_gap(times: list[float], start: float, end: float) -> float:
    """The longest time in [start, end] without a receipt (the last one before ``start`` counts)."""
    before = [t for t in times if t < start]
    inside = [t for t in times if start <= t <= end]
    points = [before[-1] if before else start, *inside, end]
    return max(b - a for a, b in zip(points, points[1:], strict=False))

"""The web view's timeline: every rebalance (and 0.8 leader election) seen from outside, opened into its steps.

Pure: the view feeds successive observations (a ``ZkGroup`` per ZooKeeper group, a description per
coordinator group, the 0.8 partition states) with their time, and the timeline notices what changed. A
ZooKeeper rebalance opens when the members (``/ids``) or the partitions change; its steps are the
assignment every member computes (``zkafka.explain``), then what was observed in ZooKeeper: the owner
znodes released and claimed, in order, and claims made more than once (a member retried); it settles when
the owners are the computed assignment. A coordinator rebalance follows the group's state (PreparingRebalance,
CompletingRebalance, Stable) and generation through FindCoordinator, JoinGroup, SyncGroup and the heartbeats told
REBALANCE_IN_PROGRESS. Every step names the zkafka function that does it.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from zkafka.consumer.membership import GroupMembership
from zkafka.consumer.ownership import release
from zkafka.consumer.rebalancer import ZKRebalancer
from zkafka.coordinator.group import GroupMetadata
from zkafka.coordinator.offset_apis import OffsetApis
from zkafka.explain import Step, explain_assignment, explain_zk_rebalance, where, zk_assign
from zkafka.ui.partition_events import PartitionEvents
from zkafka.ui.zk_groups import ZkGroup

LIMIT = 60  # entries kept, newest last


@dataclass
class Entry:
    """One rebalance or election: when it began, what triggered it, its steps, and whether it settled."""

    id: int
    kind: str  # "zookeeper" or "coordinator" (rebalances), "leader" (an election) or "isr" (an ISR change)
    subject: str  # the group, or the partition
    started: float
    title: str
    status: str = "in progress"  # "settled", "superseded"
    settled_after_ms: int | None = None
    measure: str = ""  # the figure that fits the kind: a rebalance's time to settle, an election's delay...
    steps: list[Step] = field(default_factory=list)
    events: list[str] = field(default_factory=list)  # observed, in order, "+0.123s ..."

    def note(self, now: float, text: str) -> None:
        self.events.append(f"+{now - self.started:.3f}s {text}")

    def settle(self, now: float) -> None:
        self.status = "settled"
        self.settled_after_ms = round((now - self.started) * 1000)
        if not self.measure:
            seen = "owners looked at every 100 ms" if self.kind == "zookeeper" else "the group read each refresh"
            self.measure = f"settled in {self.settled_after_ms} ms ({seen})"


class Timeline:
    """Entries of every group and partition watched, in the order they began."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self._zk: dict[str, _ZkTrack] = {}
        self._coordinator: dict[str, _CoordinatorTrack] = {}
        self._partitions = PartitionEvents(self.open)
        self._next_id = 1

    def open(self, now: float, kind: str, subject: str, title: str) -> Entry:
        entry = Entry(self._next_id, kind, subject, now, title)
        self._next_id += 1
        self.entries.append(entry)
        del self.entries[:-LIMIT]
        return entry

    def observe_zk_group(self, now: float, group: ZkGroup) -> None:
        track = self._zk.get(group.name)
        if track is None:
            track = self._zk[group.name] = _ZkTrack(self, group.name)
        track.observe(now, group)

    def observe_coordinator_group(self, now: float, group: Mapping[str, Any]) -> None:
        track = self._coordinator.get(group["name"])
        if track is None:
            track = self._coordinator[group["name"]] = _CoordinatorTrack(self, group["name"])
        track.observe(now, group)

    def observe_partition_states(
        self,
        now: float,
        topics: list[Mapping[str, Any]],
        alive: set[int],
        gone_at: Mapping[int, float] | None = None,
    ) -> None:
        """0.8 partition states (``cluster_state.read_topics``): a new leader opens a "leader" entry, a
        changed ISR an "isr" entry (``zkafka.ui.partition_events``)."""
        self._partitions.observe(now, topics, alive, gone_at or {})

    def to_json(self) -> list[dict[str, Any]]:
        """Newest first."""
        return [asdict(entry) for entry in reversed(self.entries)]


def _tp(key: tuple[str, Hashable]) -> str:
    return f"{key[0]}:{key[1]}"


class _ZkTrack:
    """One ZooKeeper group followed across observations."""

    def __init__(self, timeline: Timeline, name: str) -> None:
        self.timeline = timeline
        self.name = name
        self.last: ZkGroup | None = None
        self.entry: Entry | None = None
        self.strategy = "range"
        self.released: list[str] = []
        self.claimed: list[str] = []
        self.claims: dict[tuple[str, Hashable], int] = {}
        self.cause_known = False  # False while the open entry has seen owner changes but no group change yet

    def observe(self, now: float, group: ZkGroup) -> None:
        last = self.last
        self.last = group
        if last is None:
            if not self._settled(group):  # a settled group as found is no rebalance
                self._open(now, group, "the view started during a rebalance")
        elif group.members != last.members or group.partitions != last.partitions:
            if self.entry is not None and not self.cause_known:
                self._explain(self.entry, group, _trigger(last, group))  # the releases were its first steps
            else:
                self._open(now, group, _trigger(last, group))
        if last is not None:
            self._owners_changed(now, last.owners, group.owners, group)
        if self.entry is not None and self._settled(group):
            self._finish(now)

    def _open(self, now: float, group: ZkGroup, trigger: str) -> None:
        if self.entry is not None:
            self.entry.status = "superseded"
            self.entry.note(now, "superseded: the group changed again before the owners settled")
        self.entry = self.timeline.open(now, "zookeeper", self.name, "")
        self.released, self.claimed, self.claims = [], [], {}
        self._explain(self.entry, group, trigger)
        self.cause_known = not trigger.startswith(_OWNERS_FIRST)

    def _explain(self, entry: Entry, group: ZkGroup, trigger: str) -> None:
        """Title the entry with its trigger and lay out the assignment every member computes."""
        self.cause_known = True
        self.strategy = _strategy(group)
        entry.title = f"{self.name}: {trigger}"
        entry.steps = [
            Step(
                f"trigger: {trigger}",
                where(GroupMembership.on_watch),
                [
                    "every member's watch on /consumers/<group>/ids (or /brokers/topics) fires; each rebalances"
                ],
            )
        ]
        if group.members:
            explained = explain_zk_rebalance(group.members, group.partitions, self.strategy)
            entry.steps += explained.steps[:-1]  # the claims are observed below
        else:
            entry.steps.append(Step("no member left: nothing to assign", where(ZKRebalancer.rebalance)))

    def _owners_changed(self, now, before: Mapping, after: Mapping, group: ZkGroup) -> None:
        for key in sorted(set(before) | set(after), key=lambda k: (k[0], str(k[1]))):
            was, now_owner = before.get(key), after.get(key)
            if was == now_owner:
                continue
            if self.entry is None:
                self._open(now, group, _OWNERS_FIRST)
            if was is not None:
                self.released.append(f"{_tp(key)} (was {was})")
                self.entry.note(now, f"released {_tp(key)} (was {was})")
            if now_owner is not None:
                self.claims[key] = self.claims.get(key, 0) + 1
                self.claimed.append(f"{_tp(key)} -> {now_owner}")
                self.entry.note(now, f"claimed {_tp(key)} -> {now_owner}")

    def _settled(self, group: ZkGroup) -> bool:
        try:
            expected = zk_assign(group.members, group.partitions, self.strategy)
        except ValueError:
            return False
        return dict(group.owners) == expected

    def _finish(self, now: float) -> None:
        entry = self.entry
        retried = sorted(_tp(k) for k, n in self.claims.items() if n > 1)
        entry.steps += [
            Step(
                "each member gives up the partitions it owned: deletes its owner znodes (after a last commit)",
                where(release),
                self.released
                or ["nothing released that was observed (a member whose share is unchanged keeps it)"],
            ),
            Step(
                "each member claims its share: creates ephemeral /consumers/<group>/owners/<topic>/<partition>",
                where(ZKRebalancer._release_and_claim),
                self.claimed or ["no owner changed"],
            ),
            Step(
                "retries: a claim that meets a node still held waits rebalance.backoff.ms, then the attempt is retried",
                where(ZKRebalancer.rebalance),
                [f"claimed more than once: {', '.join(retried)}"] if retried else ["none observed"],
            ),
            Step(
                "each member reads the committed offsets of what it claimed and restarts its fetchers",
                where(ZKRebalancer._infos),
                [],
            ),
        ]
        entry.settle(now)
        entry.note(now, f"settled: the owners are the {self.strategy} assignment")
        self.entry = None


_OWNERS_FIRST = (
    "owner znodes changed before the members did (a member releasing, or re-claiming after a session event)"
)


def _strategy(group: ZkGroup) -> str:
    """range, unless the owners already match 0.8.2's roundrobin (the strategy is a consumer setting)."""
    if group.line != "0.8" or not group.owners:
        return "range"
    try:
        if dict(group.owners) == zk_assign(group.members, group.partitions, "roundrobin"):
            return "roundrobin"
    except ValueError:
        pass
    return "range"


def _trigger(before: ZkGroup, after: ZkGroup) -> str:
    joined = sorted(set(after.members) - set(before.members))
    left = sorted(set(before.members) - set(after.members))
    parts = []
    if joined:
        parts.append(f"{', '.join(joined)} joined")
    if left:
        parts.append(f"{', '.join(left)} left")
    if not parts and after.members != before.members:
        parts.append("a member changed its subscription")
    if after.partitions != before.partitions:
        parts.append("the topics' partitions changed (a broker came or went)")
    return "; ".join(parts)


class _CoordinatorTrack:
    """One coordinator-managed group followed through DescribeGroups answers."""

    def __init__(self, timeline: Timeline, name: str) -> None:
        self.timeline = timeline
        self.name = name
        self.last: Mapping[str, Any] | None = None
        self.entry: Entry | None = None
        self.told: list[str] = []

    def observe(self, now: float, group: Mapping[str, Any]) -> None:
        last, self.last = self.last, group
        members = {m["id"] for m in group["members"]}
        if last is None:  # a Stable group as found is no rebalance
            if group["state"] not in ("Stable", "Dead", "Empty"):
                self._open(now, group, f"the view started during {group['state']}")
            return
        before = {m["id"] for m in last["members"]}
        changed = members != before or group.get("generation") != last.get("generation")
        if group["state"] != last["state"] or changed:
            if self.entry is None:
                trigger = _member_trigger(before, members) or f"state {last['state']} -> {group['state']}"
                self._open(now, group, trigger)
                self.told = sorted(before & members)
            self.entry.note(
                now, f"state {group['state']}, generation {group.get('generation')}, {len(members)} members"
            )
        if self.entry is not None and group["state"] == "Stable":
            self._finish(now, group, self.entry)

    def _open(self, now: float, group: Mapping[str, Any], trigger: str) -> Entry:
        entry = self.entry = self.timeline.open(now, "coordinator", self.name, f"{self.name}: {trigger}")
        entry.steps = [
            Step(
                f"FindCoordinator: the group's coordinator is broker {group.get('coordinator')}, the leader of its "
                "__consumer_offsets partition",
                where(OffsetApis.handle_find_coordinator),
                [f"trigger: {trigger}"],
            )
        ]
        return entry

    def _finish(self, now: float, group: Mapping[str, Any], entry: Entry) -> None:
        members = group["members"]
        subscriptions = {m["id"]: m.get("subscription", []) for m in members}
        leader = group.get("leader")
        entry.steps += [
            Step(
                "Heartbeat: members still in the group are answered REBALANCE_IN_PROGRESS and send JoinGroup again",
                where(GroupMetadata.heartbeat),
                [", ".join(self.told) or "none (the group formed from scratch)"],
            ),
            Step(
                f"JoinGroup: every member joins; the coordinator picks the protocol ({group.get('protocol') or '?'}), "
                f"a leader ({leader or 'not shown by DescribeGroups v0'}) and generation {group.get('generation', '?')}",
                where(GroupMetadata.complete_join),
                [
                    f"member {m['id']} ({m.get('client_id', '')}@{m.get('client_host', '')}): {', '.join(m.get('subscription', []))}"
                    for m in members
                ],
            ),
        ]
        protocol = group.get("protocol")
        if protocol in ("range", "roundrobin", "sticky") and group.get("partition_counts"):
            explained = explain_assignment(protocol, group["partition_counts"], subscriptions)
            for step in explained.steps[1:-1]:
                entry.steps.append(Step(f"the leader's assignor: {step.title}", step.where, step.lines))
        entry.steps.append(
            Step(
                "SyncGroup: the leader sends the assignment; the coordinator stores it and hands each member its part",
                where(GroupMetadata.sync),
                [f"{m['id']}: {_assignment_text(m.get('assignment', {}))}" for m in members],
            )
        )
        entry.settle(now)
        self.entry = None


def _member_trigger(before: set[str], after: set[str]) -> str:
    parts = []
    if after - before:
        parts.append(f"{', '.join(sorted(after - before))} joined")
    if before - after:
        parts.append(f"{', '.join(sorted(before - after))} left")
    return "; ".join(parts)


def _assignment_text(assignment: Mapping[str, list[int]]) -> str:
    return "; ".join(f"{t}: {', '.join(map(str, ps))}" for t, ps in sorted(assignment.items())) or "(nothing)"

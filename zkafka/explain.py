"""Step-by-step explanations of partition assignment: the ZooKeeper consumers' rebalance and the coordinator's
assignors, with what would move if a member left or joined.

Pure: the results come from the real algorithms (``zkafka.assignment`` for the ZooKeeper consumers,
``zkafka.consumer.group.assignors`` for the coordinator's); this module only lays out their inputs, their
intermediate values and their output as numbered steps, each naming the function that does it. ``zkafka
explain`` prints them and the web view (``zkafka.ui``) shows them in its rebalance timeline.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from zkafka.assignment import range_assignor, roundrobin_assignor
from zkafka.assignment.assignor import ASSIGNORS as ZK_ASSIGNORS
from zkafka.consumer.group import assignors
from zkafka.consumer.group_view07 import read_group_view
from zkafka.consumer.rebalancer import ZKRebalancer
from zkafka.coordinator.group import GroupMetadata
from zkafka.topic_count import thread_ids

# member (consumer id) -> topic -> its thread ids for that topic
Members = Mapping[str, Mapping[str, list[str]]]
Owners = Mapping[tuple[str, Hashable], str]  # (topic, partition) -> owner (thread id or member id)


def where(func: Callable) -> str:
    """``module.qualname`` of the function doing a step, so the text follows the code when it moves."""
    return f"{func.__module__}.{func.__qualname__}"


@dataclass
class Step:
    """One step of an explanation: what happens, the function that does it, and its facts as lines."""

    title: str
    where: str
    lines: list[str] = field(default_factory=list)


@dataclass
class Move:
    """A partition changing hands in a what-if: from one owner to another (None: nobody)."""

    topic: str
    partition: str
    before: str | None
    after: str | None


@dataclass
class Explanation:
    """A titled list of steps, the resulting owner of every partition and the what-if scenarios."""

    title: str
    steps: list[Step]
    owners: dict[str, str]  # "topic:partition" -> owner
    what_if: dict[str, list[Move]] = field(default_factory=dict)

    def render(self) -> str:
        """The explanation as numbered plain-text steps."""
        out = [self.title, ""]
        for number, step in enumerate(self.steps, 1):
            out.append(f"{number}. {step.title}   [{step.where}]")
            out.extend(f"     {line}" for line in step.lines)
        for scenario, moves in self.what_if.items():
            out.append("")
            out.append(f"if {scenario}: {describe_moves(moves)}")
            out.extend(
                f"     {m.topic}:{m.partition}  {m.before or '(nobody)'} -> {m.after or '(nobody)'}"
                for m in moves
            )
        return "\n".join(out)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def describe_moves(moves: list[Move]) -> str:
    if not moves:
        return "nothing moves"
    return f"{len(moves)} partition{'s' if len(moves) != 1 else ''} move"


def diff_owners(before: Owners, after: Owners, owner_of: Callable[[str], str] = str) -> list[Move]:
    """Partitions whose owner differs between two assignments (owners mapped through ``owner_of``)."""
    moves = []
    for key in sorted(set(before) | set(after), key=lambda k: (k[0], str(k[1]))):
        was = owner_of(before[key]) if key in before else None
        now = owner_of(after[key]) if key in after else None
        if was != now:
            moves.append(Move(key[0], str(key[1]), was, now))
    return moves


# -- the ZooKeeper consumers (0.7's range; 0.8.2's range and roundrobin) --------------------------------------


def members_from_streams(
    streams: Mapping[str, int], topics: Iterable[str]
) -> dict[str, dict[str, list[str]]]:
    """Members subscribing to every topic with ``streams[member]`` streams each, thread ids as the consumer
    names them (``<consumerId>-<i>``, ``zkafka.topic_count.thread_ids``)."""
    topics = list(topics)
    return {member: {t: thread_ids(member, n) for t in topics} for member, n in streams.items()}


def threads_per_topic(members: Members) -> dict[str, list[str]]:
    """Every member's thread ids per topic: the assignor's input."""
    threads: dict[str, list[str]] = {}
    for per_topic in members.values():
        for topic, ids in per_topic.items():
            threads.setdefault(topic, []).extend(ids)
    return threads


def member_of(members: Members) -> Callable[[str], str]:
    """Thread id -> the member (consumer id) it belongs to."""
    owner = {
        tid: member for member, per_topic in members.items() for ids in per_topic.values() for tid in ids
    }
    return lambda thread_id: owner.get(thread_id, thread_id)


def zk_assign(
    members: Members, partitions: Mapping[str, Iterable[Hashable]], strategy: str = "range"
) -> dict:
    """The assignment every member of a ZooKeeper group computes: ``(topic, partition) -> thread id``."""
    assignor = ZK_ASSIGNORS[strategy]
    return assignor(threads_per_topic(members), {t: list(ps) for t, ps in partitions.items()})


def explain_zk_rebalance(
    members: Members,
    partitions: Mapping[str, Iterable[Hashable]],
    strategy: str = "range",
    joining: str | None = None,
) -> Explanation:
    """How a ZooKeeper consumer group divides its topics' partitions among its members' threads.

    ``partitions`` holds 0.7 names (``"b-p"``, sorted as strings) or 0.8 ids (ints, sorted as numbers).
    What-ifs: each member leaving, and ``joining`` (a new member with one stream per topic) joining.
    """
    partitions = {t: list(ps) for t, ps in partitions.items()}
    threads = threads_per_topic(members)
    result = zk_assign(members, partitions, strategy)
    steps = [
        Step(
            "read the group from ZooKeeper: members (/consumers/<group>/ids) and partitions (/brokers/topics)",
            where(read_group_view),
            [
                f"member {m}: {', '.join(f'{t} x{len(ids)}' for t, ids in sorted(per.items()))}"
                for m, per in sorted(members.items())
            ]
            + [f"topic {t}: {len(ps)} partitions" for t, ps in sorted(partitions.items())],
        )
    ]
    if strategy == "roundrobin":
        steps += _roundrobin_steps(threads, partitions, result)
    else:
        for topic in sorted(threads):
            if topic in partitions:
                steps += _range_steps(topic, partitions[topic], threads[topic])
    steps.append(
        Step(
            "each member keeps its own threads' part and claims it: create /consumers/<group>/owners/<topic>/<partition>",
            where(ZKRebalancer._claim),
            _owner_lines(result, member_of(members)),
        )
    )
    explanation = Explanation(
        f"ZooKeeper consumer rebalance ({strategy}): {len(members)} members, "
        f"{sum(len(p) for p in partitions.values())} partitions",
        steps,
        {f"{t}:{p}": tid for (t, p), tid in sorted(result.items(), key=lambda kv: (kv[0][0], str(kv[0][1])))},
    )
    explanation.what_if = _zk_what_ifs(members, partitions, strategy, result, joining)
    return explanation


def _range_steps(topic: str, parts: list[Hashable], thread_list: list[str]) -> list[Step]:
    ordered_parts = range_assignor.sort_partitions(parts)
    ordered_threads = range_assignor.sort_threads(thread_list)
    sort_note = (
        'as strings: "1-10" sorts before "1-2"'
        if ordered_parts and isinstance(ordered_parts[0], str)
        else "as numbers"
    )
    slices = []
    for index, thread_id in enumerate(ordered_threads):
        start, count = range_assignor.range_share(len(ordered_parts), len(ordered_threads), index)
        got = [str(p) for p in ordered_parts[start : start + count]]
        slices.append(
            f"{thread_id}: [{start}, {start + count}) -> {', '.join(got) or '(nothing: more threads than partitions)'}"
        )
    return [
        Step(
            f"topic {topic}: sort its partitions ({sort_note})",
            where(range_assignor.sort_partitions),
            [", ".join(str(p) for p in ordered_parts) or "(none)"],
        ),
        Step(
            f"topic {topic}: sort every member's consumer threads (as strings)",
            where(range_assignor.sort_threads),
            [", ".join(ordered_threads) or "(none)"],
        ),
        Step(
            f"topic {topic}: give each thread a contiguous slice: "
            + share_text(len(ordered_parts), len(ordered_threads), "threads"),
            where(range_assignor.range_share),
            slices,
        ),
    ]


def _roundrobin_steps(threads: Mapping[str, list[str]], partitions: Mapping, result: Mapping) -> list[Step]:
    all_threads = range_assignor.sort_threads(next(iter(threads.values()), []))
    dealt = sorted(
        (roundrobin_assignor.topic_partition_hash(t, p), t, p)
        for t in threads
        if t in partitions
        for p in partitions[t]
    )
    return [
        Step(
            "sort the consumer threads (every member must subscribe to the same topics and stream counts)",
            where(range_assignor.sort_threads),
            [", ".join(all_threads) or "(none)"],
        ),
        Step(
            'order every partition by Java\'s hash of "[topic,partition]" and deal them to the threads in turn',
            where(roundrobin_assignor.roundrobin_assign),
            [f"{t}:{p} (hash {h}) -> {result[(t, p)]}" for h, t, p in dealt],
        ),
    ]


def share_text(partitions: int, takers: int, what: str) -> str:
    """``P partitions / C threads = n each, the first e get one more`` (range's arithmetic, in words)."""
    if takers == 0:
        return f"{partitions} partitions, no {what}"
    per, extra = divmod(partitions, takers)
    text = f"{partitions} partitions / {takers} {what} = {per} each"
    return text + (f", the first {extra} get one more" if extra else "")


def _owner_lines(result: Mapping, owner_of: Callable[[str], str]) -> list[str]:
    per_member: dict[str, list[str]] = {}
    for (topic, partition), thread_id in sorted(result.items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
        per_member.setdefault(owner_of(thread_id), []).append(f"{topic}:{partition} ({thread_id})")
    return [f"{member}: {', '.join(items)}" for member, items in sorted(per_member.items())]


def _zk_what_ifs(
    members: Members, partitions: Mapping, strategy: str, result: Mapping, joining: str | None
) -> dict[str, list[Move]]:
    scenarios: dict[str, list[Move]] = {}
    owner_of = member_of(members)
    for leaving in sorted(members):
        rest = {m: per for m, per in members.items() if m != leaving}
        scenarios[f"{leaving} left"] = diff_owners(result, zk_assign(rest, partitions, strategy), owner_of)
    if joining:
        topics = sorted({t for per in members.values() for t in per}) or sorted(partitions)
        grown = {**members, joining: {t: thread_ids(joining, 1) for t in topics}}
        scenarios[f"{joining} joined"] = diff_owners(
            result, zk_assign(grown, partitions, strategy), member_of(grown)
        )
    return scenarios


# -- the group coordinator's assignors (0.9) ------------------------------------------------------------------


def coordinator_assign(
    strategy: str, partition_counts: Mapping[str, int], subscriptions: Mapping[str, Iterable[str]]
) -> assignors.Assignment:
    """What the group leader's assignor gives each member (``zkafka.consumer.group.assignors``)."""
    subs = {m: assignors.Subscription(sorted(set(ts))) for m, ts in subscriptions.items()}
    return assignors.get_assignor(strategy).assign(partition_counts, subs)


def explain_assignment(
    strategy: str,
    partition_counts: Mapping[str, int],
    subscriptions: Mapping[str, Iterable[str]],
    joining: str | None = None,
) -> Explanation:
    """How the coordinator group's leader divides the partitions with the ``strategy`` assignor."""
    assignor = assignors.get_assignor(strategy)
    subscriptions = {m: sorted(set(ts)) for m, ts in subscriptions.items()}
    result = coordinator_assign(strategy, partition_counts, subscriptions)
    owners = assignors.owners(result)
    steps = [
        Step(
            "every member sends JoinGroup with its subscription; the coordinator picks a leader and a generation",
            where(GroupMetadata.join),
            [f"member {m}: {', '.join(ts)}" for m, ts in sorted(subscriptions.items())],
        )
    ]
    if assignor.name == "range":
        for topic in sorted({t for ts in subscriptions.values() for t in ts}):
            count = partition_counts.get(topic)
            if count is None:
                continue
            subscribed = sorted(m for m, ts in subscriptions.items() if topic in ts)
            steps.append(
                Step(
                    f"topic {topic}, members sorted by id: " + share_text(count, len(subscribed), "members"),
                    where(type(assignor).assign),
                    [f"{m}: {_ranges(result[m].get(topic, []))}" for m in subscribed],
                )
            )
    else:
        ordered = assignors.all_partitions_sorted(
            partition_counts, {m: assignors.Subscription(ts) for m, ts in subscriptions.items()}
        )
        steps.append(
            Step(
                "list every subscribed partition sorted by topic then partition",
                where(assignors.all_partitions_sorted),
                [", ".join(f"{t}:{p}" for t, p in ordered) or "(none)"],
            )
        )
        steps.append(
            Step(
                f"hand them out with the {assignor.name} assignor, members sorted by id",
                where(type(assignor).assign),
                [f"{t}:{p} -> {owners[(t, p)]}" for t, p in ordered],
            )
        )
    steps.append(
        Step(
            "the leader sends the assignment in SyncGroup; the coordinator hands each member its part",
            where(assignors.assign_group),
            [f"{m}: {_topics_text(result[m])}" for m in sorted(result)],
        )
    )
    explanation = Explanation(
        f"coordinator assignment ({assignor.name}): {len(subscriptions)} members, "
        f"{sum(partition_counts.values())} partitions",
        steps,
        {f"{t}:{p}": m for (t, p), m in sorted(owners.items())},
    )
    for leaving in sorted(subscriptions):
        rest = {m: ts for m, ts in subscriptions.items() if m != leaving}
        after = assignors.owners(coordinator_assign(strategy, partition_counts, rest))
        explanation.what_if[f"{leaving} left"] = diff_owners(owners, after)
    if joining:
        grown = {
            **subscriptions,
            joining: sorted({t for ts in subscriptions.values() for t in ts} or partition_counts),
        }
        after = assignors.owners(coordinator_assign(strategy, partition_counts, grown))
        explanation.what_if[f"{joining} joined"] = diff_owners(owners, after)
    return explanation


def _ranges(partitions: list[int]) -> str:
    return ", ".join(str(p) for p in partitions) or "(nothing)"


def _topics_text(per_topic: Mapping[str, list[int]]) -> str:
    return "; ".join(f"{t}: {_ranges(ps)}" for t, ps in sorted(per_topic.items())) or "(nothing)"


# -- reading command-line shorthand ---------------------------------------------------------------------------


def parse_partitions(text: str) -> list[Hashable]:
    """``0-0,0-1`` (0.7 names), ``0:3`` (broker 0's partitions 0-2), or ``0,1,2`` (0.8 ids) into a list."""
    out: list[Hashable] = []
    for token in (t.strip() for t in text.split(",")):
        if not token:
            continue
        if ":" in token:
            broker, _, count = token.partition(":")
            out.extend(range_assignor.partition_name(int(broker), p) for p in range(int(count)))
        elif "-" in token:
            range_assignor.parse_partition_name(token)
            out.append(token)
        else:
            out.append(int(token))
    if any(isinstance(p, int) for p in out) and any(isinstance(p, str) for p in out):
        raise ValueError(f"{text!r} mixes 0.8 partition ids with 0.7 broker-partition names")
    return out


def parse_counted(text: str, default: int = 1) -> tuple[str, int]:
    """``name`` or ``name:N`` (N >= 0) into ``(name, N)``."""
    name, sep, count = text.partition(":")
    if not name or (sep and not count.isdigit()):
        raise ValueError(f"{text!r} is not NAME or NAME:COUNT")
    return name, int(count) if sep else default

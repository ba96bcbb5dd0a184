"""How a ZooKeeper consumer group divides its partitions (0.7's range; 0.8.2's range and roundrobin), step by
step, with what would move if a member left or joined. The results come from ``zkafka.assignment``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping

from zkafka.assignment import range_assignor, roundrobin_assignor
from zkafka.assignment.assignor import ASSIGNORS as ZK_ASSIGNORS
from zkafka.consumer.group_view07 import read_group_view
from zkafka.consumer.rebalancer import ZKRebalancer
from zkafka.explain.steps import Explanation, Move, Step, diff_owners, share_text, where
from zkafka.topic_count import thread_ids

# member (consumer id) -> topic -> its thread ids for that topic
Members = Mapping[str, Mapping[str, list[str]]]


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
            where(ZKRebalancer._release_and_claim),
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

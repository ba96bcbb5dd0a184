"""How the group coordinator's group leader divides the partitions with the client's assignor (0.9's range
and roundrobin, and sticky), step by step, with what would move if a member left or joined. The results come
from ``zkafka.consumer.group.assignors``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from zkafka.consumer.group import assignors
from zkafka.coordinator.group import GroupMetadata
from zkafka.explain.steps import Explanation, Move, Step, diff_owners, share_text, where


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
        steps += _coordinator_range_steps(assignor, partition_counts, subscriptions, result)
    else:
        steps += _coordinator_handout_steps(assignor, partition_counts, subscriptions, owners)
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
    explanation.what_if = _coordinator_what_ifs(strategy, partition_counts, subscriptions, owners, joining)
    return explanation


def _coordinator_range_steps(
    assignor: assignors.Assignor,
    partition_counts: Mapping[str, int],
    subscriptions: Mapping[str, list[str]],
    result: assignors.Assignment,
) -> list[Step]:
    """Range: per topic, the subscribed members sorted by id and the slice each gets."""
    steps = []
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
    return steps


def _coordinator_handout_steps(
    assignor: assignors.Assignor,
    partition_counts: Mapping[str, int],
    subscriptions: Mapping[str, list[str]],
    owners: Mapping[tuple[str, int], str],
) -> list[Step]:
    """Roundrobin and sticky: every subscribed partition in order, then who gets each."""
    ordered = assignors.all_partitions_sorted(
        partition_counts, {m: assignors.Subscription(ts) for m, ts in subscriptions.items()}
    )
    return [
        Step(
            "list every subscribed partition sorted by topic then partition",
            where(assignors.all_partitions_sorted),
            [", ".join(f"{t}:{p}" for t, p in ordered) or "(none)"],
        ),
        Step(
            f"hand them out with the {assignor.name} assignor, members sorted by id",
            where(type(assignor).assign),
            [f"{t}:{p} -> {owners[(t, p)]}" for t, p in ordered],
        ),
    ]


def _coordinator_what_ifs(
    strategy: str,
    partition_counts: Mapping[str, int],
    subscriptions: Mapping[str, list[str]],
    owners: Mapping[tuple[str, int], str],
    joining: str | None,
) -> dict[str, list[Move]]:
    """The partitions that would move if each member left, and if ``joining`` joined (subscribing to every
    topic any member subscribes to)."""
    scenarios: dict[str, list[Move]] = {}
    for leaving in sorted(subscriptions):
        rest = {m: ts for m, ts in subscriptions.items() if m != leaving}
        after = assignors.owners(coordinator_assign(strategy, partition_counts, rest))
        scenarios[f"{leaving} left"] = diff_owners(owners, after)
    if joining:
        grown = {
            **subscriptions,
            joining: sorted({t for ts in subscriptions.values() for t in ts} or partition_counts),
        }
        after = assignors.owners(coordinator_assign(strategy, partition_counts, grown))
        scenarios[f"{joining} joined"] = diff_owners(owners, after)
    return scenarios


def _ranges(partitions: list[int]) -> str:
    return ", ".join(str(p) for p in partitions) or "(nothing)"


def _topics_text(per_topic: Mapping[str, list[int]]) -> str:
    return "; ".join(f"{t}: {_ranges(ps)}" for t, ps in sorted(per_topic.items())) or "(nothing)"

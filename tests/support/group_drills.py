"""Coordinator failover drill support: the group's coordinator and its offsets over the raw 0.8 wire, what each
member reported (``MemberLog``: tests/support/tagged_member.py's lines, or a container agent's events), and
the drill's checks on it — commits acknowledged before a moment, the records delivered past a member's last
acknowledged commit (what another member may be given again), who read each partition in each generation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tests.support.server08 import Client08
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.offset_commit import (
    GroupCoordinatorRequestV0,
    OffsetFetchRequestTopic,
    OffsetFetchRequestV1,
)


def coordinator_of(ports: list[int], group: str) -> int | None:
    """The coordinator's broker id as the first live broker that answers GroupCoordinator names it."""
    for port in ports:
        try:
            with Client08(port) as client:
                answer = client.call(GroupCoordinatorRequestV0(group))
        except OSError:
            continue
        if answer.error == ErrorCode.NONE:
            return answer.node_id
    return None


def fetch_offsets(port: int, group: str, topic: str, partitions: int) -> dict[int, tuple[int, int]]:
    """OffsetFetch v1 at ``port``: {partition: (offset, error)}."""
    with Client08(port) as client:
        request = OffsetFetchRequestV1(group, [OffsetFetchRequestTopic(topic, list(range(partitions)))])
        answer = client.call(request)
    return {p.partition: (p.offset, p.error) for t in answer.topics for p in t.partitions}


def answering(port: int, group: str, topic: str, partitions: int) -> dict[int, int] | None:
    """The committed offsets when the broker at ``port`` answers OffsetFetch for ``group`` without error."""
    try:
        offsets = fetch_offsets(port, group, topic, partitions)
    except OSError:
        return None
    if any(error for _, error in offsets.values()):
        return None
    return {p: offset for p, (offset, _) in offsets.items()}


@dataclass
class MemberLog:
    """What one member process reported, each entry stamped when the drill got it (``at``)."""

    assigned: list[tuple[float, int, str, set[int]]] = field(
        default_factory=list
    )  # at, generation, member, parts
    records: list[tuple[float, int, str, int, int, str]] = field(
        default_factory=list
    )  # at, gen, member, p, o, v
    commits: list[tuple[float, int, str, dict[int, int]]] = field(
        default_factory=list
    )  # at, gen, member, offsets
    commit_failures: list[str] = field(default_factory=list)

    def partitions(self) -> set[int]:
        return self.assigned[-1][3] if self.assigned else set()

    def generation(self) -> int:
        return self.assigned[-1][1] if self.assigned else -1


def one_generation(logs: list[MemberLog], partitions: int) -> bool:
    """Every member in the same generation, the partitions assigned once each, each member committing in it."""
    return (
        len({m.generation() for m in logs}) == 1
        and sorted(p for m in logs for p in m.partitions()) == list(range(partitions))
        and all(m.commits and m.commits[-1][1] == m.generation() for m in logs)
    )


def acknowledged(logs: list[MemberLog], before: float = float("inf")) -> dict[int, int]:
    """partition -> the highest commit acknowledged to a member (stamped before ``before``)."""
    best: dict[int, int] = {}
    for member in logs:
        for at, _, _, offsets in member.commits:
            if at < before:
                for p, o in offsets.items():
                    best[p] = max(best.get(p, -1), o)
    return best


def uncommitted_tails(logs: list[MemberLog]) -> int:
    """Records each member delivered at or past its last acknowledged commit of that partition in that
    generation: what another member may be given again."""
    tails = 0
    for member in logs:
        last: dict[tuple[int, str, int], int] = {}
        for _, generation, member_id, offsets in member.commits:
            for p, o in offsets.items():
                key = (generation, member_id, p)
                last[key] = max(last.get(key, 0), o)
        tails += sum(
            1 for _, gen, mid, p, offset, _ in member.records if offset >= last.get((gen, mid, p), 0)
        )
    return tails


def redeliveries(logs: list[MemberLog]) -> tuple[int, int]:
    """(deliveries of a partition's offset already delivered, values found at more than one offset): the
    consumers' duplicates, and the producer's retried sends that the log holds twice (not the group's doing)."""
    delivered = [(p, o) for m in logs for _, _, _, p, o, _ in m.records]
    by_offset = {(p, o): v for m in logs for _, _, _, p, o, v in m.records}
    return len(delivered) - len(by_offset), len(by_offset) - len(set(by_offset.values()))


def shared_partitions(logs: list[MemberLog]) -> dict[tuple[int, int], set[str]]:
    """(generation, partition) -> member ids, where more than one member was delivered records of the
    partition in that generation (a correct group has none)."""
    readers: dict[tuple[int, int], set[str]] = {}
    for member in logs:
        for _, generation, member_id, p, _, _ in member.records:
            readers.setdefault((generation, p), set()).add(member_id)
    return {k: v for k, v in readers.items() if len(v) > 1}


def missing_commits(acked: dict[int, int], found: dict[int, int]) -> dict[int, tuple[int, int | None]]:
    """partition -> (acknowledged, found) where the coordinator's offset is behind an acknowledged commit."""
    return {p: (o, found.get(p)) for p, o in acked.items() if found.get(p, -1) < o}

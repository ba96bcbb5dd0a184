"""Client-side partition assignors of the "consumer" protocol: range and roundrobin as 0.9's Java assignors,
and a sticky assignor that moves as few partitions as it can while staying balanced. The algorithms are
``zkafka.assignment``'s; this module is the plumbing around them that the broker never sees.

An assignor sees ``partitions_per_topic`` (topic → partition count; topics without metadata are absent) and
each member's ``Subscription`` (topics and the assignor's ``user_data``) and returns, for every member, the
partitions it gets (topic → sorted partition ids). ``assign_group`` is the leader's whole step: the members'
JoinGroup metadata in, the SyncGroup assignment bytes out. Pure: no sockets, no ZooKeeper.

Every member sends ConsumerProtocolSubscription v2 (KIP-429): the v0 fields, then the partitions it owns
and the generation it owned them in; an older or newer version is read as far as v2 goes. The
``cooperative-sticky`` assignor is the only one whose ``rebalance_protocol`` is COOPERATIVE: it reads the
owned partitions from there, and hands a partition that changes owner over only in the next rebalance.

Sticky's ``user_data`` (zkafka's encoding, modelled on Kafka's later StickyAssignor v1): ``int16 version 0 ·
[ string topic · [ int32 partition ] ] · int32 generation`` — the partitions the member owned and the
generation it owned them in (-1 when unknown). When two members claim a partition, the later generation keeps
it (equal generations: the smaller member id).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple, Protocol

from zkafka.assignment import range_assignor, roundrobin_assignor, sticky_assignor
from zkafka.errors import InvalidRequestError
from zkafka.protocol.group_membership import (
    ConsumerProtocolAssignment,
    ConsumerProtocolGeneration,
    ConsumerProtocolMetadata,
    ConsumerProtocolOwnedPartitions,
    TopicPartitions,
)
from zkafka.protocol.schema import struct_class
from zkafka.protocol.types import Array, Int16, Int32, Reader

TopicPartition = tuple[str, int]
Assignment = dict[str, dict[str, list[int]]]  # member id -> topic -> partitions

EAGER = "eager"  # every member gives every partition up before it joins
COOPERATIVE = "cooperative"  # a member gives up only what the new assignment takes from it (KIP-429)
SUBSCRIPTION_VERSION = 2


class Subscription(NamedTuple):
    """What a member sent for an assignor: the topics it subscribes to and the assignor's user data."""

    topics: list[str]
    user_data: bytes = b""
    owned: list[TopicPartition] = []  # v1+: the partitions the member owns as it joins
    generation: int = -1  # v2+: the generation it owned them in


class Assignor(Protocol):
    """A partition assignor: its protocol ``name``, the user data a member sends, and ``assign``."""

    name: str
    rebalance_protocol: str

    def user_data(self, owned: Mapping[str, Iterable[int]] | None, generation: int) -> bytes: ...

    def assign(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> Assignment: ...


def _empty(subscriptions: Mapping[str, Subscription]) -> Assignment:
    return {member: {} for member in subscriptions}


def _from_owners(
    subscriptions: Mapping[str, Subscription], owners: Mapping[TopicPartition, str]
) -> Assignment:
    """Member → topic → partitions (in the order ``owners`` gives them) of a partition → member result."""
    assignment = _empty(subscriptions)
    for (topic, partition), member in owners.items():
        assignment[member].setdefault(topic, []).append(partition)
    return assignment


class _NoUserData:
    """An assignor whose members send no user data."""

    rebalance_protocol = EAGER

    def user_data(self, owned: Mapping[str, Iterable[int]] | None = None, generation: int = -1) -> bytes:
        return b""


class RangeAssignor(_NoUserData):
    """0.9's RangeAssignor: per topic, members sorted by id; member i gets ``[n·i + min(i, e), +n + (i < e))``
    with ``n = P // M`` and ``e = P % M`` (``assignment.range_assignor``, as the ZooKeeper consumers' range)."""

    name = "range"

    def assign(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> Assignment:
        members_per_topic: dict[str, list[str]] = {}
        for member, subscription in subscriptions.items():
            for topic in subscription.topics:
                members_per_topic.setdefault(topic, []).append(member)
        partitions = {t: range(count) for t, count in partitions_per_topic.items() if t in members_per_topic}
        return _from_owners(subscriptions, range_assignor.assign(members_per_topic, partitions))


class RoundRobinAssignor(_NoUserData):
    """0.9's RoundRobinAssignor: all subscribed topics sorted, their partitions in order; each goes to the next
    member (members sorted, in a circle) subscribed to its topic (``assignment.roundrobin_assignor.deal``)."""

    name = "roundrobin"

    def assign(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> Assignment:
        members = sorted(subscriptions)
        if not members:
            return _empty(subscriptions)
        topics_of = {m: set(subscriptions[m].topics) for m in members}
        ordered = all_partitions_sorted(partitions_per_topic, subscriptions)
        return _from_owners(subscriptions, roundrobin_assignor.deal(ordered, members, topics_of))


def all_partitions_sorted(
    partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
) -> list[TopicPartition]:
    """Every partition of every subscribed topic that has metadata, sorted by topic then partition."""
    topics = sorted({t for s in subscriptions.values() for t in s.topics if t in partitions_per_topic})
    return [(topic, p) for topic in topics for p in range(partitions_per_topic[topic])]


StickyUserData = struct_class(
    "StickyUserData",
    ("version", Int16),  # 0
    ("partitions", Array(TopicPartitions.SCHEMA)),
    ("generation", Int32),  # -1: unknown
    doc="What a sticky member sends in its subscription: the partitions it owns and since which generation.",
)


def encode_sticky_user_data(owned: Mapping[str, Iterable[int]] | None, generation: int = -1) -> bytes:
    topics = [TopicPartitions(t, sorted(ps)) for t, ps in sorted((owned or {}).items()) if ps]
    return StickyUserData(0, topics, generation).encode()


def decode_sticky_user_data(data: bytes | None) -> tuple[list[TopicPartition], int]:
    """The owned partitions and generation a sticky member sent; nothing for empty data.

    A later version is read as version 0 (its extra fields ignored); malformed data is InvalidRequestError.
    """
    if not data:
        return [], -1
    reader = Reader(data)
    value = StickyUserData.read_from(reader)
    if value.version < 0:
        raise InvalidRequestError(f"sticky user data has negative version {value.version}")
    return [(tp.topic, p) for tp in value.partitions for p in tp.partitions], value.generation


class StickyAssignor:
    """Balanced like roundrobin, but every member keeps what it owned unless balance requires a move
    (``assignment.sticky_assignor.sticky_assign``); a member's user data says what it owned, since when."""

    name = "sticky"
    rebalance_protocol = EAGER

    def user_data(self, owned: Mapping[str, Iterable[int]] | None = None, generation: int = -1) -> bytes:
        return encode_sticky_user_data(owned, generation)

    def assign(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> Assignment:
        members = sorted(subscriptions)
        topics_of = {m: set(subscriptions[m].topics) for m in members}
        previous = {m: decode_sticky_user_data(subscriptions[m].user_data) for m in members}
        valid = all_partitions_sorted(partitions_per_topic, subscriptions)
        owned = sticky_assignor.sticky_assign(valid, topics_of, previous)
        return _from_owners(subscriptions, {tp: m for m, tps in owned.items() for tp in sorted(tps)})


CooperativeStickyUserData = struct_class(
    "CooperativeStickyUserData",
    ("generation", Int32),
    doc="What a cooperative-sticky member sends as user data (Kafka's encoding): its generation.",
)


class CooperativeStickyAssignor:
    """KIP-429's ``cooperative-sticky``: the sticky assignment from the owned partitions each member's
    subscription carries, minus the partitions that change owner (``sticky_assignor.cooperative_assign``):
    those go to their new owner in the next rebalance, after the old owner revoked them."""

    name = "cooperative-sticky"
    rebalance_protocol = COOPERATIVE

    def user_data(self, owned: Mapping[str, Iterable[int]] | None = None, generation: int = -1) -> bytes:
        return CooperativeStickyUserData(generation).encode()

    def assign(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> Assignment:
        members = sorted(subscriptions)
        topics_of = {m: set(subscriptions[m].topics) for m in members}
        previous = {m: (subscriptions[m].owned, subscriptions[m].generation) for m in members}
        valid = all_partitions_sorted(partitions_per_topic, subscriptions)
        owned = sticky_assignor.cooperative_assign(valid, topics_of, previous)
        return _from_owners(subscriptions, {tp: m for m, tps in owned.items() for tp in sorted(tps)})


ASSIGNORS: dict[str, type] = {
    RangeAssignor.name: RangeAssignor,
    RoundRobinAssignor.name: RoundRobinAssignor,
    StickyAssignor.name: StickyAssignor,
    CooperativeStickyAssignor.name: CooperativeStickyAssignor,
}


def get_assignor(name: str) -> Assignor:
    """An assignor by protocol name (``range``, ``roundrobin``, ``sticky``, ``cooperative-sticky``); also
    accepts Kafka's class names, ``org.apache.kafka.clients.consumer.RangeAssignor`` and so on."""
    short = name.rsplit(".", 1)[-1]
    for cls in ASSIGNORS.values():
        if name == cls.name or short == cls.__name__:
            return cls()
    raise ValueError(f"unknown partition assignor {name!r} (known: {', '.join(ASSIGNORS)})")


def subscription_metadata(
    assignor: Assignor,
    topics: Iterable[str],
    owned: Mapping[str, Iterable[int]] | None = None,
    generation: int = -1,
    still_owned: bool = False,
) -> bytes:
    """The JoinGroup protocol metadata (ConsumerProtocolSubscription v2) a member sends for ``assignor``:
    ``owned`` goes to the assignor's user data, and to the owned partitions if the member ``still_owned``
    them as it joins (a cooperative member; an eager one gave everything up and says it owns nothing)."""
    head = ConsumerProtocolMetadata(
        SUBSCRIPTION_VERSION, sorted(set(topics)), assignor.user_data(owned, generation)
    )
    reported = (owned or {}) if still_owned else {}
    owned_partitions = [TopicPartitions(t, sorted(ps)) for t, ps in sorted(reported.items()) if ps]
    return (
        head.encode()
        + ConsumerProtocolOwnedPartitions(owned_partitions).encode()
        + ConsumerProtocolGeneration(generation).encode()
    )


def decode_subscription(data: bytes) -> Subscription:
    """A member's ConsumerProtocolSubscription, any version (what a version after v2 appends is ignored)."""
    reader = Reader(data)
    head = ConsumerProtocolMetadata.read_from(reader)
    if head.version < 0:
        raise InvalidRequestError(f"consumer subscription has negative version {head.version}")
    owned: list[TopicPartition] = []
    generation = -1
    if head.version >= 1 and reader.remaining:
        value = ConsumerProtocolOwnedPartitions.read_from(reader)
        owned = [(tp.topic, p) for tp in value.owned_partitions for p in tp.partitions]
    if head.version >= 2 and reader.remaining:
        generation = ConsumerProtocolGeneration.read_from(reader).generation_id
    return Subscription(list(head.subscription or []), head.user_data or b"", owned, generation)


def assign_group(
    assignor: Assignor, partitions_per_topic: Mapping[str, int], members_metadata: Mapping[str, bytes]
) -> dict[str, bytes]:
    """The leader's step: members' JoinGroup metadata → each member's SyncGroup assignment bytes."""
    subscriptions = {member: decode_subscription(data) for member, data in members_metadata.items()}
    result = assignor.assign(partitions_per_topic, subscriptions)
    return {member: encode_assignment(result.get(member, {})) for member in members_metadata}


def encode_assignment(partitions: Mapping[str, Iterable[int]], user_data: bytes = b"") -> bytes:
    """A ``ConsumerProtocolAssignment`` (version 0) of topic → partitions."""
    topics = [TopicPartitions(t, sorted(ps)) for t, ps in sorted(partitions.items())]
    return ConsumerProtocolAssignment(0, topics, user_data).encode()


def decode_assignment(data: bytes | None) -> dict[str, list[int]]:
    """Topic → partitions of a SyncGroup assignment (empty bytes: nothing)."""
    if not data:
        return {}
    value = ConsumerProtocolAssignment.decode(data)
    return {tp.topic: list(tp.partitions) for tp in value.partitions}


def owners(assignment: Mapping[str, Mapping[str, Iterable[int]]]) -> dict[TopicPartition, str]:
    """Partition → member of an assignment."""
    return {(t, p): member for member, topics in assignment.items() for t, ps in topics.items() for p in ps}


def partitions_moved(
    previous: Mapping[str, Mapping[str, Iterable[int]]], current: Mapping[str, Mapping[str, Iterable[int]]]
) -> int:
    """Partitions owned before and now owned by another member (a rebalance's revocations that matter)."""
    before, after = owners(previous), owners(current)
    return sum(1 for tp, member in after.items() if tp in before and before[tp] != member)

"""A group member's offset requests (OffsetCommit v2, OffsetFetch v1) and what their answers say. Pure: the
``ConsumerCoordinator`` sends them to the group's coordinator and retries. The 0.8 line only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from zkafka.consumer.group.subscription import OffsetAndMetadata, TopicPartition
from zkafka.protocol.offset_commit import (
    DEFAULT_RETENTION,
    OffsetCommitRequestPartitionV0,
    OffsetCommitRequestTopicV0,
    OffsetCommitRequestV2,
    OffsetFetchRequestTopic,
    OffsetFetchRequestV1,
)


def offset_commit_request(
    group_id: str, generation: int, member_id: str, offsets: Mapping[TopicPartition, OffsetAndMetadata]
) -> OffsetCommitRequestV2:
    """OffsetCommit v2 of ``offsets`` (partitions in order, grouped by topic) in a generation (-1 and member
    ``""``: a commit from outside the group's management)."""
    by_topic: dict[str, list] = {}
    for tp, value in sorted(offsets.items()):
        by_topic.setdefault(tp.topic, []).append(
            OffsetCommitRequestPartitionV0(tp.partition, value.offset, value.metadata)
        )
    return OffsetCommitRequestV2(
        group_id,
        generation,
        member_id,
        DEFAULT_RETENTION,
        [OffsetCommitRequestTopicV0(t, ps) for t, ps in by_topic.items()],
    )


def offset_fetch_request(group_id: str, partitions: Iterable[TopicPartition]) -> OffsetFetchRequestV1:
    """OffsetFetch v1 of ``partitions``, grouped by topic."""
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return OffsetFetchRequestV1(group_id, [OffsetFetchRequestTopic(t, ps) for t, ps in by_topic.items()])


def committed_offsets(response: Any) -> tuple[dict[TopicPartition, OffsetAndMetadata], set[int]]:
    """An OffsetFetch answer's committed offsets (partitions with none left out) and its error codes."""
    out: dict[TopicPartition, OffsetAndMetadata] = {}
    errors = set()
    for t in response.topics:
        for p in t.partitions:
            if p.error:
                errors.add(p.error)
            elif p.offset >= 0:
                out[TopicPartition(t.topic, p.partition)] = OffsetAndMetadata(p.offset, p.metadata or "")
    return out, errors

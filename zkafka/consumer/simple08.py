"""SimpleConsumer08: 0.8's SimpleConsumer — Fetch, ListOffsets, OffsetCommit/OffsetFetch v0 and Metadata
requests to one broker over one blocking channel, reconnecting and retrying once after a socket error.

Offsets are logical: a fetch from offset X gets the messages from X on (a compressed wrapper may hold some
before X; they are skipped) and the consumer asks next for ``FetchedPartition.next_offset``. A fetch
answer is raw log bytes cut at ``max_bytes``, so its last entry may be partial: it is not a message, and
the next fetch starts where the whole entries end. Long polls: a fetch with ``max_wait_ms`` and
``min_bytes`` is held by the broker until that many bytes are there or the time is up.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from zkafka.client08.api_versions import version_for
from zkafka.client08.channel import broker_channel, check_error
from zkafka.config08 import DEFAULT_FETCH_MESSAGE_MAX_BYTES
from zkafka.consumer.fetched_partition08 import FetchedPartition
from zkafka.errors import UnknownError, UnsupportedVersionError
from zkafka.protocol import EARLIEST_TIME, LATEST_TIME
from zkafka.protocol.api_keys import FETCH, LIST_OFFSETS
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.fetch import (
    CONSUMER_REPLICA_ID,
    FetchRequestPartition,
    FetchRequestTopic,
    FetchRequestV0,
    fetch_request,
)
from zkafka.protocol.metadata import MetadataRequestV0
from zkafka.protocol.offset_commit import (
    OffsetCommitRequestPartitionV0,
    OffsetCommitRequestTopicV0,
    OffsetCommitRequestV0,
    OffsetFetchRequestTopic,
    OffsetFetchRequestV0,
)
from zkafka.protocol.offsets import (
    ListOffsetsRequestPartition,
    ListOffsetsRequestTopic,
    ListOffsetsRequestV0,
    list_offsets_request,
)

log = logging.getLogger(__name__)

DEFAULT_FETCH_SIZE = DEFAULT_FETCH_MESSAGE_MAX_BYTES
NO_OFFSET = -1  # what OffsetFetch answers for a partition nothing was committed for


class OffsetAndMetadata(NamedTuple):
    """A committed offset (NO_OFFSET when there is none) and the metadata string committed with it."""

    offset: int
    metadata: str


class SimpleConsumer08:
    """A connection to one 0.8 broker for fetches, offsets and metadata; reconnects and retries once.

    ``socket_timeout_ms`` bounds every answer, long polls included (it must exceed their ``max_wait_ms``).
    """

    def __init__(
        self,
        host: str,
        port: int,
        socket_timeout_ms: int = 30000,
        buffer_size: int = 64 * 1024,
        client_id: str = "",
        *,
        api_version_request: bool = True,
        read_batches: bool = True,
        secure: Any = None,
    ) -> None:
        self.host = host
        self.read_batches = read_batches  # fetch at the negotiated version (v4+: batches as stored), else v0
        self.port = port
        self.client_id = client_id
        self.socket_timeout_ms = socket_timeout_ms
        self.channel = broker_channel(
            host,
            port,
            client_id,
            socket_timeout_ms=socket_timeout_ms,
            receive_buffer=buffer_size,
            api_version_request=api_version_request and read_batches,
            secure=secure,
        )

    def __repr__(self) -> str:
        return f"SimpleConsumer08({self.host}:{self.port})"

    def close(self) -> None:
        self.channel.close()

    def __enter__(self) -> SimpleConsumer08:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _request(self, request: Any) -> Any:
        return self.channel.request(request, retries=1)

    # -- fetching ------------------------------------------------------------------------------------------

    def fetch(
        self,
        topic: str,
        partition: int,
        offset: int,
        max_bytes: int = DEFAULT_FETCH_SIZE,
        max_wait_ms: int = 0,
        min_bytes: int = 0,
    ) -> FetchedPartition:
        """Fetch one partition from ``offset``; its error code raises its exception."""
        (fetched,) = self.multifetch([(topic, partition, offset, max_bytes)], max_wait_ms, min_bytes)
        fetched.check_error()
        return fetched

    def multifetch(
        self,
        fetches: Iterable[tuple[str, int, int, int]],
        max_wait_ms: int = 0,
        min_bytes: int = 0,
    ) -> list[FetchedPartition]:
        """One Fetch request for several ``(topic, partition, offset, max_bytes)``; the answers in the same
        order, each carrying its own error (raised when iterated or checked)."""
        fetches = list(fetches)
        response = self._request(self._fetch_request(fetches, max_wait_ms, min_bytes))
        return self._fetched(fetches, response)

    def send_fetch(
        self, fetches: Iterable[tuple[str, int, int, int]], max_wait_ms: int = 0, min_bytes: int = 0
    ) -> None:
        """Send ``multifetch``'s request without waiting for its answer (``receive_fetch`` reads it): a fetch
        ahead, which the broker answers while the caller still works on the last answer. No retry."""
        self.channel.send(self._fetch_request(list(fetches), max_wait_ms, min_bytes))

    def receive_fetch(self, fetches: Iterable[tuple[str, int, int, int]]) -> list[FetchedPartition]:
        """The answers to the oldest fetch sent with ``send_fetch`` (``fetches`` as it was sent)."""
        return self._fetched(list(fetches), self.channel.receive())

    def _fetch_request(
        self, fetches: list[tuple[str, int, int, int]], max_wait_ms: int, min_bytes: int
    ) -> Any:
        if 0 < self.socket_timeout_ms <= max_wait_ms:
            raise ValueError(
                f"max_wait_ms {max_wait_ms} must be below the socket timeout of {self.socket_timeout_ms} ms"
            )
        version = version_for(self.channel, FETCH) if self.read_batches else 0
        if version > 0:
            return fetch_request(version, fetches, max_wait_ms=max_wait_ms, min_bytes=min_bytes)
        by_topic: dict[str, list] = {}
        for topic, partition, offset, max_bytes in fetches:
            by_topic.setdefault(topic, []).append(FetchRequestPartition(partition, offset, max_bytes))
        return FetchRequestV0(
            CONSUMER_REPLICA_ID,
            max_wait_ms,
            min_bytes,
            [FetchRequestTopic(topic, parts) for topic, parts in by_topic.items()],
        )

    def _fetched(self, fetches: list[tuple[str, int, int, int]], response: Any) -> list[FetchedPartition]:
        """The answer of each fetch. A fetch over a client quota is answered with no partitions (Kafka 2.x,
        KIP-219, at every version): each then reads nothing, its high watermark unknown (-1), and the
        broker reads the next request once the throttle time has passed."""
        answers = {(t.topic, p.partition): p for t in response.topics for p in t.partitions}
        out = []
        for topic, partition, offset, max_bytes in fetches:
            answer = answers.get((topic, partition))
            if answer is None:
                out.append(FetchedPartition(topic, partition, offset, ErrorCode.NONE, -1, b"", max_bytes))
            else:
                out.append(
                    FetchedPartition(
                        topic,
                        partition,
                        offset,
                        answer.error,
                        answer.high_watermark,
                        answer.message_set,
                        max_bytes,
                    )
                )
        return out

    # -- offsets -------------------------------------------------------------------------------------------

    def get_offsets_before(self, topic: str, partition: int, time: int, max_offsets: int = 1) -> list[int]:
        """Offsets of segment starts before ``time`` (ms; -1 latest, -2 earliest), newest first."""
        request = ListOffsetsRequestV0(
            CONSUMER_REPLICA_ID,
            [ListOffsetsRequestTopic(topic, [ListOffsetsRequestPartition(partition, time, max_offsets)])],
        )
        answer = _only_partition(self._request(request), topic, partition)
        check_error(answer.error, f"offsets of {topic}-{partition} before {time}")
        return list(answer.offsets)

    def offset_for_time(self, topic: str, partition: int, time: int) -> tuple[int, int] | None:
        """ListOffsets v1+ (KIP-79, what ``offsetsForTimes`` sends): ``(offset, timestamp)`` of the first record
        whose timestamp is at least ``time`` (ms; -1 the log end, -2 its start, timestamp -1), None if no
        record is that late. UnsupportedVersionError from a broker that speaks only v0;
        UnsupportedForMessageFormatError for a timestamp on a log of message format v0."""
        version = version_for(self.channel, LIST_OFFSETS)
        if version == 0:
            raise UnsupportedVersionError(f"{self.host}:{self.port} answers ListOffsets v0 only")
        request = list_offsets_request(version, CONSUMER_REPLICA_ID, [(topic, partition, time)])
        answer = _only_partition(self._request(request), topic, partition)
        check_error(answer.error, f"the offset of {topic}-{partition} at time {time}")
        return None if answer.offset < 0 else (answer.offset, answer.timestamp)

    def earliest_offset(self, topic: str, partition: int) -> int:
        return self.get_offsets_before(topic, partition, EARLIEST_TIME)[0]

    def latest_offset(self, topic: str, partition: int) -> int:
        """The high watermark: the offset the next message will get (for consumers)."""
        return self.get_offsets_before(topic, partition, LATEST_TIME)[0]

    def commit_offsets(self, group: str, offsets: Mapping[tuple[str, int], int | tuple[int, str]]) -> None:
        """OffsetCommit v0 (the broker keeps them in ZooKeeper): ``{(topic, partition): offset}`` or
        ``(offset, metadata)`` values. The first partition error raises, naming every failed partition."""
        by_topic: dict[str, list] = {}
        for (topic, partition), value in offsets.items():
            offset, metadata = value if isinstance(value, tuple) else (value, "")
            by_topic.setdefault(topic, []).append(OffsetCommitRequestPartitionV0(partition, offset, metadata))
        request = OffsetCommitRequestV0(
            group, [OffsetCommitRequestTopicV0(t, ps) for t, ps in by_topic.items()]
        )
        response = self._request(request)
        failed = [(t.topic, p.partition, p.error) for t in response.topics for p in t.partitions if p.error]
        if failed:
            topic, partition, error = failed[0]
            names = ", ".join(f"{t}-{p}" for t, p, _ in failed)
            check_error(error, f"committing offsets of group {group!r} for {names}")

    def fetch_offsets(
        self, group: str, partitions: Iterable[tuple[str, int]]
    ) -> dict[tuple[str, int], OffsetAndMetadata]:
        """OffsetFetch v0: the committed ``(offset, metadata)`` per partition, ``NO_OFFSET`` where nothing was
        committed (v0 answers that with UNKNOWN_TOPIC_OR_PARTITION); other errors raise."""
        by_topic: dict[str, list[int]] = {}
        for topic, partition in partitions:
            by_topic.setdefault(topic, []).append(partition)
        request = OffsetFetchRequestV0(group, [OffsetFetchRequestTopic(t, ps) for t, ps in by_topic.items()])
        out = {}
        for answer_topic in self._request(request).topics:
            for p in answer_topic.partitions:
                missing = p.offset == NO_OFFSET and p.error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                if not missing:
                    check_error(
                        p.error,
                        f"fetching the offset of group {group!r} for {answer_topic.topic}-{p.partition}",
                    )
                out[(answer_topic.topic, p.partition)] = OffsetAndMetadata(p.offset, p.metadata or "")
        return out

    # -- metadata ------------------------------------------------------------------------------------------

    def topic_metadata(self, topics: Iterable[str] = ()) -> Any:
        """The broker's MetadataResponseV0 for ``topics`` (all topics when empty)."""
        return self._request(MetadataRequestV0(list(topics)))


def _only_partition(response: Any, topic: str, partition: int) -> Any:
    for answer_topic in response.topics:
        if answer_topic.topic == topic:
            for answer in answer_topic.partitions:
                if answer.partition == partition:
                    return answer
    raise UnknownError(f"the broker's answer names no {topic}-{partition}")

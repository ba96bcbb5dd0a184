"""The cluster as a 0.9 group consumer sees it: topic metadata (refreshed every ``metadata.max.age.ms`` and
on demand), each partition's leader, one channel per broker for ListOffsets, and requests any broker can
answer (GroupCoordinator, Metadata, ListGroups). Built on the 0.8 clients' metadata cache and channels.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import Any

from zkafka.client08.channel import broker_channel, check_error
from zkafka.client08.topic_metadata import BrokerEndPoint, TopicMetadataCache, ask_order, parse_broker_list
from zkafka.consumer.group.subscription import TopicPartition
from zkafka.errors import BrokerNotAvailableError, KafkaError
from zkafka.network.client import BlockingChannel
from zkafka.protocol.fetch import CONSUMER_REPLICA_ID
from zkafka.protocol.offsets import ListOffsetsRequestPartition, ListOffsetsRequestTopic, ListOffsetsRequestV0

log = logging.getLogger(__name__)


class Cluster:
    """Metadata of the topics a consumer needs and channels to their brokers."""

    def __init__(
        self,
        bootstrap: str | Iterable[str],
        client_id: str = "",
        *,
        request_timeout_ms: int = 40000,
        metadata_max_age_ms: int = 300000,
        lookup_timeout_ms: int | None = None,
        secure: Any = None,
    ) -> None:
        self.bootstrap = parse_broker_list(bootstrap if isinstance(bootstrap, str) else list(bootstrap))
        self.client_id = client_id
        self.secure = secure  # TLS and SASL for each connection (``client_security.secure_of``)
        self.request_timeout_ms = request_timeout_ms
        self.metadata_max_age_ms = metadata_max_age_ms
        # how long one broker may take over a question any broker answers at once (Metadata,
        # GroupCoordinator) before the next is asked: a frozen broker must not hold the member up
        self.lookup_timeout_ms = lookup_timeout_ms or request_timeout_ms
        self.metadata = TopicMetadataCache(self.bootstrap, client_id, self.lookup_timeout_ms, secure)
        self.all_topics: set[str] = set()  # every topic of the last all-topics answer
        self._wanted: set[str] = set()
        self._all = False
        self._refreshed_at = float("-inf")
        self._refresh_requested = True
        self._channels: dict[int, BlockingChannel] = {}

    def channel(self, host: str, port: int, timeout_ms: int | None = None) -> BlockingChannel:
        """A new channel to ``host:port`` (its owner closes it), waiting ``timeout_ms`` (else the request
        timeout) for an answer."""
        timeout_ms = timeout_ms or self.request_timeout_ms
        connect_ms = min(timeout_ms, self.lookup_timeout_ms)
        return broker_channel(
            host, port, self.client_id, socket_timeout_ms=timeout_ms, connect_timeout_ms=connect_ms,
            secure=self.secure,
        )  # fmt: skip

    # -- metadata ------------------------------------------------------------------------------------------

    def want(self, topics: Iterable[str], all_topics: bool = False) -> None:
        """The topics to keep metadata for (``all_topics`` for a pattern subscription); a refresh follows."""
        topics = set(topics)
        if topics != self._wanted or all_topics != self._all:
            self._wanted, self._all = topics, all_topics
            self._refresh_requested = True

    def request_refresh(self) -> None:
        self._refresh_requested = True

    def refresh_due(self) -> float:
        """Seconds until the next refresh (0: now)."""
        if self._refresh_requested:
            return 0.0
        return max(0.0, self._refreshed_at + self.metadata_max_age_ms / 1000.0 - time.monotonic())

    def maybe_refresh(self) -> bool:
        """Refresh if requested or older than ``metadata.max.age.ms``; True if it did."""
        if self.refresh_due() > 0 or not (self._wanted or self._all):
            return False
        try:
            response = self.metadata.update([] if self._all else sorted(self._wanted))
        except KafkaError as exc:
            log.warning("metadata refresh failed: %s", exc)
            self._refreshed_at = time.monotonic()
            return False
        if self._all:
            self.all_topics = {t.topic for t in response.topics}
        known = {t.topic for t in response.topics}
        for topic in list(self.metadata.topics):
            if topic not in known and topic not in self._wanted:
                del self.metadata.topics[topic]
        self._refreshed_at = time.monotonic()
        self._refresh_requested = False
        return True

    def partition_counts(self, topics: Iterable[str]) -> dict[str, int]:
        """Topic -> partition count of the topics with metadata (what an assignor sees)."""
        out = {}
        for topic in topics:
            meta = self.metadata.topics.get(topic)
            if meta is not None and meta.partitions:
                out[topic] = len(meta.partitions)
        return out

    def ensure_topics(self, topics: Iterable[str]) -> dict[str, int]:
        """Partition counts of ``topics``, asking the cluster once for any missing."""
        topics = set(topics)
        counts = self.partition_counts(topics)
        if topics - counts.keys():
            try:
                self.metadata.update(sorted(topics - counts.keys()))
            except KafkaError as exc:
                log.warning("metadata for %s failed: %s", sorted(topics - counts.keys()), exc)
            counts = self.partition_counts(topics)
        return counts

    def leader(self, tp: TopicPartition) -> BrokerEndPoint | None:
        return self.metadata.leader(tp.topic, tp.partition)

    # -- requests ------------------------------------------------------------------------------------------

    def any_broker(self, request: Any) -> Any:
        """``request`` answered by the first broker that answers (known brokers and the bootstrap list,
        shuffled, those that failed last: ``ask_order``), each given ``lookup_timeout_ms`` to connect and
        answer; BrokerNotAvailableError when none does."""
        known = [(b.host, b.port) for b in self.metadata.brokers.values()]
        last: BaseException | None = None
        for host, port in ask_order(known + self.bootstrap, self.metadata.failed):
            channel = self.channel(host, port, self.lookup_timeout_ms)
            try:
                response = channel.request(request, retries=0)
                self.metadata.failed.pop((host, port), None)
                return response
            except (OSError, KafkaError) as exc:
                self.failed(host, port)
                last = exc
            finally:
                channel.close()
        raise BrokerNotAvailableError(f"no broker answered {type(request).__name__}: {last}")

    def failed(self, host: str, port: int) -> None:
        """A request to ``host:port`` failed: the lookups any broker answers ask it after the others."""
        self.metadata.failed[(host, port)] = time.monotonic()

    def list_offset(self, tp: TopicPartition, when: int) -> int:
        """The offset before ``when`` (-1 latest, -2 earliest) from the partition's leader."""
        leader = self.leader(tp)
        if leader is None:
            self.request_refresh()
            raise BrokerNotAvailableError(f"{tp.topic}-{tp.partition} has no known leader")
        channel = self._channels.get(leader.id)
        if channel is None or (channel.host, channel.port) != (leader.host, leader.port):
            if channel is not None:
                channel.close()
            channel = self._channels[leader.id] = self.channel(leader.host, leader.port)
        request = ListOffsetsRequestV0(
            CONSUMER_REPLICA_ID,
            [ListOffsetsRequestTopic(tp.topic, [ListOffsetsRequestPartition(tp.partition, when, 1)])],
        )
        try:
            response = channel.request(request, retries=1)
        except OSError:
            self.request_refresh()
            raise
        answer = response.topics[0].partitions[0]
        if answer.error:
            self.request_refresh()
        check_error(answer.error, f"offsets of {tp.topic}-{tp.partition}")
        return answer.offsets[0] if answer.offsets else 0

    def close(self) -> None:
        for channel in self._channels.values():
            channel.close()
        self._channels.clear()

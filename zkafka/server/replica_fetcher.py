"""Replica fetchers: how a follower copies its leaders' logs (0.8.2's ReplicaFetcherManager and ReplicaFetcherThread).

Per leader broker there are ``num.replica.fetchers`` fetchers (a partition goes to fetcher
``abs(31 * hash(topic) + partition) % n``), each one greenlet with one connection (client id
``ReplicaFetcherThread-<fetcher>-<leader>``). A round is one long-poll Fetch with this broker's id as replica
id, ``replica.fetch.wait.max.ms``, ``replica.fetch.min.bytes`` and, per partition, its log end offset and
``replica.fetch.max.bytes``. What comes back is appended with the leader's offsets kept; the follower's high
watermark becomes min(its LEO, the leader's). OFFSET_OUT_OF_RANGE: the leader's log end is asked for (its
latest offset with this broker's replica id); a leader behind us means truncating to it (unless
``unclean.leader.election.enable`` (the topic's, else the broker's) is false and it is behind our high
watermark: then the broker halts, one line naming the partition and the offsets, as 0.8.2's does), a leader
whose log starts after ours means starting again, empty, at its earliest offset. Other errors and lost
connections back off and wait for the controller. A response for a partition that moved meanwhile (removed, or re-added at
another offset) is dropped.

A partition added after a leader change is first truncated by leader epoch (KIP-101): one
OffsetForLeaderEpoch v3 to the leader names the follower's latest epoch, and the log is cut where the leader
says that epoch ends, or where it ends here if earlier (KIP-279); to the high watermark when the follower
knows no epoch or the leader none.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

import gevent
import gevent.event

from zkafka.client08.channel import broker_channel
from zkafka.client08.fetcher_manager import fetcher_id
from zkafka.network.channel_builders import InterBrokerSecurity
from zkafka.protocol import EARLIEST_TIME, LATEST_TIME
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.fetch import FetchRequestPartition, FetchRequestTopic, FetchRequestV0
from zkafka.protocol.leader_epoch import OFFSET_FOR_LEADER_EPOCH_APIS
from zkafka.protocol.offsets import ListOffsetsRequestPartition, ListOffsetsRequestTopic, ListOffsetsRequestV0
from zkafka.protocol.versioned import make
from zkafka.utils.hub import end_greenlets

log = logging.getLogger(__name__)

TopicPartition = tuple[str, int]
BACKOFF_S = 0.2
SHUTDOWN_TIMEOUT_S = 5.0  # for the fetchers' greenlets to end at shutdown


@dataclass(frozen=True)
class FetcherSettings:
    """The ``replica.*`` keys a fetcher uses."""

    broker_id: int
    num_fetchers: int = 1
    max_bytes: int = 1024 * 1024
    max_wait_ms: int = 500
    min_bytes: int = 1
    socket_timeout_ms: int = 30000
    receive_buffer: int = 64 * 1024
    security: InterBrokerSecurity = InterBrokerSecurity()  # the inter-broker listener's TLS and SASL

    @classmethod
    def from_config(cls, config: Any) -> FetcherSettings:
        return cls(
            config["broker.id"],
            config["num.replica.fetchers"],
            config["replica.fetch.max.bytes"],
            config["replica.fetch.wait.max.ms"],
            config["replica.fetch.min.bytes"],
            config["replica.socket.timeout.ms"],
            config["replica.socket.receive.buffer.bytes"],
            InterBrokerSecurity.from_config(config),
        )


class FollowerLogs(Protocol):
    """What fetchers do to the follower's logs (the replica manager)."""

    def append_as_follower(self, topic: str, partition: int, message_set: Any, leader_hw: int) -> int:
        """Append what the leader sent; the new log end offset."""

    def truncate_follower(self, topic: str, partition: int, offset: int, *, restart: bool = False) -> int:
        """Truncate to ``offset`` (``restart``: empty the log and start at it); the new log end offset."""

    def partition(self, topic: str, partition: int) -> Any:
        """The hosted Partition (its epochs and truncation offset), or None."""

    on_log_failure: Any  # halts the broker, given the reason


class ReplicaFetcher:
    """One fetcher greenlet copying a set of partitions from one leader."""

    def __init__(
        self, settings: FetcherSettings, leader: tuple[int, str, int], index: int, logs: FollowerLogs
    ) -> None:
        self.settings = settings
        self.leader_id, host, port = leader
        self.name = f"ReplicaFetcherThread-{index}-{self.leader_id}"
        self.logs = logs
        self.partitions: dict[TopicPartition, int] = {}  # -> next offset to fetch
        self.truncating: set[TopicPartition] = set()  # to truncate by epoch before fetching
        self._changed = gevent.event.Event()
        self._stopped = False
        self.channel = broker_channel(
            host,
            port,
            self.name,
            socket_timeout_ms=settings.socket_timeout_ms,
            receive_buffer=settings.receive_buffer,
            secure=None if settings.security.plaintext else settings.security.secure,
        )
        self.greenlet = gevent.spawn(self._run)
        self.fetched_bytes = 0

    def add(self, offsets: dict[TopicPartition, int], truncate: bool = False) -> None:
        self.partitions.update(offsets)
        if truncate:
            self.truncating.update(offsets)
        self._changed.set()

    def remove(self, partitions: Iterable[TopicPartition]) -> None:
        for tp in partitions:
            self.partitions.pop(tp, None)
            self.truncating.discard(tp)

    def stop(self) -> None:
        self._stopped = True
        self._changed.set()
        self.partitions.clear()
        self.channel.close()  # a fetch under way ends first (within max wait); its answer is dropped

    def _run(self) -> None:
        while not self._stopped:
            if not self.partitions:
                self._changed.clear()
                self._changed.wait()
                continue
            requested = dict(self.partitions)
            try:
                if self.truncating:
                    self._truncate_by_epoch()
                    continue
                response = self.channel.request(self._request(requested), retries=0)
            except (OSError, EOFError) as exc:
                if self._stopped:
                    return
                log.info("%s: fetch from broker %d failed: %s", self.name, self.leader_id, exc)
                self.channel.disconnect()
                gevent.sleep(BACKOFF_S)
                continue
            except Exception:
                if self._stopped:
                    return
                log.exception("%s: fetch failed", self.name)
                gevent.sleep(BACKOFF_S)
                continue
            if not self._process(requested, response):
                gevent.sleep(BACKOFF_S)

    def _request(self, requested: dict[TopicPartition, int]) -> Any:
        by_topic: dict[str, list] = {}
        for (topic, partition), offset in sorted(requested.items()):
            by_topic.setdefault(topic, []).append(
                FetchRequestPartition(partition, offset, self.settings.max_bytes)
            )
        settings = self.settings
        return FetchRequestV0(
            settings.broker_id,
            settings.max_wait_ms,
            settings.min_bytes,
            [FetchRequestTopic(topic, parts) for topic, parts in by_topic.items()],
        )

    def _process(self, requested: dict[TopicPartition, int], response: Any) -> bool:
        """Apply a response; False when every partition failed (then the fetcher backs off)."""
        progress = False
        for topic_data in response.topics:
            for data in topic_data.partitions:
                tp = (topic_data.topic, data.partition)
                offset = requested.get(tp)
                if offset is None or self.partitions.get(tp) != offset:
                    continue  # removed or moved while the fetch was out
                try:
                    if data.error == ErrorCode.NONE:
                        message_set = data.message_set
                        end = self.logs.append_as_follower(tp[0], tp[1], message_set, data.high_watermark)
                        self.fetched_bytes += len(message_set)
                        self.partitions[tp] = end
                        progress = True
                    elif data.error == ErrorCode.OFFSET_OUT_OF_RANGE:
                        self.partitions[tp] = self._reset_offset(tp, offset)
                        progress = True
                    else:
                        log.debug("%s: %s-%d: error %d", self.name, tp[0], tp[1], data.error)
                except Exception as exc:  # a corrupt set, a log error: keep the other partitions going
                    log.error("%s: %s-%d at offset %d: %s", self.name, tp[0], tp[1], offset, exc)
        return progress

    def _truncate_by_epoch(self) -> None:
        """Truncate the partitions added after a leader change where the leader says our latest epoch ends."""
        hosted = {tp: self.logs.partition(*tp) for tp in self.truncating}
        self.truncating.clear()
        asked = {tp: p.epochs.latest_epoch for tp, p in hosted.items() if p is not None}
        try:
            answers = self._epoch_end_offsets({tp: e for tp, e in asked.items() if e >= 0})
        except BaseException:
            self.truncating.update(tp for tp in hosted if tp in self.partitions)  # asked again next round
            raise
        for tp, partition in hosted.items():
            if partition is None or tp not in self.partitions or tp in self.truncating:
                continue  # removed (or added again) while the request was out
            epoch, end = answers.get(tp, (-1, -1))
            offset = partition.epoch_truncation_offset(epoch, end)
            log.info(
                "%s: %s-%d: leader %d says epoch %d ends at %d (ours: %d, LEO %d, HW %d): truncating to %d",
                self.name, *tp, self.leader_id, epoch, end, asked.get(tp, -1), partition.log_end_offset,
                partition.high_watermark, offset,
            )  # fmt: skip
            self.partitions[tp] = self.logs.truncate_follower(tp[0], tp[1], offset)

    def _epoch_end_offsets(self, epochs: dict[TopicPartition, int]) -> dict[TopicPartition, tuple[int, int]]:
        """Ask the leader (OffsetForLeaderEpoch v3) where each epoch ends: (its epoch, end offset) each."""
        if not epochs:
            return {}
        by_topic: dict[str, list] = {}
        for (topic, partition), epoch in sorted(epochs.items()):
            by_topic.setdefault(topic, []).append(
                {"partition": partition, "current_leader_epoch": -1, "leader_epoch": epoch}
            )
        request_class = OFFSET_FOR_LEADER_EPOCH_APIS[3][0]
        topics = [{"topic": t, "partitions": parts} for t, parts in by_topic.items()]
        response = self.channel.request(
            make(request_class, replica_id=self.settings.broker_id, topics=topics)
        )
        answers = {}
        for topic in response.topics:
            for p in topic.partitions:
                if p.error == ErrorCode.NONE:
                    answers[(topic.topic, p.partition)] = (p.leader_epoch, p.end_offset)
                else:
                    log.info(
                        "%s: %s-%d: OffsetForLeaderEpoch error %d",
                        self.name,
                        topic.topic,
                        p.partition,
                        p.error,
                    )
        return answers

    def _reset_offset(self, tp: TopicPartition, offset: int) -> int:
        """After OFFSET_OUT_OF_RANGE: match the leader's log (0.8.2's ``handleOffsetOutOfRange``)."""
        leader_end = self._leader_offset(tp, LATEST_TIME)
        if leader_end < offset and self._truncation_not_allowed(tp, leader_end, offset):
            return offset
        if leader_end < offset:
            log.warning(
                "%s: %s-%d: the leader's log ends at %d, before ours (%d): truncating",
                self.name,
                *tp,
                leader_end,
                offset,
            )
            return self.logs.truncate_follower(tp[0], tp[1], leader_end)
        start = self._leader_offset(tp, EARLIEST_TIME)
        log.warning("%s: %s-%d: %d is before the leader's log start %d", self.name, *tp, offset, start)
        return self.logs.truncate_follower(tp[0], tp[1], start, restart=True)

    def _truncation_not_allowed(self, tp: TopicPartition, leader_end: int, offset: int) -> bool:
        """With unclean election off, a leader whose log ends below our high watermark lost committed messages:
        halt rather than truncate them away (0.8.2's ReplicaFetcherThread; the topic's override counts, as in
        Kafka's LogConfig); True when halted."""
        hosted = self.logs.partition(*tp)
        if (
            hosted is None
            or hosted.log.config.unclean_leader_election_enable
            or leader_end >= hosted.high_watermark
        ):
            return False
        reason = (
            f"Halting because log truncation is not allowed for {tp[0]}-{tp[1]}: leader {self.leader_id}'s latest"
            f" offset {leader_end} is below replica {self.settings.broker_id}'s high watermark"
            f" {hosted.high_watermark} (log end {offset})"
        )
        if self.logs.on_log_failure is not None:
            self.logs.on_log_failure(reason)
        return True

    def _leader_offset(self, tp: TopicPartition, time: int) -> int:
        request = ListOffsetsRequestV0(
            self.settings.broker_id,
            [ListOffsetsRequestTopic(tp[0], [ListOffsetsRequestPartition(tp[1], time, 1)])],
        )
        answer = self.channel.request(request, retries=0).topics[0].partitions[0]
        if answer.error or not answer.offsets:
            raise RuntimeError(
                f"offsets of {tp[0]}-{tp[1]} from broker {self.leader_id}: error {answer.error}"
            )
        return answer.offsets[0]


class ReplicaFetcherManager:
    """The fetchers of one follower broker, by (leader, fetcher index); idle fetchers are stopped."""

    def __init__(self, settings: FetcherSettings, logs: FollowerLogs) -> None:
        self.settings = settings
        self.logs = logs
        self._fetchers: dict[tuple[tuple[int, str, int], int], ReplicaFetcher] = {}
        self._owner: dict[TopicPartition, tuple[tuple[int, str, int], int]] = {}
        self._retired: list[gevent.Greenlet] = []  # stopped fetchers' greenlets, maybe ending a request

    def add_partitions(
        self, partitions: dict[TopicPartition, tuple[tuple[int, str, int], int]], truncate: bool = False
    ) -> None:
        """Fetch each ``(topic, partition)`` from ``(leader (id, host, port), offset)``, truncated by epoch
        first with ``truncate``."""
        self.remove_partitions(partitions)
        grouped: dict[tuple[tuple[int, str, int], int], dict[TopicPartition, int]] = {}
        for tp, (leader, offset) in partitions.items():
            key = (leader, fetcher_id(tp[0], tp[1], self.settings.num_fetchers))
            grouped.setdefault(key, {})[tp] = offset
            self._owner[tp] = key
        for key, offsets in grouped.items():
            fetcher = self._fetchers.get(key)
            if fetcher is None:
                fetcher = self._fetchers[key] = ReplicaFetcher(self.settings, key[0], key[1], self.logs)
            fetcher.add(offsets, truncate)

    def remove_partitions(self, partitions: Iterable[TopicPartition]) -> None:
        for tp in list(partitions):
            key = self._owner.pop(tp, None)
            fetcher = self._fetchers.get(key) if key else None
            if fetcher is not None:
                fetcher.remove([tp])
                if not fetcher.partitions:
                    fetcher.stop()
                    del self._fetchers[key]
                    self._retired = [g for g in self._retired if not g.dead] + [fetcher.greenlet]

    def leader_of(self, tp: TopicPartition) -> tuple[int, str, int] | None:
        """The leader (id, host, port) the partition is fetched from, or None."""
        key = self._owner.get(tp)
        return key[0] if key else None

    def fetchers(self) -> list[ReplicaFetcher]:
        return list(self._fetchers.values())

    def shutdown(self) -> None:
        """Stop every fetcher and end its greenlet: a request under way is cut short, its connection closed with
        it (Kafka's shutdown closes the leader's connection too), not left to a hub that may no longer run."""
        fetchers = list(self._fetchers.values())
        for fetcher in fetchers:
            fetcher.stop()
        self._fetchers.clear()
        self._owner.clear()
        greenlets, self._retired = [fetcher.greenlet for fetcher in fetchers] + self._retired, []
        end_greenlets(greenlets, SHUTDOWN_TIMEOUT_S)

"""The 0.8 producer's send path (0.8.2's DefaultEventHandler): partition, collate by leader, produce, retry.

Each message goes to a partition of its topic: ``partitioner.partition(key, n)`` over all the topic's
partitions for a keyed message; for a null key one random partition that has a leader, kept per topic until
the next metadata refresh. A ValueBatch (values sharing a topic and a key) is placed as one message and goes
as one message set built in one call. Messages are grouped by the leader of their partition, one message set per
partition (compressed by the ``compression.codec``/``compressed.topics`` rule) and one Produce request per
leader with ``request.required.acks``. What fails — no metadata yet (a topic being auto-created answers
LEADER_NOT_AVAILABLE first), no leader, a connection error, a partition error in the answer
(NOT_LEADER_FOR_PARTITION, ...) — is retried ``message.send.max.retries`` times, each after
``retry.backoff.ms`` and a metadata refresh of its topics. What is still not delivered then is raised as
FailedToSendMessageError with its count.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import gevent

from zkafka.client08.api_versions import version_for
from zkafka.client08.channel import broker_channel
from zkafka.client08.topic_metadata import PartitionAndLeader, TopicMetadataCache
from zkafka.errors import (
    KafkaError,
    LeaderNotAvailableError,
    UnknownTopicOrPartitionError,
    UnsupportedForMessageFormatError,
    UnsupportedVersionError,
)
from zkafka.network.client import BlockingChannel
from zkafka.producer.encoders import codec_for_topic
from zkafka.producer.errors import FailedToSendMessageError
from zkafka.producer.idempotence import IdempotentProducerState, SealedBatch
from zkafka.producer.partitioner import Partitioner
from zkafka.protocol.api_keys import PRODUCE
from zkafka.protocol.errors import error_name
from zkafka.protocol.produce import (
    FIRST_BATCH_VERSION,
    PRODUCE_APIS,
    ProduceRequestPartition,
    ProduceRequestTopic,
)
from zkafka.records.default_record import Record
from zkafka.records.format08 import build_message_set, build_value_set
from zkafka.records.record_batch import build_batch, build_plain_batch

log = logging.getLogger(__name__)

NO_LEADER = -1


class Serialized(NamedTuple):
    """A message ready to send: its topic, the key it is partitioned by, and its key and value bytes."""

    topic: str
    part_key: Any
    key: bytes | None
    value: bytes | None
    headers: Sequence[tuple[str, bytes | None]] = ()  # a record batch's only (Produce v3+)
    timestamp: int | None = None  # CreateTime in ms (None: when its batch is built)


class ValueBatch(NamedTuple):
    """Values for one topic sent with one key: one partition (chosen by ``part_key``), one message set."""

    topic: str
    part_key: Any
    key: bytes | None
    values: Sequence[bytes | None]


Outgoing = Serialized | ValueBatch | SealedBatch
Collated = dict[int, dict[tuple[str, int], list[Outgoing]]]  # leader -> (topic, partition) -> messages


def message_count(messages: Sequence[Outgoing]) -> int:
    """The messages in ``messages``: one each, a ValueBatch's values."""
    return sum(len(m.values) if type(m) is ValueBatch else m.count if type(m) is SealedBatch else 1 for m in messages)


def message_set(group: Sequence[Outgoing], codec: int) -> bytes:
    """One partition's message set of Serialized messages or of ValueBatches (a lone one in one call), every
    (key, value) in order. A group holds one kind (``handle`` is given one kind: see there)."""
    if type(group[0]) is not ValueBatch:
        return build_message_set([(m[2], m[3]) for m in group], codec)
    if len(group) == 1:
        return build_value_set(group[0].values, group[0].key, codec)
    return build_message_set([(m.key, v) for m in group for v in m.values], codec)


def record_batch(group: Sequence[Outgoing], codec: int) -> bytes:
    """One partition's messages as one record batch (message format v2, Produce v3+): offsets from 0, each
    message's timestamp (or the time now) and headers; a sealed batch as it was built."""
    if type(group[0]) is SealedBatch:
        return group[0].data
    now = int(time.time() * 1000)
    if type(group[0]) is ValueBatch:
        if len(group) == 1:
            return build_plain_batch(None, now, codec, values=group[0].values, key=group[0].key)
        return build_plain_batch([(m.key, v) for m in group for v in m.values], now, codec)
    if all(not m.headers and m.timestamp is None for m in group):
        return build_plain_batch([(m[2], m[3]) for m in group], now, codec)
    return build_batch(group_records(group, now), compression=codec)


def group_records(group: Sequence[Outgoing], now: int) -> list[Record]:
    """One partition's messages as records numbered from 0 (no timestamp: ``now``)."""
    if type(group[0]) is ValueBatch:
        return [Record(i, now, key, v) for i, (key, v) in enumerate((m.key, v) for m in group for v in m.values)]
    return [
        Record(i, now if m.timestamp is None else m.timestamp, m.key, m.value, m.headers)
        for i, m in enumerate(group)
    ]


def check_legacy_group(group: Sequence[Outgoing]) -> None:
    """Refuse headers and idempotent batches for a broker that takes only message sets (Produce before v3)."""
    if type(group[0]) is SealedBatch:
        raise UnsupportedVersionError("enable.idempotence needs a broker that takes Produce v3 (Kafka 0.11+)")
    for m in group:
        if type(m) is Serialized and m.headers:
            raise UnsupportedForMessageFormatError(
                f"a message to {m.topic} has headers, which a broker without Produce v3 (message format v2) "
                "cannot take"
            )


def partition_and_collate(
    messages: Sequence[Outgoing],
    partitions_for: Callable[[str], list[PartitionAndLeader]],
    choose: Callable[[str, Any, list[PartitionAndLeader]], int],
) -> tuple[Collated, list[Outgoing]]:
    """Messages by leader and partition (partitions in order of first appearance, messages in send order),
    and those that cannot go anywhere now: a topic without metadata, a partition without a leader.

    ``partitions_for(topic)`` gives a topic's partitions or raises; ``choose(topic, key, partitions)`` the
    index of the partition for a key."""
    collated: Collated = {}
    failed: list[Outgoing] = []
    known: dict[str, list[PartitionAndLeader] | None] = {}
    null_key_group: dict[str, list[Outgoing]] = {}  # null keys of a topic all go to one partition
    for message in messages:
        topic = message.topic
        if message.part_key is None:
            group = null_key_group.get(topic)
            if group is not None:
                group.append(message)
                continue
        if topic not in known:
            try:
                known[topic] = partitions_for(topic)
            except (KafkaError, OSError) as exc:
                log.warning("no partitions for topic %s yet: %s", topic, exc)
                known[topic] = None
        partitions = known[topic]
        if partitions is None:
            failed.append(message)
            continue
        try:
            chosen = partitions[choose(topic, message.part_key, partitions)]
        except KafkaError as exc:
            log.warning("no partition for a message to %s: %s", topic, exc)
            failed.append(message)
            continue
        leader = NO_LEADER if chosen.leader is None else chosen.leader
        group = collated.setdefault(leader, {}).setdefault((topic, chosen.partition), [])
        group.append(message)
        if message.part_key is None:
            null_key_group[topic] = group
    if NO_LEADER in collated:
        leaderless = collated.pop(NO_LEADER)
        log.warning("partitions %s have no leader", ", ".join(f"{t}-{p}" for t, p in leaderless))
        for group in leaderless.values():
            failed.extend(group)
    return collated, failed


def failed_partitions(sent: Sequence[tuple[str, int]], response: Any) -> list[tuple[str, int]]:
    """The partitions of a Produce request its answer did not acknowledge: those with an error, or all of
    them when the answer does not account for each one."""
    status = {(t.topic, p.partition): p.error for t in response.topics for p in t.partitions}
    if len(status) != len(sent) or any(key not in status for key in sent):
        log.warning(
            "a produce answer covers %d partitions of the %d sent; resending all", len(status), len(sent)
        )
        return list(sent)
    failed = [key for key in sent if status[key]]
    if failed:
        log.warning(
            "produce failed for %s", ", ".join(f"{t}-{p} ({error_name(status[(t, p)])})" for t, p in failed)
        )
    return failed


class ProducerPool08:
    """One channel per leader, made from the brokers the metadata named (0.8's ProducerPool)."""

    def __init__(
        self,
        metadata: TopicMetadataCache,
        client_id: str,
        timeout_ms: int,
        send_buffer: int,
        api_version_request: bool = True,
    ) -> None:
        self.metadata = metadata
        self.client_id = client_id
        self.timeout_ms = timeout_ms
        self.send_buffer = send_buffer
        self.api_version_request = api_version_request
        self.channels: dict[int, BlockingChannel] = {}

    def get(self, broker_id: int) -> BlockingChannel:
        broker = self.metadata.brokers.get(broker_id)
        if broker is None:
            raise LeaderNotAvailableError(f"broker {broker_id} is not among the brokers the metadata named")
        channel = self.channels.get(broker_id)
        if channel is not None and (channel.host, channel.port) != (broker.host, broker.port):
            channel.close()
            channel = None
        if channel is None:
            channel = broker_channel(
                broker.host,
                broker.port,
                self.client_id,
                socket_timeout_ms=self.timeout_ms,
                send_buffer=self.send_buffer,
                api_version_request=self.api_version_request,
            )
            self.channels[broker_id] = channel
        return channel

    def close(self) -> None:
        for channel in self.channels.values():
            channel.close()
        self.channels.clear()


class DefaultEventHandler08:
    """Sends batches of serialized messages as 0.8.2's DefaultEventHandler does (see the module docstring)."""

    def __init__(
        self,
        config: Mapping[str, Any],
        partitioner: Partitioner,
        metadata: TopicMetadataCache | None = None,
        rng: random.Random | None = None,
    ) -> None:
        from zkafka.client08.topic_metadata import parse_broker_list

        self.acks: int = config["request.required.acks"]
        self.timeout_ms: int = config["request.timeout.ms"]
        self.max_retries: int = config["message.send.max.retries"]
        self.retry_backoff: float = config["retry.backoff.ms"] / 1000.0
        self.refresh_interval: float = config["topic.metadata.refresh.interval.ms"] / 1000.0
        self.codec: int = config["compression.codec"]
        self.compressed_topics = frozenset(config["compressed.topics"])
        self.partitioner = partitioner
        self.metadata = metadata or TopicMetadataCache(
            parse_broker_list(config["metadata.broker.list"]), config["client.id"], self.timeout_ms
        )
        self.pool = ProducerPool08(
            self.metadata,
            config["client.id"],
            self.timeout_ms,
            config["send.buffer.bytes"],
            config.get("api.version.request", True),
        )
        self.rng = rng or random.Random()
        self.idempotence = IdempotentProducerState() if config.get("enable.idempotence") else None
        self.sticky: dict[str, int] = {}  # topic -> partition id for null keys, until the next refresh
        self.last_refresh = float("-inf")
        self.last_error: BaseException | None = None  # the cause a failure to deliver names

    # -- the retry loop ------------------------------------------------------------------------------------

    def handle(self, messages: Sequence[Outgoing]) -> None:
        """Deliver ``messages`` (Serialized messages, or ValueBatches: one kind a call) or raise
        FailedToSendMessageError with the count that could not be."""
        outstanding = list(messages)
        attempts = self.max_retries + 1
        self.last_error = None
        while outstanding and attempts > 0:
            self.refresh_if_due(outstanding)
            outstanding = self.dispatch(outstanding)
            attempts -= 1
            if outstanding and attempts > 0:
                log.info(
                    "%d messages not delivered; retrying in %.0f ms (%d retries left)",
                    message_count(outstanding),
                    self.retry_backoff * 1000,
                    attempts,
                )
                gevent.sleep(self.retry_backoff)
                self.refresh({m.topic for m in outstanding})
        if outstanding:
            if self.idempotence is not None:
                self.idempotence.reset()
            topics = sorted({m.topic for m in outstanding})
            undelivered = message_count(outstanding)
            raise FailedToSendMessageError(
                f"{undelivered} of {message_count(messages)} messages to {', '.join(topics)} not delivered "
                f"after {self.max_retries} retries"
                + (f"; the last error: {self.last_error}" if self.last_error is not None else ""),
                undelivered=undelivered,
            )

    def refresh_if_due(self, messages: Sequence[Outgoing]) -> None:
        """Refresh the metadata of the messages' topics when ``topic.metadata.refresh.interval.ms`` is up."""
        if self.refresh_interval >= 0 and time.monotonic() - self.last_refresh > self.refresh_interval:
            self.refresh({m.topic for m in messages})

    def refresh(self, topics: set[str]) -> None:
        """New metadata for ``topics``; a failure is logged (the sends that need it fail and are retried)."""
        try:
            self.metadata.update(topics)
        except (KafkaError, OSError) as exc:
            log.warning("refreshing metadata for %s failed: %s", sorted(topics), exc)
            self.last_error = exc
        self.sticky.clear()
        self.last_refresh = time.monotonic()

    # -- one attempt ---------------------------------------------------------------------------------------

    def dispatch(self, messages: Sequence[Outgoing]) -> list[Outgoing]:
        """One attempt: send every message to its leader; returns those not acknowledged."""
        collated, failed = self.collate(messages)
        for broker_id, groups in collated.items():
            for key in self.send(broker_id, groups):
                failed.extend(groups[key])
        return failed

    def collate(self, messages: Sequence[Outgoing]) -> tuple[Collated, list[Outgoing]]:
        """``partition_and_collate`` with this handler's metadata and partition choice; with idempotence each
        partition's new messages sealed into its next batch, and sealed batches sent to their partition."""
        if self.idempotence is None:
            return partition_and_collate(messages, self.metadata.partitions, self.choose)
        fresh = [m for m in messages if type(m) is not SealedBatch]
        collated, failed = partition_and_collate(fresh, self.metadata.partitions, self.choose)
        now = int(time.time() * 1000)
        try:
            self.idempotence.seal_groups(
                collated, self.pool.get, lambda t: codec_for_topic(self.codec, self.compressed_topics, t),
                lambda group: group_records(group, now),
            )  # fmt: skip
        except (KafkaError, OSError) as exc:
            log.warning("no producer id: %s", exc)
            self.last_error = exc
            return {}, list(messages)
        self.idempotence.route([m for m in messages if type(m) is SealedBatch], collated, failed, self.metadata)
        return collated, failed

    def choose(self, topic: str, key: Any, partitions: list[PartitionAndLeader]) -> int:
        """The index in ``partitions`` for a message with ``key`` (see the module docstring)."""
        n = len(partitions)
        if key is None:
            chosen = self.sticky.get(topic)
            if chosen is None or chosen >= n:
                available = [i for i, p in enumerate(partitions) if p.leader is not None]
                if not available:
                    raise LeaderNotAvailableError(f"no partition of topic {topic!r} has a leader")
                chosen = self.sticky[topic] = available[int(self.rng.random() * len(available))]
            return chosen
        index = self.partitioner.partition(key, n)
        if not 0 <= index < n:
            raise UnknownTopicOrPartitionError(
                f"partitioner returned {index} for key {key!r}; topic {topic!r} has partitions [0, {n})"
            )
        return index

    def produce_request(self, groups: Mapping[tuple[str, int], list[Outgoing]], version: int = 0) -> Any:
        """The Produce request of ``version`` for one leader's groups: per (topic, partition) a message set
        (v0-v2) or a record batch (v3+)."""
        batches = version >= FIRST_BATCH_VERSION
        by_topic: dict[str, list] = {}
        for (topic, partition), group in groups.items():
            codec = codec_for_topic(self.codec, self.compressed_topics, topic)
            if batches:
                data = record_batch(group, codec)
            else:
                check_legacy_group(group)
                data = message_set(group, codec)
            by_topic.setdefault(topic, []).append(ProduceRequestPartition(partition, data))
        topics = [ProduceRequestTopic(t, parts) for t, parts in by_topic.items()]
        if batches:
            return PRODUCE_APIS[version][0](None, self.acks, self.timeout_ms, topics)
        return PRODUCE_APIS[version][0](self.acks, self.timeout_ms, topics)

    def send(self, broker_id: int, groups: Mapping[tuple[str, int], list[Outgoing]]) -> list[tuple[str, int]]:
        """One Produce request to a leader; the (topic, partition) keys that failed."""
        sent = list(groups)
        try:
            channel = self.pool.get(broker_id)
            request = self.produce_request(groups, version_for(channel, PRODUCE))
            if self.acks == 0 and channel.peer_closed():
                # acks=0 has no answer: a broker that failed an earlier request closed the connection.
                log.warning("%s closed the connection: an earlier acks=0 produce may have failed", channel)
                channel.disconnect()
            response = channel.request(request, retries=0)
        except (KafkaError, OSError) as exc:
            log.warning("producing to broker %d failed: %s", broker_id, exc)
            self.last_error = exc
            broker = self.metadata.brokers.get(broker_id)
            if broker is not None and isinstance(exc, OSError):  # its next Metadata goes to the others first
                self.metadata.failed[(broker.host, broker.port)] = time.monotonic()
            return sent
        return [] if response is None else failed_partitions(sent, response)

    def close(self) -> None:
        self.pool.close()

"""The cluster as 0.8 clients see it: brokers from ``metadata.broker.list`` and Metadata requests (0.8.2's
``ClientUtils``), and the topic -> partitions -> leader cache the producer keeps (its ``BrokerPartitionInfo``).

A client asks any broker of the bootstrap list (shuffled; the next one on failure) for the topics it needs; a
cache asks the brokers that last failed it after the others (``ask_order``), as Kafka's clients pass over a node
in reconnect back-off: a killed broker whose address no longer resolves or answers costs a lookup its connect
timeout once, not at every refresh.
A topic unknown to the cluster is created by the broker when ``auto.create.topics.enable`` is on; the first
answer then carries LEADER_NOT_AVAILABLE and no partitions, and the client asks again later.
"""

from __future__ import annotations

import logging
import random
import re
import time
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from zkafka.client08.channel import broker_channel, check_error
from zkafka.errors import BrokerNotAvailableError, InvalidConfigError, KafkaError
from zkafka.protocol.errors import ErrorCode, error_name
from zkafka.protocol.metadata import MetadataRequestV0

log = logging.getLogger(__name__)


class BrokerEndPoint(NamedTuple):
    """A broker as a Metadata response names it."""

    id: int
    host: str
    port: int


class PartitionAndLeader(NamedTuple):
    """One partition of a topic and its leader's broker id (None while it has none)."""

    topic: str
    partition: int
    leader: int | None


def parse_broker_list(spec: str | Sequence[str]) -> list[tuple[str, int]]:
    """``host:port,host:port`` (or its items) as ``[(host, port)]``; InvalidConfigError naming a bad item."""
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    brokers = []
    for item in (i.strip() for i in items):
        if not item:
            continue
        host, sep, port = item.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise InvalidConfigError(f"metadata.broker.list: {item!r} is not host:port")
        brokers.append((host.strip("[]"), int(port)))
    if not brokers:
        raise InvalidConfigError("metadata.broker.list: names no broker")
    return brokers


def is_broker_list_08(spec: str) -> bool:
    """True for 0.8's ``host:port,...``; False for 0.7's ``id:host:port,...`` (the tools take either)."""
    items = [i.strip() for i in spec.split(",") if i.strip()]
    return bool(items) and all(re.sub(r"\[.*\]", "", item).count(":") == 1 for item in items)


def ask_order(
    brokers: Iterable[tuple[str, int]], failed: dict[tuple[str, int], float], rng: random.Random | None = None
) -> list[tuple[str, int]]:
    """``brokers`` shuffled, those in ``failed`` (broker -> when it last failed) last, the latest failure
    last of all."""
    order = list(dict.fromkeys(brokers))
    (rng or random).shuffle(order)
    return sorted(order, key=lambda broker: failed.get(broker, float("-inf")))


def fetch_topic_metadata(
    topics: Iterable[str],
    brokers: Sequence[tuple[str, int]],
    client_id: str = "",
    timeout_ms: int = 10000,
    rng: random.Random | None = None,
    failed: dict[tuple[str, int], float] | None = None,
    secure: Any = None,
) -> Any:
    """A MetadataResponseV0 for ``topics`` ([] = all) from the first broker of the shuffled list that answers
    (``failed``, when given, orders it (``ask_order``) and is kept up to date); BrokerNotAvailableError naming
    the brokers tried and the last failure when none does. ``secure``: TLS and SASL for each connection."""
    topics = sorted(set(topics))
    failed = {} if failed is None else failed
    order = ask_order(brokers, failed, rng)
    last: BaseException | None = None
    for host, port in order:
        channel = broker_channel(host, port, client_id, socket_timeout_ms=timeout_ms, secure=secure)
        try:
            response = channel.request(MetadataRequestV0(topics), retries=0)
            failed.pop((host, port), None)
            return response
        except (OSError, KafkaError) as exc:
            # INFO: another broker may answer, and when none does the error raised names the last failure
            log.info(
                "fetching metadata for %s from %s:%d failed: %s", topics or "all topics", host, port, exc
            )
            failed[(host, port)] = time.monotonic()
            last = exc
        finally:
            channel.close()
    tried = ",".join(f"{h}:{p}" for h, p in order)
    raise BrokerNotAvailableError(f"fetching metadata for topics {topics} from [{tried}] failed: {last}")


class TopicMetadataCache:
    """Topics' partitions and leaders, and the brokers, as the last Metadata answers gave them."""

    def __init__(
        self,
        bootstrap: Sequence[tuple[str, int]],
        client_id: str = "",
        timeout_ms: int = 10000,
        secure: Any = None,
    ) -> None:
        self.bootstrap = list(bootstrap)
        self.secure = secure  # TLS and SASL for each connection (``InterBrokerSecurity.secure``)
        self.client_id = client_id
        self.timeout_ms = timeout_ms
        self.brokers: dict[int, BrokerEndPoint] = {}
        self.topics: dict[str, Any] = {}  # topic -> TopicMetadata with no topic error
        self._sorted: dict[str, tuple[Any, tuple[PartitionAndLeader, ...]]] = {}  # partitions() of a
        # topic's TopicMetadata object, made once per metadata answer instead of once per produce request
        self.failed: dict[tuple[str, int], float] = {}  # broker -> when it last failed a request: asked last

    def update(self, topics: Iterable[str]) -> Any:
        """Ask the cluster about ``topics`` and keep what it answers; returns the response."""
        response = fetch_topic_metadata(
            topics, self.bootstrap, self.client_id, self.timeout_ms, failed=self.failed, secure=self.secure
        )
        for broker in response.brokers:
            self.brokers[broker.node_id] = BrokerEndPoint(broker.node_id, broker.host, broker.port)
        for topic in response.topics:
            if topic.error == ErrorCode.NONE:
                self.topics[topic.topic] = topic
            else:
                self.topics.pop(topic.topic, None)
                log.warning("metadata for topic %s: %s", topic.topic, error_name(topic.error))
            for partition in topic.partitions:
                if partition.error == ErrorCode.LEADER_NOT_AVAILABLE:
                    log.warning("topic %s partition %d has no leader", topic.topic, partition.partition)
        return response

    def partitions(self, topic: str) -> list[PartitionAndLeader]:
        """The partitions of ``topic`` by id, each with its leader (None if it has none); asks the cluster
        when the topic is not known yet. The topic's error (LEADER_NOT_AVAILABLE while it is being created,
        UNKNOWN_TOPIC_OR_PARTITION, ...) is raised."""
        metadata = self.topics.get(topic)
        if metadata is None:
            response = self.update([topic])
            metadata = self.topics.get(topic)
            if metadata is None:
                for answered in response.topics:
                    if answered.topic == topic:
                        check_error(answered.error, f"metadata for topic {topic!r}")
                raise KafkaError(f"metadata for topic {topic!r}: not in the broker's answer")
        made = self._sorted.get(topic)
        if made is not None and made[0] is metadata:
            return list(made[1])
        if not metadata.partitions:
            raise KafkaError(f"metadata for topic {topic!r} has no partitions and no error")
        partitions = sorted(
            (
                PartitionAndLeader(topic, p.partition, p.leader if p.leader >= 0 else None)
                for p in metadata.partitions
            ),
            key=lambda p: p.partition,
        )
        self._sorted[topic] = (metadata, tuple(partitions))
        return partitions

    def leader(self, topic: str, partition: int) -> BrokerEndPoint | None:
        """The leader of one partition as last seen (None if unknown or leaderless); no request is made."""
        metadata = self.topics.get(topic)
        for p in metadata.partitions if metadata is not None else ():
            if p.partition == partition and p.leader >= 0:
                return self.brokers.get(p.leader)
        return None

    def forget(self) -> None:
        """Drop every topic, so the next ``partitions`` asks the cluster again."""
        self.topics.clear()
        self._sorted.clear()

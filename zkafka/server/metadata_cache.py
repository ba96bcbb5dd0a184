"""MetadataCache: the cluster as the controller last described it, and the Metadata answers a 0.8 broker gives from it.

As 0.8.2's MetadataCache, it is fed only by the controller's UpdateMetadata requests: each replaces the list of
live brokers and upserts the partition states it carries (leader -2 removes the partition: its topic is being
deleted). The picture is an immutable ``ClusterSnapshot`` (the same shape the controller's watch-based
ControllerContext publishes), which the group coordinator's handlers read too.

Answers (0.8.2's ``getTopicMetadata``): brokers are the live ones with the host and port they registered (the
advertised ones). Per partition: a leader that is not live → LEADER_NOT_AVAILABLE (5) with leader -1 and no
ISR; a replica or ISR member that is not live → REPLICA_NOT_AVAILABLE (9) with the leader kept and both lists
filtered to live brokers. A topic the cache does not know is auto-created when ``auto.create.topics.enable``
(its assignment written to ZooKeeper) and answered LEADER_NOT_AVAILABLE (5) with no partitions, for the
client to ask again; when auto-creation is off it is UNKNOWN_TOPIC_OR_PARTITION (3). As in 0.8.2, the cache
holds only partitions that have a state (a leader elected once): a topic whose partitions have none yet is
answered as unknown (its creation then finds it exists: 5).

Metadata v1-v9 (``metadata_response``) as Kafka 0.10 to 2.4 answer them: replicas and ISR are listed whole
(not filtered to live brokers, no REPLICA_NOT_AVAILABLE), the replicas on brokers that are not live as
``offline_replicas`` (v5); brokers carry their rack, the answer the controller id the last UpdateMetadata
named and the cluster id (``/cluster/id``); auto-creation also needs the request's
``allow_auto_topic_creation`` (v4); a name the topic rules refuse is INVALID_TOPIC_EXCEPTION (17) for that
topic alone, never created. With no authorizer, authorized operations (v8, when asked) are all of them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from zkafka.cluster.end_point import PROTOCOL_NAMES, EndPoint, registered_end_point
from zkafka.cluster.snapshot import ClusterSnapshot, PartitionMetadata
from zkafka.controller.request_planner import LEADER_DURING_DELETE
from zkafka.errors import InvalidTopicError, KafkaError, UnknownTopicOrPartitionError, code_for_error
from zkafka.network.server import session_listener
from zkafka.protocol import metadata
from zkafka.protocol.errors import LAST_CODE_09, ErrorCode
from zkafka.protocol.versioned import make
from zkafka.security.acl import Operation
from zkafka.security.auth_helper import ALLOW_ALL, CLUSTER, TOPIC, AuthHelper
from zkafka.server.replica_manager import error_code
from zkafka.topic import validate_topic_08
from zkafka.zk.paths08 import BrokerRegistration, PartitionState

log = logging.getLogger(__name__)
OMITTED = metadata.AUTHORIZED_OPERATIONS_OMITTED
INTERNAL_TOPICS = frozenset({"__consumer_offsets"})


def partition_metadata(partition: int, meta: Any, alive: Any) -> Any:
    """One partition's answer from its replicas, its state and the live broker ids."""
    replicas = [r for r in meta.replicas if r in alive]
    if meta.leader not in alive:
        return metadata.PartitionMetadata(ErrorCode.LEADER_NOT_AVAILABLE, partition, -1, replicas, [])
    isr = [r for r in meta.isr if r in alive]
    error = ErrorCode.NONE
    if len(replicas) < len(meta.replicas) or len(isr) < len(meta.isr):
        error = ErrorCode.REPLICA_NOT_AVAILABLE
    return metadata.PartitionMetadata(error, partition, meta.leader, replicas, isr)


def partition_metadata_v1(partition: int, meta: Any, alive: Any) -> dict[str, Any]:
    """One partition's answer in v1+ (the fields of every version: a version takes those it has): whole
    replica lists, leader -1 with LEADER_NOT_AVAILABLE when it is not live, the replicas not live."""
    live = meta.leader in alive
    return {
        "error": ErrorCode.NONE if live else ErrorCode.LEADER_NOT_AVAILABLE,
        "partition": partition,
        "leader": meta.leader if live else -1,
        "leader_epoch": meta.state.leader_epoch,
        "replicas": list(meta.replicas),
        "isr": list(meta.isr),
        "offline_replicas": [r for r in meta.replicas if r not in alive],
    }


class MetadataCache:
    """The cluster as the controller last described it to this broker, and the Metadata answers from it.

    ``create_topic(topic)`` auto-creates a topic a Metadata request names (when ``auto_create_topics``).
    """

    def __init__(
        self,
        *,
        create_topic: Callable[[str], None] | None = None,
        auto_create_topics: bool = True,
        snapshot: ClusterSnapshot | None = None,
    ) -> None:
        self._snapshot = snapshot if snapshot is not None else ClusterSnapshot()
        self.create_topic = create_topic
        self.auto_create_topics = auto_create_topics and create_topic is not None
        self._listeners: list[Callable[[ClusterSnapshot], None]] = []
        self.controller_id = -1  # as the last UpdateMetadata named it
        self.cluster_id: str | None = None

    def snapshot(self) -> ClusterSnapshot:
        return self._snapshot

    def add_listener(self, listener: Callable[[ClusterSnapshot], None]) -> None:
        """Call ``listener(snapshot)`` after every update."""
        self._listeners.append(listener)

    def update(self, request: Any) -> None:
        """Apply an UpdateMetadata request (v0 brokers, or v1 brokers with their PLAINTEXT end point)."""
        brokers = {}
        for broker in request.live_brokers:
            registration = _registration(broker)
            if registration is not None:
                brokers[registration.id] = registration
        topics = {topic: dict(parts) for topic, parts in self._snapshot.topics.items()}
        for entry in request.partition_states:
            state = entry.state
            if state.leader == LEADER_DURING_DELETE:
                parts = topics.get(entry.topic, {})
                parts.pop(entry.partition, None)
                if not parts:
                    topics.pop(entry.topic, None)
                continue
            topics.setdefault(entry.topic, {})[entry.partition] = PartitionMetadata(
                tuple(state.replicas),
                PartitionState(
                    state.leader,
                    state.leader_epoch,
                    tuple(state.isr),
                    state.controller_epoch,
                    state.zk_version,
                ),
            )
        self._snapshot = ClusterSnapshot(brokers, topics)
        self.controller_id = request.controller_id
        for listener in list(self._listeners):
            try:
                listener(self._snapshot)
            except Exception:
                log.exception("metadata listener %r failed", listener)

    def leaders(self) -> dict[tuple[str, int], int]:
        """Every partition known with its leader id."""
        return {
            (t, p): meta.leader for t, parts in self._snapshot.topics.items() for p, meta in parts.items()
        }

    # -- the Metadata answers ------------------------------------------------------------------------------

    def alive_brokers(self) -> list[tuple[int, str, int]]:
        """(id, host, port) of every live broker on the listener the request came in on (a broker without such
        a listener left out, as Kafka does)."""
        listener = session_listener()
        brokers = self._snapshot.brokers
        found = ((b, registered_end_point(brokers[b], listener)) for b in sorted(brokers))
        return [(b, end_point.host, end_point.port) for b, end_point in found if end_point is not None]

    def metadata_response(self, request: Any, auth: AuthHelper = ALLOW_ALL) -> Any:
        """The answer to a Metadata request of any version (v0: 0.8.2's, where a failed auto-creation answers
        every topic with its code and no brokers); with an authorizer, the topics ``_authorized_names``
        says."""
        names = metadata.requested_topics(request)
        denied: set[str] = set()
        if auth.enabled:
            names, denied = self._authorized_names(request, names, auth)
        if request.API_VERSION > 0:
            return self._metadata_response_v1(request, names, denied, auth)
        try:
            wanted = [t for t in names or [] if t not in denied]
            allowed = self.topic_metadata(wanted) if wanted or names is None else []
        except KafkaError as exc:  # with the codes 0.9.0.1 has (a refused replication factor: -1)
            log.info("metadata request for %s failed: %s", names, exc)
            code = code_for_error(exc, LAST_CODE_09)
            return metadata.MetadataResponseV0([], [metadata.TopicMetadata(code, t, []) for t in names or []])
        refused = [metadata.TopicMetadata(ErrorCode.TOPIC_AUTHORIZATION_FAILED, t, []) for t in denied]
        brokers = [metadata.MetadataBroker(*b) for b in self.alive_brokers()]
        return metadata.MetadataResponseV0(brokers, allowed + refused)

    def _authorized_names(
        self, request: Any, names: list[str] | None, auth: AuthHelper
    ) -> tuple[list[str], set[str]]:
        """The topics to answer and those refused, as KafkaApis with an authorizer: asked for every topic,
        those the principal may Describe; named topics it may not Describe, or absent ones it may not Create
        (on the cluster or the topic) while auto-creation is on, are refused (TOPIC_AUTHORIZATION_FAILED)."""
        if names is None:
            return sorted(auth.filter_authorized(Operation.DESCRIBE, TOPIC, self._names(None))), set()
        described = auth.filter_authorized(Operation.DESCRIBE, TOPIC, names)
        absent = [t for t in described if not _with_state(self._snapshot.topics.get(t))]
        if absent and getattr(request, "allow_auto_topic_creation", True) and self.auto_create_topics:
            if not auth.authorize_cluster(Operation.CREATE):
                described -= set(absent) - auth.filter_authorized(Operation.CREATE, TOPIC, absent)
        return names, set(names) - described

    def _metadata_response_v1(
        self, request: Any, names: list[str] | None, denied: Iterable[str] = (), auth: AuthHelper = ALLOW_ALL
    ) -> Any:
        """A v1+ answer: every field's value once, each version taking the fields it has (``versioned.make``);
        asked for them (v8+, KIP-430), the operations ``auth`` allows on each topic and the cluster."""
        brokers = self._snapshot.brokers
        auto_create = getattr(request, "allow_auto_topic_creation", True)
        topic_ops = getattr(request, "include_topic_authorized_operations", False)
        cluster_ops = getattr(request, "include_cluster_authorized_operations", False)
        operations = auth.authorized_operations if topic_ops else lambda *_: OMITTED
        return make(
            metadata.METADATA_APIS[request.API_VERSION][1],
            throttle_time_ms=0,
            brokers=[
                {"node_id": b, "host": host, "port": port, "rack": brokers[b].rack}
                for b, host, port in self.alive_brokers()
            ],
            cluster_id=self.cluster_id,
            controller_id=self.controller_id,
            topics=[
                _denied_topic(topic)
                if topic in denied
                else self._topic_v1(topic, auto_create, operations(TOPIC, topic))
                for topic in self._names(names)
            ],
            cluster_authorized_operations=auth.authorized_operations(CLUSTER) if cluster_ops else OMITTED,
        )

    def _names(self, names: list[str] | None) -> list[str]:
        """The topics asked for; None: every topic with a state."""
        topics = self._snapshot.topics
        return names if names is not None else [t for t in sorted(topics) if _with_state(topics[t])]

    def _topic_v1(self, topic: str, auto_create: bool, operations: int) -> dict[str, Any]:
        partitions = _with_state(self._snapshot.topics.get(topic))
        alive = self._snapshot.brokers.keys()
        error = ErrorCode.NONE if partitions else self._unknown_topic_v1(topic, auto_create)
        return {
            "error": error,
            "topic": topic,
            "is_internal": topic in INTERNAL_TOPICS,
            "partitions": [partition_metadata_v1(p, partitions[p], alive) for p in sorted(partitions)],
            "topic_authorized_operations": operations,
        }

    def _unknown_topic_v1(self, topic: str, auto_create: bool) -> int:
        """A topic the cache does not know: refused by name (17), created when allowed, else unknown (3)."""
        try:
            validate_topic_08(topic)
            if not auto_create:
                return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            return self._unknown_topic(topic)
        except InvalidTopicError:
            return ErrorCode.INVALID_TOPIC_EXCEPTION
        except KafkaError as exc:
            log.info("auto-creation of %s failed: %s", topic, exc)
            return error_code(exc)

    def topic_metadata(self, topics: Iterable[str]) -> list[Any]:
        """TopicMetadata for each topic asked for (every known topic when none is)."""
        snapshot = self._snapshot
        names = list(topics) or [t for t in sorted(snapshot.topics) if _with_state(snapshot.topics[t])]
        alive = snapshot.brokers.keys()
        answers = []
        for topic in names:
            partitions = _with_state(snapshot.topics.get(topic))
            if not partitions:
                answers.append(metadata.TopicMetadata(self._unknown_topic(topic), topic, []))
                continue
            answers.append(
                metadata.TopicMetadata(
                    ErrorCode.NONE,
                    topic,
                    [partition_metadata(p, partitions[p], alive) for p in sorted(partitions)],
                )
            )
        return answers

    def _unknown_topic(self, topic: str) -> int:
        """Create the topic if allowed (``create_topic`` ignores one that exists; other errors propagate)."""
        if not self.auto_create_topics:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        self.create_topic(topic)
        log.info("auto-created topic %s", topic)
        return ErrorCode.LEADER_NOT_AVAILABLE

    def ensure_topic_exists(self, topic: str) -> None:
        if not _with_state(self._snapshot.topics.get(topic)):
            raise UnknownTopicOrPartitionError(f"topic {topic} does not exist")


def _registration(broker: Any) -> BrokerRegistration | None:
    """A live broker of UpdateMetadata: v1+ end points kept as ``LISTENER://host:port`` (v1/v2 name each by
    its security protocol, v3 by its listener)."""
    if hasattr(broker, "end_points"):
        if not broker.end_points:
            return None
        uris, protocols = [], []
        for end_point in broker.end_points:
            protocol = PROTOCOL_NAMES.get(end_point.security_protocol)
            if protocol is not None:
                name = getattr(end_point, "listener_name", protocol).upper()
                uris.append(EndPoint(end_point.host, end_point.port, name, protocol).connection_string)
                protocols.append((name, protocol))
        first = broker.end_points[0]
        rack = getattr(broker, "rack", None)
        return BrokerRegistration(
            broker.node_id,
            first.host,
            first.port,
            endpoints=tuple(uris),
            rack=rack,
            protocol_map=tuple(protocols),
        )
    return BrokerRegistration(broker.node_id, broker.host, broker.port)


def _denied_topic(topic: str) -> dict[str, Any]:
    """A v1+ topic the authorizer refuses: TOPIC_AUTHORIZATION_FAILED and no partitions."""
    return {
        "error": ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        "topic": topic,
        "is_internal": topic in INTERNAL_TOPICS,
        "partitions": [],
        "topic_authorized_operations": OMITTED,
    }


def _with_state(partitions: Any) -> dict:
    """The partitions that have a state (those 0.8.2's metadata cache holds)."""
    return {p: meta for p, meta in (partitions or {}).items() if meta.state is not None}

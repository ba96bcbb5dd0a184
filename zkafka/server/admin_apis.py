"""The topic admin requests of the 0.8 line's broker (Kafka 0.10.1's KIP-4, 1.0's KIP-195): CreateTopics v0-v5,
DeleteTopics v0-v4, CreatePartitions v0-v2, as a ZooKeeper-mode Kafka broker answers them.

Only the controller answers them (every topic NOT_CONTROLLER, 41, elsewhere: the client asks the controller
Metadata v1 names). Each does the ZooKeeper writes ``zkafka topics`` does (``admin.topics``): a created topic's
config and assignment, a grown topic's assignment, a deleted topic's mark under ``/admin/delete_topics``; the
controller then acts on them. Per-topic errors are Kafka's: a topic named twice INVALID_REQUEST (42), a name
the topic rules refuse INVALID_TOPIC_EXCEPTION (17), an existing one TOPIC_ALREADY_EXISTS (36), counts
INVALID_PARTITIONS (37), INVALID_REPLICATION_FACTOR (38), INVALID_REPLICA_ASSIGNMENT (39), configs
INVALID_CONFIG (40), an unknown topic UNKNOWN_TOPIC_OR_PARTITION (3). ``validate_only`` checks and writes
nothing. The answer waits, up to the request's timeout, until the created partitions have leaders or the
deleted topics are gone from the metadata cache (Kafka's DelayedCreatePartitions / DelayedDeleteTopics);
here a greenlet polls the cache instead of a purgatory watching it. Topics not done by then are
REQUEST_TIMED_OUT (7).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

import gevent

from zkafka.admin import topics as admin
from zkafka.admin.assignment import assign_replicas_to_brokers, check_assignment, new_partitions
from zkafka.config08 import BrokerConfig08, parse_topic_overrides
from zkafka.errors import (
    AdminOperationError,
    InvalidTopicError,
    KafkaError,
    NotControllerError,
    TopicExistsError,
    UnknownTopicOrPartitionError,
)
from zkafka.network.server import PendingResponse
from zkafka.protocol import topic_admin as wire
from zkafka.protocol import v08
from zkafka.protocol.api_keys import CREATE_PARTITIONS, CREATE_TOPICS, DELETE_TOPICS
from zkafka.protocol.errors import ErrorCode
from zkafka.security.acl import Operation
from zkafka.security.auth_helper import ALLOW_ALL, TOPIC, AuthHelper
from zkafka.server.config_apis import config_values, topic_config_entries
from zkafka.server.metadata_cache import MetadataCache
from zkafka.server.replica_manager import error_code
from zkafka.topic import validate_topic_08
from zkafka.zk.paths08 import delete_topic_path, topic_path

log = logging.getLogger(__name__)

POLL_INTERVAL_S = 0.02


class Outcome(NamedTuple):
    """What became of one topic of a request: its error, message, and (created) assignment and configs."""

    error: int
    message: str | None
    assignment: dict[int, list[int]] = {}
    configs: dict[str, str] = {}


class AdminApis:
    """CreateTopics, DeleteTopics and CreatePartitions, answered when ``controller()`` is active."""

    def __init__(
        self,
        zk_client: Any,
        config: BrokerConfig08,
        metadata: MetadataCache,
        controller: Callable[[], Any],
        auth: AuthHelper = ALLOW_ALL,
    ) -> None:
        self.zk_client = zk_client
        self.config = config
        self.metadata = metadata
        self.controller = controller
        self.auth = auth

    def _authorized(self, operation: Operation, names: Iterable[str]) -> set[str]:
        """The topics the principal may do ``operation`` on (Create: on the cluster, or on the topic)."""
        names = list(names)
        if operation == Operation.CREATE and self.auth.authorize_cluster(Operation.CREATE, log_denied=False):
            return set(names)
        return self.auth.filter_authorized(operation, TOPIC, names)

    def handlers(self) -> dict[tuple[int, int], Callable[[v08.Request], Any]]:
        apis = (
            (CREATE_TOPICS, wire.CREATE_TOPICS_APIS, self.handle_create_topics),
            (DELETE_TOPICS, wire.DELETE_TOPICS_APIS, self.handle_delete_topics),
            (CREATE_PARTITIONS, wire.CREATE_PARTITIONS_APIS, self.handle_create_partitions),
        )
        return {
            (key, version): handler for key, versions, handler in apis for version in range(len(versions))
        }

    def _check(self, repeated: bool) -> None:
        """Refuse a topic when this broker is not the controller (41), or the request names it twice (42)."""
        controller = self.controller()
        if controller is None or not controller.active:
            raise NotControllerError("This is not the correct controller for this cluster.")
        if repeated:
            raise AdminOperationError("The request names this topic more than once.")

    # -- CreateTopics ---------------------------------------------------------------------------------------

    def handle_create_topics(self, request: v08.Request) -> Any:
        body, version = request.body, request.api_version
        validate_only = getattr(body, "validate_only", False)
        repeated = _repeated(t.topic for t in body.topics)
        creatable = self._authorized(Operation.CREATE, (t.topic for t in body.topics))
        outcomes = {
            t.topic: self._create(t, version, validate_only, t.topic in repeated)
            if t.topic in creatable
            else Outcome(ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Authorization failed.")
            for t in body.topics
        }

        def respond(timed_out: set[str]) -> list:
            results = [
                self._create_result(version, name, outcomes[name], name in timed_out) for name in outcomes
            ]
            throttle = [0] if version >= 2 else []
            response = wire.CREATE_TOPICS_APIS[version][1](*throttle, results)
            return v08.encode_response(request.correlation_id, response)

        wait = {} if validate_only else {t: len(o.assignment) for t, o in outcomes.items() if not o.error}
        return self._respond_when(
            lambda: {t for t in wait if not self._has_leaders(t, wait[t])}, body.timeout_ms, respond
        )

    def _create(self, topic: Any, version: int, validate_only: bool, repeated: bool) -> Outcome:
        """One topic of a CreateTopics request: checked, and written unless ``validate_only``."""
        try:
            self._check(repeated)
            validate_topic_08(topic.topic)
            if self.zk_client.exists(topic_path(topic.topic)):
                raise TopicExistsError(f"Topic '{topic.topic}' already exists.")
            configs = config_values(topic.configs)
            parse_topic_overrides(configs)
            assignment = self._assignment(topic, version)
            check_assignment(assignment)
            if not validate_only:
                admin.write_topic(self.zk_client, topic.topic, assignment, configs)
            return Outcome(ErrorCode.NONE, None, assignment, configs)
        except (
            KafkaError
        ) as exc:  # InvalidTopicError (17), TopicExistsError (36), ... InvalidConfigError (40)
            return Outcome(error_code(exc), str(exc))

    def _assignment(self, topic: Any, version: int) -> dict[int, list[int]]:
        if topic.assignments:
            if topic.num_partitions != -1 or topic.replication_factor != -1:
                raise AdminOperationError(
                    "Both numPartitions or replicationFactor and replicasAssignments were set. "
                    "Both cannot be used at the same time.",
                )
            return {a.partition: list(a.broker_ids) for a in topic.assignments}
        partitions, factor = topic.num_partitions, topic.replication_factor
        if version >= 4 and partitions == wire.DEFAULT_PARTITIONS:
            partitions = self.config["num.partitions"]
        if version >= 4 and factor == wire.DEFAULT_REPLICATION_FACTOR:
            factor = self.config["default.replication.factor"]
        return assign_replicas_to_brokers(admin.live_broker_ids(self.zk_client), partitions, factor)

    def _create_result(self, version: int, topic: str, outcome: Outcome, timed_out: bool) -> Any:
        error, message = outcome.error, outcome.message
        if timed_out:
            error, message = ErrorCode.REQUEST_TIMED_OUT, f"Topic '{topic}' has no leaders yet."
        if version == 0:
            return wire.CreateTopicResult(topic, error)
        if version < 5:
            return wire.CreateTopicResultV1(topic, error, message)
        if outcome.error:
            return wire.CreateTopicResultV5(topic, error, message, -1, -1, [])
        partitions, factor = len(outcome.assignment), len(outcome.assignment[0])
        configs = self._topic_configs(outcome.configs)
        return wire.CreateTopicResultV5(topic, error, message, partitions, factor, configs)

    def _topic_configs(self, overrides: dict[str, str]) -> list:
        """A created topic's configs as DescribeConfigs lists them (v5 answers them)."""
        return [
            wire.CreatedTopicConfig(e["name"], e["value"], e["read_only"], e["config_source"], e["is_sensitive"])
            for e in topic_config_entries(self.config, overrides)
        ]

    # -- DeleteTopics ---------------------------------------------------------------------------------------

    def handle_delete_topics(self, request: v08.Request) -> Any:
        body, version = request.body, request.api_version
        repeated = _repeated(body.topics)
        deletable = self._authorized(Operation.DELETE, body.topics)
        errors = {
            topic: self._delete(topic, version, topic in repeated)
            if topic in deletable
            else ErrorCode.TOPIC_AUTHORIZATION_FAILED
            for topic in body.topics
        }

        def respond(timed_out: set[str]) -> list:
            results = [
                wire.DeleteTopicResult(t, ErrorCode.REQUEST_TIMED_OUT if t in timed_out else e)
                for t, e in errors.items()
            ]
            throttle = [0] if version >= 1 else []
            return v08.encode_response(
                request.correlation_id, wire.DELETE_TOPICS_APIS[version][1](*throttle, results)
            )

        marked = [t for t, e in errors.items() if e == ErrorCode.NONE]
        return self._respond_when(
            lambda: {t for t in marked if self.metadata.snapshot().topics.get(t)}, body.timeout_ms, respond
        )

    def _delete(self, topic: str, version: int, repeated: bool) -> int:
        try:
            self._check(repeated)
        except KafkaError as exc:
            return error_code(exc)
        if not self.metadata.snapshot().topics.get(topic):
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        if not self.config["delete.topic.enable"]:  # Kafka 2.1: INVALID_REQUEST to v0-v2, 73 from v3
            return ErrorCode.TOPIC_DELETION_DISABLED if version >= 3 else ErrorCode.INVALID_REQUEST
        admin.mark_topic_for_deletion(self.zk_client, topic)
        return ErrorCode.NONE

    # -- CreatePartitions -----------------------------------------------------------------------------------

    def handle_create_partitions(self, request: v08.Request) -> Any:
        body, version = request.body, request.api_version
        repeated = _repeated(t.topic for t in body.topics)
        alterable = self._authorized(Operation.ALTER, (t.topic for t in body.topics))
        outcomes = {
            t.topic: self._grow(t, t.topic in repeated, body.validate_only)
            if t.topic in alterable
            else Outcome(ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Authorization failed.")
            for t in body.topics
        }

        def respond(timed_out: set[str]) -> list:
            results = []
            for topic, outcome in outcomes.items():
                error, message = outcome.error, outcome.message
                if topic in timed_out:
                    error, message = (
                        ErrorCode.REQUEST_TIMED_OUT,
                        f"Topic '{topic}': new partitions have no leaders yet.",
                    )
                results.append(wire.PartitionsResult(topic, error, message))
            response = wire.CREATE_PARTITIONS_APIS[version][1](0, results)
            return v08.encode_response(request.correlation_id, response)

        wait = (
            {} if body.validate_only else {t: len(o.assignment) for t, o in outcomes.items() if not o.error}
        )
        return self._respond_when(
            lambda: {t for t in wait if not self._has_leaders(t, wait[t])}, body.timeout_ms, respond
        )

    def _grow(self, topic: Any, repeated: bool, validate_only: bool) -> Outcome:
        """One topic of a CreatePartitions request: checked, and its assignment grown unless ``validate_only``."""
        try:
            self._check(repeated)
            existing = admin.topic_assignment(self.zk_client, topic.topic)
            if existing is None:
                raise UnknownTopicOrPartitionError(f"The topic '{topic.topic}' does not exist.")
            if self.zk_client.exists(delete_topic_path(topic.topic)):
                raise InvalidTopicError(f"The topic '{topic.topic}' is queued for deletion.")
            manual = None if topic.assignments is None else [a.broker_ids for a in topic.assignments]
            added = new_partitions(existing, topic.count, admin.live_broker_ids(self.zk_client), manual)
            if not validate_only:
                admin.write_added_partitions(self.zk_client, topic.topic, existing, added)
            return Outcome(ErrorCode.NONE, None, {**existing, **added})
        except (
            KafkaError
        ) as exc:  # 3, 17, InvalidPartitionsError (37), 38, InvalidReplicaAssignmentError (39)
            return Outcome(error_code(exc), str(exc))

    # -- waiting for the controller -------------------------------------------------------------------------

    def _has_leaders(self, topic: str, partitions: int) -> bool:
        known = self.metadata.snapshot().topics.get(topic, {})
        return len(known) >= partitions and all(m.state is not None and m.leader >= 0 for m in known.values())

    def _respond_when(
        self, pending: Callable[[], set[str]], timeout_ms: int, respond: Callable[[set[str]], list]
    ) -> Any:
        """``respond(set())`` once ``pending()`` is empty, or ``respond(pending())`` after ``timeout_ms``; at once
        when nothing waits or the timeout is not positive (Kafka answers such requests without waiting)."""
        if timeout_ms <= 0 or not pending():
            return respond(set())
        result = PendingResponse()
        waiter = gevent.spawn(_poll, pending, timeout_ms / 1000.0, respond, result)
        result.on_cancel = waiter.kill
        return result


def _poll(
    pending: Callable[[], set[str]], timeout_s: float, respond: Callable, result: PendingResponse
) -> None:
    with gevent.Timeout(timeout_s, False):
        while pending():
            gevent.sleep(POLL_INTERVAL_S)
    try:
        result.set(respond(pending()))
    except Exception as exc:  # the connection closes: a client never waits for an answer that cannot come
        log.exception("admin response failed")
        result.set_exception(exc)


def _repeated(names: Iterable[str]) -> set[str]:
    return {name for name, count in Counter(names).items() if count > 1}


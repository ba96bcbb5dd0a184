"""OffsetApis: the broker's handlers for the offset APIs the group coordinator serves, every version Kafka 3.4
serves in ZooKeeper mode: FindCoordinator v0-v4 (creating ``__consumer_offsets`` on first use; v4 answers a
batch of keys), OffsetCommit v1-v8 and OffsetFetch v1-v8 (offsets in ``__consumer_offsets``; v0 of both is
ZooKeeper's, served by ``server.apis08``), OffsetDelete v0. One handler per API serves all its versions: the
answer's values are computed once and ``versioned.make`` keeps the fields the version has (throttle 0).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from zkafka.cluster.end_point import registered_end_point
from zkafka.coordinator.coordinator import GroupCoordinator
from zkafka.coordinator.offsets_schema import NO_LEADER_EPOCH, OffsetAndMetadata
from zkafka.network.server import session_listener
from zkafka.protocol import v08
from zkafka.protocol.api_keys import GROUP_COORDINATOR, OFFSET_COMMIT, OFFSET_DELETE, OFFSET_FETCH
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.offset_commit import DEFAULT_RETENTION, GROUP_KEY_TYPE, TRANSACTION_KEY_TYPE
from zkafka.protocol.versioned import make
from zkafka.security.acl import Operation
from zkafka.security.auth_helper import ALLOW_ALL, GROUP, TOPIC, AuthHelper
from zkafka.topic import OFFSETS_TOPIC

log = logging.getLogger(__name__)

DEFAULT_TIMESTAMP = -1  # OffsetCommit v1: "now"
NO_THROTTLE = 0  # an answer over the request quota gets its throttle time written in (throttling.py)
TopicPartition = tuple[str, int]


def answer(request: v08.Request, **values: Any) -> list:
    """The response of the request's version made from ``values`` (``throttle_time_ms`` 0 where it has one)."""
    response_class = v08.SCHEMAS[(request.api_key, request.api_version)][1]
    return v08.encode_response(
        request.correlation_id, make(response_class, throttle_time_ms=NO_THROTTLE, **values)
    )


def by_topic(results: dict[TopicPartition, dict]) -> list[dict]:
    """Per-partition answers (dicts with ``partition``) grouped by topic in first-seen order."""
    topics: dict[str, list] = {}
    for (topic, partition), values in results.items():
        topics.setdefault(topic, []).append({"partition": partition, **values})
    return [{"topic": topic, "partitions": partitions} for topic, partitions in topics.items()]


class OffsetApis:
    """FindCoordinator, OffsetCommit, OffsetFetch and OffsetDelete of the group coordinator."""

    def __init__(
        self,
        coordinator: GroupCoordinator,
        snapshot: Callable[[], Any],
        create_offsets_topic: Callable[[], None],
        auth: AuthHelper = ALLOW_ALL,
    ) -> None:
        self.coordinator = coordinator
        self.snapshot = snapshot
        self.create_offsets_topic = create_offsets_topic
        self.auth = auth

    def handlers(self) -> dict[tuple[int, int], Callable[[v08.Request], Any]]:
        entries = {(GROUP_COORDINATOR, v): self.handle_find_coordinator for v in range(5)}
        entries |= {(OFFSET_COMMIT, v): self.handle_offset_commit for v in range(1, 9)}
        entries |= {(OFFSET_FETCH, v): self.handle_offset_fetch for v in range(1, 9)}
        entries[(OFFSET_DELETE, 0)] = self.handle_offset_delete
        return entries

    # -- FindCoordinator ------------------------------------------------------------------------------------

    def handle_find_coordinator(self, request: v08.Request) -> list:
        body = request.body
        key_type = getattr(body, "key_type", GROUP_KEY_TYPE)
        keys = body.coordinator_keys if request.api_version >= 4 else [body.group_id]
        coordinators = [self._coordinator(key, key_type) for key in keys]
        first = coordinators[0] if coordinators else self._coordinator("", key_type)
        return answer(request, **{n: v for n, v in first.items() if n != "key"}, coordinators=coordinators)

    def _coordinator(self, key: str, key_type: int) -> dict:
        if key_type == GROUP_KEY_TYPE and not self.auth.authorize(Operation.DESCRIBE, GROUP, key):
            error = ErrorCode.GROUP_AUTHORIZATION_FAILED
            return {"key": key, "error": error, "error_message": None, "node_id": -1, "host": "", "port": -1}
        if key_type != GROUP_KEY_TYPE:
            error = (
                ErrorCode.GROUP_COORDINATOR_NOT_AVAILABLE
                if key_type == TRANSACTION_KEY_TYPE
                else ErrorCode.INVALID_REQUEST
            )
            message = (
                "zkafka has no transaction coordinator"
                if key_type == TRANSACTION_KEY_TYPE
                else "unknown key type"
            )
            return {
                "key": key,
                "error": error,
                "error_message": message,
                "node_id": -1,
                "host": "",
                "port": -1,
            }
        snapshot = self.snapshot()
        if not snapshot.topics.get(OFFSETS_TOPIC):
            try:
                self.create_offsets_topic()
            except Exception as exc:
                log.warning("could not create %s: %s", OFFSETS_TOPIC, exc)
        leader = snapshot.leader_of(OFFSETS_TOPIC, self.coordinator.partition_for(key))
        # the leader's end point on the listener the request came in on, as Metadata answers
        end_point = registered_end_point(leader, session_listener()) if leader is not None else None
        if end_point is None:
            error = ErrorCode.GROUP_COORDINATOR_NOT_AVAILABLE
            return {"key": key, "error": error, "error_message": None, "node_id": -1, "host": "", "port": -1}
        return {
            "key": key, "error": ErrorCode.NONE, "error_message": None,
            "node_id": leader.id, "host": end_point.host, "port": end_point.port,
        }  # fmt: skip

    # -- OffsetCommit ---------------------------------------------------------------------------------------

    def handle_offset_commit(self, request: v08.Request) -> Any:
        body = request.body
        offsets, errors = self._commit_values(request)

        def respond(stored: dict[TopicPartition, int]) -> list:
            answers = errors | stored
            wanted = {
                (t.topic, p.partition): {"error": answers[(t.topic, p.partition)]}
                for t in body.topics
                for p in t.partitions
            }
            return answer(request, topics=by_topic(wanted))

        if not offsets:
            return respond({})
        # answered once the commit is replicated (offsets.commit.required.acks), maybe later
        instance_id = getattr(body, "group_instance_id", None)
        return self.coordinator.commit_offsets(
            body.group_id, body.generation_id, body.member_id or "", offsets, respond, instance_id
        )

    def _commit_values(self, request: v08.Request) -> tuple[dict, dict]:
        """The offsets to store (v1's timestamps, v2-v4's retention), and the errors of the others: without Read
        on the group (GROUP_AUTHORIZATION_FAILED) or on the topic (TOPIC_AUTHORIZATION_FAILED), unknown topics."""
        body = request.body
        now = self.coordinator.now_ms()
        retention = self.coordinator.config.retention_ms
        if getattr(body, "retention_time_ms", DEFAULT_RETENTION) != DEFAULT_RETENTION:
            retention = body.retention_time_ms
        known = self.snapshot().topics
        offsets: dict[TopicPartition, OffsetAndMetadata] = {}
        errors: dict[TopicPartition, int] = {}
        group_read = self.auth.authorize(Operation.READ, GROUP, body.group_id)
        readable = self.auth.filter_authorized(Operation.READ, TOPIC, (data.topic for data in body.topics))
        for data in body.topics:
            for p in data.partitions:
                tp = (data.topic, p.partition)
                if not group_read:
                    errors[tp] = ErrorCode.GROUP_AUTHORIZATION_FAILED
                    continue
                if data.topic not in readable:
                    errors[tp] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
                    continue
                if not known.get(data.topic):
                    errors[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                    continue
                timestamp = getattr(p, "timestamp", DEFAULT_TIMESTAMP)
                expire = (now if timestamp == DEFAULT_TIMESTAMP else timestamp) + retention
                epoch = getattr(p, "committed_leader_epoch", NO_LEADER_EPOCH)  # v6+
                offsets[tp] = OffsetAndMetadata(p.offset, p.metadata or "", now, expire, epoch)
        return offsets, errors

    # -- OffsetFetch ----------------------------------------------------------------------------------------

    def handle_offset_fetch(self, request: v08.Request) -> list:
        body = request.body
        if request.api_version >= 8:
            groups = [self._fetch_group(g.group_id, g.topics) for g in body.groups]
            return answer(request, groups=groups)
        group = self._fetch_group(body.group_id, body.topics)
        if request.api_version < 2 and group["error"]:  # v0/v1 carry the error in each partition only
            group["error"] = ErrorCode.NONE
        return answer(request, **group)

    def _fetch_group(self, group_id: str, topics: list | None) -> dict:
        """One group's answer: its topics and its error (v2+; each partition carries it too before v2). Without
        Describe on the group: GROUP_AUTHORIZATION_FAILED; on a topic asked: its partitions TOPIC_AUTHORIZATION_FAILED
        (every topic asked for: those the principal may not Describe left out)."""
        if not self.auth.authorize(Operation.DESCRIBE, GROUP, group_id):
            error = ErrorCode.GROUP_AUTHORIZATION_FAILED
            denied = {} if topics is None else {(t.topic, p): error for t in topics for p in t.partitions}
            return {"group_id": group_id, "topics": by_topic(_no_offsets(denied)), "error": error}
        wanted = None if topics is None else [(t.topic, p) for t in topics for p in t.partitions]
        error, offsets = self.coordinator.fetch_offsets(group_id, wanted or None)
        described = self.auth.filter_authorized(Operation.DESCRIBE, TOPIC, (t for t, _ in offsets))
        if topics is None:
            offsets = {tp: value for tp, value in offsets.items() if tp[0] in described}
        results = {}
        for tp, value in offsets.items():
            if tp[0] not in described:
                results[tp] = _no_offsets({tp: ErrorCode.TOPIC_AUTHORIZATION_FAILED})[tp]
            elif value is None:
                results[tp] = {"offset": -1, "committed_leader_epoch": -1, "metadata": "", "error": error}
            else:
                results[tp] = {
                    "offset": value.offset,
                    "committed_leader_epoch": value.leader_epoch,
                    "metadata": value.metadata,
                    "error": 0,
                }
        return {"group_id": group_id, "topics": by_topic(results), "error": error}

    # -- OffsetDelete ---------------------------------------------------------------------------------------

    def handle_offset_delete(self, request: v08.Request) -> list:
        """Delete on the group (else GROUP_AUTHORIZATION_FAILED), Read on each topic."""
        body = request.body
        if not self.auth.authorize(Operation.DELETE, GROUP, body.group_id):
            return answer(request, error=ErrorCode.GROUP_AUTHORIZATION_FAILED, topics=[])
        readable = self.auth.filter_authorized(Operation.READ, TOPIC, (t.topic for t in body.topics))
        partitions = [(t.topic, p.partition) for t in body.topics for p in t.partitions if t.topic in readable]
        error, errors = self.coordinator.delete_offsets(body.group_id, partitions)
        denied = [(t.topic, p.partition) for t in body.topics for p in t.partitions if t.topic not in readable]
        errors = {**errors, **dict.fromkeys(denied, ErrorCode.TOPIC_AUTHORIZATION_FAILED)}
        topics = by_topic({tp: {"error": code} for tp, code in errors.items()})
        return answer(request, error=error, topics=topics)


def _no_offsets(errors: dict[TopicPartition, int]) -> dict[TopicPartition, dict]:
    """OffsetFetch answers without an offset, each with its error."""
    return {tp: {"offset": -1, "committed_leader_epoch": -1, "metadata": "", "error": e} for tp, e in errors.items()}

"""KafkaApis: the 0.8.2 broker's request handlers, one short method per API key.

``handle(request)`` takes a decoded request (``protocol.v08.Request``) and returns the response parts, None
(a Produce with acks 0), or a pending result the network layer waits on (a fetch parked in the purgatory).
An API or version a 0.8.2 broker does not serve raises InvalidRequestError, and so does an acks=0 produce
that failed: the server then closes that one connection, as 0.8.2 does.

Served: Produce v0, Fetch v0 (``fetch_apis``), ListOffsets v0 (``list_offsets``), Metadata v0-v9 (``MetadataCache.metadata_response``),
OffsetCommit v0 and OffsetFetch v0 (offsets kept in ZooKeeper at ``/consumers/<group>/offsets/<topic>/<partition>``); with a group coordinator (``group_apis``)
also 0.9's Produce v1 (and Produce v2-v8: record batches, converted to the log's message format v0 by
``records.down_convert``), Fetch v1-v11 with fetch sessions (``fetch_session``), ListOffsets v1-v5 and the coordinator's APIs at every
version Kafka 3.4 serves in ZooKeeper mode (``zkafka.coordinator.group_apis``, ``offset_apis``); ApiVersions
(0.10's key 18), listing exactly the versions served here, so clients that ask first need not be told the
broker version; with ``admin_apis`` CreateTopics, DeleteTopics and CreatePartitions
(``zkafka.server.admin_apis``); with ``replica_apis`` the controller's
requests (LeaderAndIsr, StopReplica, UpdateMetadata) and ControlledShutdown (``zkafka.server.replica_apis``).

A produce goes to the replica manager's ``append_messages``, which answers it at once or, with acks -1 (or
N > 1), parks it as a DelayedProduce until its replicas have it. A fetch is ``FetchApis``' (a fetch short of
``min_bytes`` waits in the replica manager's fetch purgatory), a ListOffsets ``ListOffsetsApis``'.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from zkafka.errors import (
    GroupAuthorizationFailedError,
    InvalidRequestError,
    KafkaError,
    OffsetMetadataTooLargeError,
    TopicAuthorizationFailedError,
    UnknownTopicOrPartitionError,
)
from zkafka.network.sasl_authenticator import SaslApis
from zkafka.protocol import v08
from zkafka.protocol.api_keys import (
    API_NAMES,
    API_VERSIONS,
    METADATA,
    OFFSET_COMMIT,
    OFFSET_FETCH,
    PRODUCE,
)
from zkafka.protocol.api_versions import API_VERSIONS_APIS, api_versions_response
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.fetch import FETCH_APIS
from zkafka.protocol.metadata import METADATA_APIS
from zkafka.protocol.offset_commit import (
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
    OffsetCommitResponseV0,
    OffsetFetchResponsePartition,
    OffsetFetchResponseTopic,
    OffsetFetchResponseV0,
)
from zkafka.protocol.offsets import LIST_OFFSETS_APIS
from zkafka.protocol.produce import (
    FIRST_BATCH_VERSION,
    FIRST_ZSTD_VERSION,
    NO_TIMESTAMP,
    PRODUCE_APIS,
    response_partition_class,
    response_topic_class,
)
from zkafka.records.compression import ZSTD
from zkafka.records.down_convert import first_magic
from zkafka.records.record_batch import MAGIC as MAGIC_V2
from zkafka.records.record_batch import RECORD_BATCH_OVERHEAD, read_batch_header
from zkafka.security.acl import Operation
from zkafka.security.auth_helper import ALLOW_ALL, GROUP, TOPIC, AuthHelper
from zkafka.server.delayed_produce import ProduceStatus, log_refused
from zkafka.server.fetch_apis import FetchApis
from zkafka.server.fetch_session import FetchSessionCache
from zkafka.server.list_offsets import ListOffsetsApis
from zkafka.server.metadata_cache import MetadataCache
from zkafka.server.offsets_zk import ZkOffsetStore
from zkafka.server.replica_manager import ReplicaManager, error_code
from zkafka.server.throttling import Throttler, is_exempt, throttled

log = logging.getLogger(__name__)


class ProduceFailedError(KafkaError):
    """An acks=0 produce failed: there is no response to carry the error, so the connection is closed."""


class KafkaApis:
    """Maps each (API key, version) a 0.8.2 broker answers to the call that serves it."""

    def __init__(
        self,
        replica_manager: ReplicaManager,
        metadata: MetadataCache,
        *,
        offset_store: ZkOffsetStore | None = None,
        offset_metadata_max_bytes: int = 4096,
        halt: Callable[[OSError], None] | None = None,
        group_apis: Any = None,
        on_sent: Callable[[str, int], None] | None = None,
        replica_apis: Any = None,
        admin_apis: Any = None,
        more_apis: tuple[Any, ...] = (),
        fetch_sessions: FetchSessionCache | None = None,
        auth: AuthHelper = ALLOW_ALL,
        throttler: Throttler | None = None,
    ) -> None:
        self.auth = auth
        self.replica_manager = replica_manager
        self.metadata = metadata
        self.offset_store = offset_store
        self.offset_metadata_max_bytes = offset_metadata_max_bytes
        self.halt = halt
        self.on_sent = on_sent  # told the topic and size of every log region a fetch response sends (metrics)
        self.throttler = throttler  # client quotas (None: none)
        self._handlers: dict[tuple[int, int], Callable[[v08.Request], Any]] = {
            (PRODUCE, 0): self.handle_produce,
            **{(METADATA, version): self.handle_metadata for version in range(len(METADATA_APIS))},
            (OFFSET_COMMIT, 0): self.handle_offset_commit,
            (OFFSET_FETCH, 0): self.handle_offset_fetch,
        }
        if group_apis is not None:
            self._handlers.update(group_apis.handlers())
            for version in range(1, len(PRODUCE_APIS)):
                self._handlers[(PRODUCE, version)] = self.handle_produce
        # 0.8.2 serves Fetch and ListOffsets v0; with a group coordinator the versions up to Kafka 2.3's
        newest = group_apis is not None
        self.fetch_sessions = fetch_sessions if fetch_sessions is not None else FetchSessionCache()
        fetch_versions = range(len(FETCH_APIS) if newest else 1)
        offsets_versions = range(len(LIST_OFFSETS_APIS) if newest else 1)
        fetch_apis = FetchApis(replica_manager, self.fetch_sessions, fetch_versions, on_sent, auth, throttler)
        self._handlers.update(fetch_apis.handlers())
        self._handlers.update(ListOffsetsApis(replica_manager, offsets_versions, auth).handlers())
        for version in range(len(API_VERSIONS_APIS)):
            self._handlers[(API_VERSIONS, version)] = self.handle_api_versions
        self._api_versions_frames: dict[int | None, bytes] = {}  # encoded answers by version (None: too new)
        sasl_apis = SaslApis() if newest else None  # ILLEGAL_SASL_STATE once authenticated (0.10+ brokers)
        for apis in (replica_apis, admin_apis, *more_apis, sasl_apis):
            if apis is not None:
                self._handlers.update(apis.handlers())

    def handle(self, request: v08.Request) -> Any:
        """The request's answer; timed against the client's request quota once one is set (KIP-124)."""
        if request.api_key == API_VERSIONS:
            handler = self.handle_api_versions
        else:
            handler = self._handlers.get((request.api_key, request.api_version))
            if handler is None:
                name = API_NAMES.get(request.api_key, f"API key {request.api_key}")
                raise InvalidRequestError(f"{name} v{request.api_version} is not served by a 0.8.2 broker")
            log.debug("%s from %s: %s", request.name, request.client_id, request.body)
        throttler = self.throttler
        if throttler is None or not throttler.managers.request.enabled:
            return handler(request)
        return throttler.timed(request, handler, is_exempt(request, self.auth))

    __call__ = handle

    def handler_for(self, request: v08.Request) -> Callable[[v08.Request], Any] | None:
        """The method serving ``request``'s API key and version (None: not served)."""
        return self._handlers.get((request.api_key, request.api_version))

    # -- ApiVersions --------------------------------------------------------------------------------------

    def handle_api_versions(self, request: v08.Request) -> list:
        """The ranges this broker serves, in the version asked for (v0-v3); a newer version gets them in a v0
        response with UNSUPPORTED_VERSION, as later brokers answer it (KIP-511), so the client asks again
        with the highest version both speak."""
        version = request.api_version if (API_VERSIONS, request.api_version) in self._handlers else None
        frame = self._api_versions_frames.get(version)
        if frame is None:  # once per version: every client opens each connection with one
            ranges = v08.api_version_ranges(self._handlers)
            if version is None:
                body = api_versions_response(0, ErrorCode.UNSUPPORTED_VERSION, ranges)
            else:
                body = api_versions_response(version, ErrorCode.NONE, ranges)
            (frame,) = v08.encode_response(0, body)
            self._api_versions_frames[version] = frame
        return [v08.with_correlation_id(frame, request.correlation_id)]

    # -- Produce ------------------------------------------------------------------------------------------

    def handle_produce(self, request: v08.Request) -> Any:
        body = request.body

        entries = []
        refused: list[ProduceStatus] = []  # partitions not written to this principal or breaking the version's rules
        writable = self.auth.filter_authorized(Operation.WRITE, TOPIC, (data.topic for data in body.topics))
        for data in body.topics:
            for p in data.partitions:
                error = produce_records_error(request.api_version, p.message_set)
                if data.topic not in writable:
                    error = ErrorCode.TOPIC_AUTHORIZATION_FAILED
                if error:
                    refused.append(ProduceStatus(data.topic, p.partition, error, -1, -1, False))
                else:
                    entries.append((data.topic, p.partition, p.message_set))
        size = sum(len(p.message_set) for data in body.topics for p in data.partitions)
        throttler = self.throttler
        client, timer = throttler.context(request) if throttler is not None else (None, None)

        def respond(statuses: list[ProduceStatus]) -> list | None:
            # acks 0: no answer to carry a throttle time, so no handling time counted (Kafka)
            throttle_ms = throttler.produce(client, size, timer if body.acks else None) if throttler else 0
            statuses = statuses + refused
            log_refused(statuses, request.correlation_id, request.client_id)
            if body.acks == 0:
                failed = [(s.topic, s.partition, s.error) for s in statuses if s.error]
                if failed:
                    raise ProduceFailedError(f"acks=0 produce failed for (topic, partition, error) {failed}")
                return throttled(None, throttle_ms)
            answer = produce_response(request.api_version, statuses, throttle_ms)
            return throttled(v08.encode_response(request.correlation_id, answer), throttle_ms)

        return self.replica_manager.append_messages(body.timeout_ms, body.acks, entries, respond)

    # -- Metadata -----------------------------------------------------------------------------------------

    def handle_metadata(self, request: v08.Request) -> list:
        """Metadata v0-v9, answered from the metadata cache."""
        return v08.encode_response(request.correlation_id, self.metadata.metadata_response(request.body, self.auth))

    # -- OffsetCommit / OffsetFetch v0 (ZooKeeper) --------------------------------------------------------

    def handle_offset_commit(self, request: v08.Request) -> list:
        body = request.body
        topics = [
            OffsetCommitResponseTopic(
                data.topic,
                [
                    OffsetCommitResponsePartition(p.partition, self._commit(body.group_id, data.topic, p))
                    for p in data.partitions
                ],
            )
            for data in body.topics
        ]
        return v08.encode_response(request.correlation_id, OffsetCommitResponseV0(topics))

    def _commit(self, group: str, topic: str, p: Any) -> int:
        try:
            self._authorize_offsets(Operation.READ, group, topic)
            self.metadata.ensure_topic_exists(topic)
            if p.metadata is not None and len(p.metadata) > self.offset_metadata_max_bytes:
                raise OffsetMetadataTooLargeError(
                    f"metadata of {len(p.metadata)} characters over offset.metadata.max.bytes"
                )
            self._offsets_store().commit(group, topic, p.partition, p.offset)
            return 0
        except KafkaError as exc:
            return error_code(exc)
        except Exception:
            log.exception("commit of %s %s-%d failed", group, topic, p.partition)
            return ErrorCode.UNKNOWN

    def handle_offset_fetch(self, request: v08.Request) -> list:
        body = request.body
        topics = [
            OffsetFetchResponseTopic(
                data.topic, [self._fetch_offset(body.group_id, data.topic, p) for p in data.partitions]
            )
            for data in body.topics
        ]
        return v08.encode_response(request.correlation_id, OffsetFetchResponseV0(topics))

    def _fetch_offset(self, group: str, topic: str, partition: int) -> Any:
        try:
            self._authorize_offsets(Operation.DESCRIBE, group, topic)
            self.metadata.ensure_topic_exists(topic)
            offset = self._offsets_store().fetch(group, topic, partition)
            if offset is None:
                raise UnknownTopicOrPartitionError(f"no offset committed for {group} {topic}-{partition}")
            return OffsetFetchResponsePartition(partition, offset, "", 0)
        except KafkaError as exc:
            return OffsetFetchResponsePartition(partition, -1, "", error_code(exc))
        except Exception:
            log.exception("offset fetch of %s %s-%d failed", group, topic, partition)
            return OffsetFetchResponsePartition(partition, -1, "", ErrorCode.UNKNOWN)

    def _authorize_offsets(self, operation: Operation, group: str, topic: str) -> None:
        """v0's offsets in ZooKeeper as the coordinator's: ``operation`` (commit Read, fetch Describe) on the
        group, then on the topic."""
        if not self.auth.authorize(operation, GROUP, group):
            raise GroupAuthorizationFailedError(f"{operation.kafka_name} on group {group} is not authorized.")
        if not self.auth.authorize(operation, TOPIC, topic):
            raise TopicAuthorizationFailedError(f"{operation.kafka_name} on topic {topic} is not authorized.")

    def _offsets_store(self) -> ZkOffsetStore:
        if self.offset_store is None:
            raise KafkaError("this broker keeps no consumer offsets (no ZooKeeper)")
        return self.offset_store


def produce_records_error(api_version: int, message_set: Any) -> int:
    """The error a partition's records get before any append (Kafka's ``ProduceRequest.validateRecords``):
    from v3 record batches must be exactly one batch (INVALID_RECORD), zstd-compressed only from v7
    (UNSUPPORTED_COMPRESSION_TYPE); 0 when they may go to the log.

    Unlike Kafka, a v3+ request may carry magic 0 or 1 messages (librdkafka, which picks the message format
    from the Fetch versions too, sent those while this broker served Fetch v0-v1 only)."""
    if api_version < FIRST_BATCH_VERSION or first_magic(message_set) != MAGIC_V2:
        return ErrorCode.NONE
    if len(message_set) < RECORD_BATCH_OVERHEAD:
        return ErrorCode.INVALID_RECORD
    try:
        header = read_batch_header(message_set)
    except KafkaError:
        return ErrorCode.CORRUPT_MESSAGE
    if header.size != len(message_set):
        return ErrorCode.INVALID_RECORD
    if header.compression == ZSTD and api_version < FIRST_ZSTD_VERSION:
        return ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
    return ErrorCode.NONE


def produce_response(api_version: int, statuses: list[ProduceStatus], throttle_ms: int = 0) -> Any:
    """The answer of a ``api_version`` produce: v1 adds ``throttle_time_ms`` (a client over its quota), v2
    ``log_append_time_ms`` (-1 unless the log stamps LogAppendTime), v5 ``log_start_offset``, v8 ``record_errors``
    (none) and ``error_message``."""
    partition_class = response_partition_class(api_version)
    topics: dict[str, list] = {}
    for s in statuses:
        offset = s.base_offset if s.error in (0, ErrorCode.REQUEST_TIMED_OUT) else -1
        fields: tuple = (s.partition, s.error, offset)
        if api_version >= 2:
            fields += (s.log_append_time if offset >= 0 else NO_TIMESTAMP,)
        if api_version >= 5:
            fields += (s.log_start_offset if offset >= 0 else -1,)
        if api_version >= 8:
            fields += ([], None)
        topics.setdefault(s.topic, []).append(partition_class(*fields))
    topic_class = response_topic_class(api_version)
    answer = [topic_class(topic, parts) for topic, parts in topics.items()]
    response_class = PRODUCE_APIS[api_version][1]
    return response_class(answer, throttle_ms) if api_version >= 1 else response_class(answer)

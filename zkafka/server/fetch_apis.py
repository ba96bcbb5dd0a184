"""The Fetch handler of the 0.8 line's broker, v0-v11: Kafka's ``KafkaApis.handleFetchRequest``.

A request first gets its fetch session context (``fetch_session``: v7+ may open, continue or close a session;
earlier versions are sessionless), which says which partitions to read: those named, or for an incremental
fetch every partition of its session. A follower's fetch (replica id >= 0) records its log end offsets with
the replica manager. The reads (``log_read``) answer at once when there are ``min_bytes`` (or an error, or no
wait); otherwise the fetch waits in the replica manager's fetch purgatory (DelayedFetch). Either way the
answer goes through the context, which for an incremental fetch keeps only the partitions that changed.

Each answered partition carries its high watermark, from v4 the last stable offset (the high watermark: this
broker has no transactions, so ``read_committed`` reads what ``read_uncommitted`` does, with an empty list of
aborted transactions instead of null) and from v5 the log start offset; from v11 no preferred read replica
(-1): consumers read from the leader. Its records are ``records_for_fetch_version``'s: converted down to the
newest message format the version reads when the log's is newer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from zkafka.protocol import v08
from zkafka.protocol.api_keys import FETCH
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.fetch import (
    FETCH_RESPONSE,
    FIRST_MAX_BYTES_VERSION,
    FIRST_SESSION_VERSION,
    NO_PREFERRED_READ_REPLICA,
    READ_COMMITTED,
    response_partition_class,
    response_topic_class,
)
from zkafka.protocol.versioned import make
from zkafka.security.acl import Operation
from zkafka.security.auth_helper import ALLOW_ALL, TOPIC, AuthHelper
from zkafka.server.delayed_fetch import DelayedFetch
from zkafka.server.fetch_session import (
    FetchAnswer,
    FetchContext,
    FetchSessionCache,
    PartitionRequest,
    SessionlessContext,
)
from zkafka.server.log_read import PartitionRead, read_from_local_log, records_for_fetch_version
from zkafka.server.replica_manager import ReplicaManager
from zkafka.server.throttling import Throttler, throttled

log = logging.getLogger(__name__)

UNAUTHORIZED_READ = PartitionRead(ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1, None)


class FetchApis:
    """Answers Fetch ``versions`` from the partitions led here, with the broker's fetch sessions."""

    def __init__(
        self,
        replica_manager: ReplicaManager,
        sessions: FetchSessionCache,
        versions: range,
        on_sent: Callable[[str, int], None] | None = None,
        auth: AuthHelper = ALLOW_ALL,
        throttler: Throttler | None = None,
    ) -> None:
        self.replica_manager = replica_manager
        self.sessions = sessions
        self.versions = versions
        self.on_sent = on_sent  # told the topic and size of every log region a fetch response sends (metrics)
        self.auth = auth
        self.throttler = throttler  # consumers' quotas (None: none)

    def handlers(self) -> dict[tuple[int, int], Callable[[v08.Request], Any]]:
        return {(FETCH, version): self.handle_fetch for version in self.versions}

    def handle_fetch(self, request: v08.Request) -> Any:
        body = request.body
        version = request.api_version
        context = self.context(body, version)
        wanted, refused = self.authorized(body.replica_id, context.partitions())
        fetches = [(topic, partition, r.fetch_offset, r.max_bytes) for (topic, partition), r in wanted]
        epochs = [r.current_leader_epoch for _, r in wanted]
        if body.replica_id >= 0:
            self.replica_manager.record_follower_fetch(body.replica_id, fetches)
        throttler = self.throttler if body.replica_id < 0 else None
        client, timer = throttler.context(request) if throttler is not None else (None, None)
        max_bytes, hard_limit, min_bytes = self.limits(body, version, throttler, client)
        reads = read_from_local_log(self.replica_manager, fetches, body.replica_id, max_bytes, epochs, hard_limit)
        committed = version >= 4 and body.isolation_level == READ_COMMITTED

        def respond(reads: list[PartitionRead]) -> list:
            throttle_ms = throttler.fetch(client, sum(r.size for r in reads), timer) if throttler is not None else 0
            if throttle_ms > 0:  # over the quota: an empty answer (Kafka 2.x)
                answer = context.throttled()
            else:
                answered = [(tp, read) for (tp, _), read in zip(wanted, reads, strict=True)]
                answer = context.respond(answered + [(tp, UNAUTHORIZED_READ) for tp, _ in refused])
            if self.on_sent is not None:
                for (topic, _), read in answer.reads:
                    self.on_sent(topic, read.size)
            response = fetch_response(version, answer, committed, throttle_ms)
            return throttled(v08.encode_response(request.correlation_id, response), throttle_ms)

        if (
            body.max_wait_ms <= 0
            or not fetches
            or sum(read.size for read in reads) >= min_bytes
            or any(read.error or read.behind for read in reads)
        ):
            return respond(reads)
        delayed = DelayedFetch(
            body.max_wait_ms,
            min_bytes,
            body.replica_id,
            fetches,
            self.replica_manager,
            respond,
            max_bytes,
            epochs,
            hard_limit,
        )
        purgatory = self.replica_manager.fetch_purgatory
        if max_bytes is None:  # the reads above are the delayed fetch's own check (before v3): it must wait
            purgatory.watch(delayed, delayed.watch_keys())
        else:
            purgatory.try_complete_else_watch(delayed, delayed.watch_keys())
        return delayed.result

    @staticmethod
    def limits(
        body: Any, version: int, throttler: Throttler | None, client: tuple[str, str] | None
    ) -> tuple[int | None, int | None, int]:
        """``(max_bytes, hard_limit, min_bytes)`` of the reads: the request's (max_bytes from v3), a consumer
        under a fetch quota capped at what the quota's windows take at once (Kafka 2.6+: a larger answer is
        always throttled, so it would be answered empty every time); before v3 as a hard limit."""
        max_bytes = body.max_bytes if version >= FIRST_MAX_BYTES_VERSION else None
        cap = throttler.fetch_cap(client) if throttler is not None else None
        if cap is None:
            return max_bytes, None, body.min_bytes
        if max_bytes is None:
            return None, cap, min(body.min_bytes, cap)
        return min(max_bytes, cap), None, min(body.min_bytes, cap)

    def authorized(self, replica_id: int, wanted: list) -> tuple[list, list]:
        """``wanted`` split into the partitions the principal may read and the others: a follower's fetch
        needs ClusterAction on the cluster, a consumer's Read on each topic."""
        if replica_id >= 0:
            allowed = self.auth.authorize_cluster(Operation.CLUSTER_ACTION)
            return (wanted, []) if allowed else ([], wanted)
        topics = self.auth.filter_authorized(Operation.READ, TOPIC, (topic for (topic, _), _ in wanted))
        return [w for w in wanted if w[0][0] in topics], [w for w in wanted if w[0][0] not in topics]

    def context(self, body: Any, version: int) -> FetchContext:
        """The request's fetch session context: sessionless before v7."""
        requested = [
            ((data.topic, p.partition), partition_request(p)) for data in body.topics for p in data.partitions
        ]
        if version < FIRST_SESSION_VERSION:
            return SessionlessContext(requested)
        forgotten = [(data.topic, p) for data in body.forgotten_topics_data for p in data.partitions]
        return self.sessions.new_context(
            body.session_id, body.session_epoch, dict(requested), forgotten, body.replica_id >= 0
        )


def partition_request(p: Any) -> PartitionRequest:
    """A requested partition of any version (the fields it lacks: -1)."""
    return PartitionRequest(
        p.fetch_offset,
        p.max_bytes,
        getattr(p, "log_start_offset", -1),
        getattr(p, "current_leader_epoch", -1),
    )


def fetch_response(version: int, answer: FetchAnswer, read_committed: bool = False, throttle_ms: int = 0) -> Any:
    """The ``version`` answer: the partitions of ``answer`` grouped by topic (in the order first read)."""
    partition_class, topic_class = response_partition_class(version), response_topic_class(version)
    names = partition_class._fields
    topics: dict[str, list] = {}
    for (topic, partition), read in answer.reads:
        failed = read.error != 0
        values = {
            "partition": partition,
            "error": read.error,
            "high_watermark": read.high_watermark,
            "last_stable_offset": -1 if failed else read.high_watermark,
            "log_start_offset": -1 if failed else read.log_start_offset,
            "aborted_transactions": [] if read_committed else None,
            "preferred_read_replica": NO_PREFERRED_READ_REPLICA,
            "message_set": b"",
        }
        if read.region is not None:
            values["error"], values["message_set"] = records_for_fetch_version(
                read, read.fetch_offset, version
            )
        topics.setdefault(topic, []).append(partition_class._make([values[name] for name in names]))
    return make(
        FETCH_RESPONSE[version],
        throttle_time_ms=throttle_ms,
        error=answer.error,
        session_id=answer.session_id,
        topics=[topic_class(topic, partitions) for topic, partitions in topics.items()],
    )

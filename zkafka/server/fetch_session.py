"""Fetch sessions (KIP-227, Fetch v7+): the broker remembers what a fetcher asks for, so that its next
requests name only what changed and the answers carry only the partitions with something new.

A request's ``(session_id, session_epoch)`` says what it is (Kafka's ``FetchMetadata``): epoch 0 is a full
fetch that asks for a new session (closing ``session_id`` if it names one); epoch -1 a full fetch without a
session (``session_id`` 0 and epoch -1 is every pre-v7 request); any other epoch an incremental fetch of
session ``session_id``, which must carry the epoch the session expects next (1, 2, ... wrapping to 1). An
incremental request lists the partitions added or changed (fetch offset, max bytes) and the forgotten ones;
the rest come from the session. Its answer holds only the partitions with records, a new high watermark or
log start offset, or an error.

``FetchSessionCache.new_context`` is Kafka's ``FetchManager.newContext``: it returns the context a fetch is
read and answered through (``partitions`` to read, ``respond`` to pick what the answer holds). The cache keeps
at most ``max.incremental.fetch.session.cache.slots`` sessions; a new session may take a full cache's slot as
Kafka's ``FetchSessionCache.tryEvict`` decides: from a session unused for ``EVICTION_MS``, else from the
least valuable evictable one (a consumer's before a follower's, fewer partitions first) if the newcomer is
worth more (a follower's, or more partitions). Sessions younger than ``EVICTION_MS`` are evictable only by
followers' sessions, and followers' ones by nobody. Pure: no sockets, times passed in by a clock.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from zkafka.protocol.errors import ErrorCode

INVALID_SESSION_ID = 0
INITIAL_EPOCH = 0  # a full fetch that asks for a session
FINAL_EPOCH = -1  # a full fetch without one
EVICTION_MS = 120_000  # Kafka's MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS
DEFAULT_SLOTS = 1000  # max.incremental.fetch.session.cache.slots

TopicPartition = tuple[str, int]


def next_epoch(epoch: int) -> int:
    """The epoch after ``epoch``: -1 stays -1; after 2**31-1 comes 1."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == 2**31 - 1 else epoch + 1


def now_ms() -> int:
    return int(time.monotonic() * 1000)


class PartitionRequest(NamedTuple):
    """What a fetch asks of one partition."""

    fetch_offset: int
    max_bytes: int
    log_start_offset: int = -1  # a follower's, v5+
    current_leader_epoch: int = -1  # v9+


class CachedPartition:
    """One partition of a session: the last request for it and what the last answer carried."""

    __slots__ = ("request", "high_watermark", "log_start_offset")

    def __init__(
        self, request: PartitionRequest, high_watermark: int = -1, log_start_offset: int = -1
    ) -> None:
        self.request = request
        self.high_watermark = high_watermark
        self.log_start_offset = log_start_offset

    def must_respond(self, read: Any) -> bool:
        """Whether the answer carries this partition (records, a new high watermark or log start offset, an
        error), remembering what it carries; after an error the high watermark is forgotten (-1), so the
        partition is answered again once the error is gone."""
        changed = read.size > 0 or read.error != 0
        if self.high_watermark != read.high_watermark or self.log_start_offset != read.log_start_offset:
            self.high_watermark, self.log_start_offset = read.high_watermark, read.log_start_offset
            changed = True
        if read.error:
            self.high_watermark = -1
        return changed


class FetchSession:
    """A session: its id, whether a follower made it (``privileged``), its partitions in the order they are
    read (those answered move to the end, so a response-size limit serves them in turn), and its epoch."""

    def __init__(
        self, session_id: int, privileged: bool, partitions: dict[TopicPartition, CachedPartition], now: int
    ) -> None:
        self.id = session_id
        self.privileged = privileged
        self.partitions = partitions
        self.created_ms = now
        self.last_used_ms = now
        self.epoch = next_epoch(INITIAL_EPOCH)
        self.cached_size = -1  # the size the cache last counted; -1 while not in it
        self.evictable_by_all = False
        self.evictable_by_privileged = False

    def evictable_key(self) -> tuple[bool, int, int]:
        return self.privileged, self.cached_size, self.id

    def update(
        self, fetch_data: dict[TopicPartition, PartitionRequest], to_forget: Iterable[TopicPartition]
    ) -> None:
        """An incremental request's partitions added or changed, and those it forgets."""
        for tp, request in fetch_data.items():
            cached = self.partitions.get(tp)
            if cached is None:
                self.partitions[tp] = CachedPartition(request)
            else:
                cached.request = request
        for tp in to_forget:
            self.partitions.pop(tp, None)


class FetchAnswer(NamedTuple):
    """What a fetch response carries: its top-level error, its session id, and the ``(tp, read)`` pairs."""

    error: int
    session_id: int
    reads: list[tuple[TopicPartition, Any]]


class FetchContext:
    """How one fetch request is read and answered (Kafka's ``FetchContext``)."""

    def partitions(self) -> list[tuple[TopicPartition, PartitionRequest]]:
        """The partitions to read, in order."""
        return []

    def respond(self, reads: list[tuple[TopicPartition, Any]]) -> FetchAnswer:
        """The answer from ``reads`` (each with ``error``, ``high_watermark``, ``log_start_offset`` and
        ``size``): updates the session."""
        raise NotImplementedError

    def throttled(self) -> FetchAnswer:
        """The empty answer of a throttled fetch: no partitions, the session unchanged."""
        return FetchAnswer(ErrorCode.NONE, INVALID_SESSION_ID, [])


class SessionErrorContext(FetchContext):
    """A session error: the answer carries the error and no partitions."""

    def __init__(self, error: int) -> None:
        self.error = error

    def respond(self, reads: list[tuple[TopicPartition, Any]]) -> FetchAnswer:
        return FetchAnswer(self.error, INVALID_SESSION_ID, [])

    def throttled(self) -> FetchAnswer:
        return self.respond([])


class SessionlessContext(FetchContext):
    """A full fetch without a session: every partition read is answered (before v7 in the request's order,
    a partition named twice read twice)."""

    def __init__(self, requested: list[tuple[TopicPartition, PartitionRequest]]) -> None:
        self.requested = requested

    def partitions(self) -> list[tuple[TopicPartition, PartitionRequest]]:
        return self.requested

    def respond(self, reads: list[tuple[TopicPartition, Any]]) -> FetchAnswer:
        return FetchAnswer(ErrorCode.NONE, INVALID_SESSION_ID, reads)


class FullContext(SessionlessContext):
    """A full fetch asking for a session: answered whole, with a new session's id if the cache has room."""

    def __init__(
        self, cache: FetchSessionCache, fetch_data: dict[TopicPartition, PartitionRequest], privileged: bool
    ) -> None:
        super().__init__(list(fetch_data.items()))
        self.fetch_data = fetch_data
        self.cache = cache
        self.privileged = privileged

    def respond(self, reads: list[tuple[TopicPartition, Any]]) -> FetchAnswer:
        def cached() -> dict[TopicPartition, CachedPartition]:
            return {
                tp: CachedPartition(self.fetch_data[tp], read.high_watermark, read.log_start_offset)
                for tp, read in reads
            }

        session_id = self.cache.maybe_create_session(self.privileged, len(reads), cached)
        return FetchAnswer(ErrorCode.NONE, session_id, reads)


class IncrementalContext(FetchContext):
    """An incremental fetch of ``session``: every session partition is read, the changed ones answered."""

    def __init__(self, cache: FetchSessionCache, session: FetchSession, request_epoch: int) -> None:
        self.cache = cache
        self.session = session
        self.request_epoch = request_epoch

    def partitions(self) -> list[tuple[TopicPartition, PartitionRequest]]:
        with self.cache.lock:
            return [(tp, cached.request) for tp, cached in self.session.partitions.items()]

    def throttled(self) -> FetchAnswer:
        with self.cache.lock:
            if self.session.epoch != next_epoch(self.request_epoch):
                return FetchAnswer(ErrorCode.INVALID_FETCH_SESSION_EPOCH, self.session.id, [])
            return FetchAnswer(ErrorCode.NONE, self.session.id, [])

    def respond(self, reads: list[tuple[TopicPartition, Any]]) -> FetchAnswer:
        session = self.session
        with self.cache.lock:
            if session.epoch != next_epoch(self.request_epoch):  # another request of the session came between
                return FetchAnswer(ErrorCode.INVALID_FETCH_SESSION_EPOCH, session.id, [])
            answered = []
            for tp, read in reads:
                cached = session.partitions.get(tp)
                if cached is None or cached.must_respond(read):
                    answered.append((tp, read))
                    if cached is not None:  # to the end of the read order
                        session.partitions[tp] = session.partitions.pop(tp)
            return FetchAnswer(ErrorCode.NONE, session.id, answered)


class FetchSessionCache:
    """The broker's fetch sessions, at most ``max_entries`` (Kafka's ``FetchSessionCache`` and
    ``FetchManager``)."""

    def __init__(
        self,
        max_entries: int = DEFAULT_SLOTS,
        eviction_ms: int = EVICTION_MS,
        time_ms: Callable[[], int] = now_ms,
        rng: random.Random | None = None,
    ) -> None:
        self.max_entries = max_entries
        self.eviction_ms = eviction_ms
        self.time_ms = time_ms
        self.lock = threading.RLock()
        self.sessions: dict[int, FetchSession] = {}
        self.total_partitions = 0
        self.evictions = 0
        self._rng = rng or random.Random()

    def __len__(self) -> int:
        return len(self.sessions)

    def get(self, session_id: int) -> FetchSession | None:
        return self.sessions.get(session_id)

    def new_context(
        self,
        session_id: int,
        epoch: int,
        fetch_data: dict[TopicPartition, PartitionRequest],
        to_forget: Iterable[TopicPartition],
        is_follower: bool,
    ) -> FetchContext:
        """The context of a fetch request with this session id and epoch (see the module's docstring)."""
        with self.lock:
            if epoch in (INITIAL_EPOCH, FINAL_EPOCH):
                if session_id != INVALID_SESSION_ID:
                    self.remove(session_id)  # a full fetch closes the session it names
                if epoch == FINAL_EPOCH:
                    return SessionlessContext(list(fetch_data.items()))
                return FullContext(self, fetch_data, is_follower)
            session = self.sessions.get(session_id)
            if session is None:
                return SessionErrorContext(ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
            if session.epoch != epoch:
                return SessionErrorContext(ErrorCode.INVALID_FETCH_SESSION_EPOCH)
            session.update(fetch_data, to_forget)
            if not session.partitions:
                self.remove(session.id)
                return SessionlessContext(list(fetch_data.items()))
            self.touch(session, self.time_ms())
            session.epoch = next_epoch(session.epoch)
            return IncrementalContext(self, session, epoch)

    def maybe_create_session(
        self, privileged: bool, size: int, partitions: Callable[[], dict[TopicPartition, CachedPartition]]
    ) -> int:
        """A new session's id if there is a slot (or one may be evicted for it), else 0."""
        with self.lock:
            now = self.time_ms()
            if len(self.sessions) >= self.max_entries and not self.try_evict(privileged, size, now):
                return INVALID_SESSION_ID
            session = FetchSession(self.new_session_id(), privileged, partitions(), now)
            self.sessions[session.id] = session
            self.touch(session, now)
            return session.id

    def new_session_id(self) -> int:
        """A random positive id no session here has."""
        while True:
            session_id = self._rng.randint(1, 2**31 - 2)
            if session_id not in self.sessions:
                return session_id

    def try_evict(self, privileged: bool, size: int, now: int) -> bool:
        """Remove one session to make room for a new one of ``size`` partitions: the least recently used if
        it is stale, else the first evictable one if it is worth less than the newcomer."""
        if not self.sessions:
            return False
        stale = min(self.sessions.values(), key=lambda s: (s.last_used_ms, s.id))
        if now - stale.last_used_ms > self.eviction_ms:
            self._evict(stale)
            return True
        candidates = [
            s
            for s in self.sessions.values()
            if (s.evictable_by_privileged if privileged else s.evictable_by_all)
        ]
        if not candidates:
            return False
        victim = min(candidates, key=FetchSession.evictable_key)
        if (privileged, size, 0) < victim.evictable_key():
            return False
        self._evict(victim)
        return True

    def _evict(self, session: FetchSession) -> None:
        self.remove(session.id)
        self.evictions += 1

    def remove(self, session_id: int) -> FetchSession | None:
        with self.lock:
            session = self.sessions.pop(session_id, None)
            if session is not None:
                self.total_partitions -= session.cached_size
            return session

    def touch(self, session: FetchSession, now: int) -> None:
        """The session was used at ``now``: its size is counted again and its evictability re-decided."""
        with self.lock:
            session.last_used_ms = now
            if session.cached_size != -1:
                self.total_partitions -= session.cached_size
            session.cached_size = len(session.partitions)
            self.total_partitions += session.cached_size
            old = now - session.created_ms > self.eviction_ms
            session.evictable_by_privileged = not session.privileged or old
            session.evictable_by_all = old

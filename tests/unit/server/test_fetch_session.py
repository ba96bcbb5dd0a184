"""The fetch session cache (KIP-227) alone, on a fake clock: session ids and epochs, the contexts a request
gets, what an incremental answer keeps, and Kafka's eviction rules (stale first, then privileged over not,
more partitions over fewer, none younger than the eviction time unless by a follower)."""

from __future__ import annotations

import random
from typing import NamedTuple

from zkafka.protocol.errors import ErrorCode
from zkafka.server.fetch_session import (
    FetchSessionCache,
    FullContext,
    IncrementalContext,
    PartitionRequest,
    SessionErrorContext,
    SessionlessContext,
    next_epoch,
)


class Read(NamedTuple):
    error: int = 0
    high_watermark: int = 10
    log_start_offset: int = 0
    size: int = 0


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000

    def __call__(self) -> int:
        return self.now


def cache(slots=10, eviction_ms=100):
    clock = Clock()
    return FetchSessionCache(slots, eviction_ms, clock, random.Random(1)), clock


def open_session(c, partitions=1, follower=False):
    data = {("t", p): PartitionRequest(0, 1024) for p in range(partitions)}
    context = c.new_context(0, 0, data, [], follower)
    assert isinstance(context, FullContext)
    return context.respond([(tp, Read()) for tp in data]).session_id


def test_epochs_wrap_to_one_and_final_stays_final():
    assert (next_epoch(0), next_epoch(5), next_epoch(2**31 - 1), next_epoch(-1)) == (1, 6, 1, -1)


def test_the_contexts_a_request_gets():
    c, _ = cache()
    data = {("t", 0): PartitionRequest(0, 1024)}
    assert isinstance(c.new_context(0, -1, data, [], False), SessionlessContext)
    session_id = open_session(c)
    assert session_id > 0 and len(c) == 1 and c.total_partitions == 1
    assert (
        c.new_context(session_id + 1, 1, {}, [], False).respond([]).error
        == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    )
    error = c.new_context(session_id, 2, {}, [], False)
    assert (
        isinstance(error, SessionErrorContext)
        and error.respond([]).error == ErrorCode.INVALID_FETCH_SESSION_EPOCH
    )
    incremental = c.new_context(session_id, 1, {}, [], False)
    assert isinstance(incremental, IncrementalContext) and c.get(session_id).epoch == 2
    assert isinstance(c.new_context(session_id, 0, data, [], False), FullContext) and len(c) == 0  # closed


def test_an_incremental_answer_keeps_changes_and_rotates_them_to_the_end():
    c, _ = cache()
    session_id = open_session(c, 3)
    context = c.new_context(session_id, 1, {}, [], False)
    assert [tp for tp, _ in context.partitions()] == [("t", 0), ("t", 1), ("t", 2)]
    reads = [(("t", 0), Read()), (("t", 1), Read(size=5)), (("t", 2), Read(high_watermark=11))]
    answer = context.respond(reads)
    assert [tp for tp, _ in answer.reads] == [("t", 1), ("t", 2)] and answer.session_id == session_id
    assert [tp for tp, _ in c.new_context(session_id, 2, {}, [], False).partitions()] == [
        ("t", 0),
        ("t", 1),
        ("t", 2),
    ]


def test_an_error_is_answered_and_the_partition_again_once_it_clears():
    c, _ = cache()
    session_id = open_session(c)
    failed = c.new_context(session_id, 1, {}, [], False).respond([(("t", 0), Read(6, -1, -1))])
    assert len(failed.reads) == 1
    cleared = c.new_context(session_id, 2, {}, [], False).respond([(("t", 0), Read())])
    assert len(cleared.reads) == 1
    quiet = c.new_context(session_id, 3, {}, [], False).respond([(("t", 0), Read())])
    assert quiet.reads == []


def test_forgetting_every_partition_closes_the_session():
    c, _ = cache()
    session_id = open_session(c)
    assert isinstance(c.new_context(session_id, 1, {}, [("t", 0)], False), SessionlessContext)
    assert c.get(session_id) is None and c.total_partitions == 0


def test_a_full_cache_evicts_by_kafkas_rules():
    c, clock = cache(slots=2, eviction_ms=100)
    small, big = open_session(c, 1), open_session(c, 5)
    assert open_session(c, 10) == 0  # both too young for a consumer's new session
    follower = open_session(c, 1, follower=True)  # a follower's may take a young consumer's slot
    assert follower and c.get(small) is None and c.evictions == 1
    clock.now += 50
    c.new_context(big, 1, {}, [], False)  # used
    clock.now += 60  # follower unused 110 ms: stale
    assert open_session(c, 1) and c.get(follower) is None


def test_zero_slots_mean_no_sessions():
    c, _ = cache(slots=0)
    assert open_session(c) == 0

"""Log compaction (zkafka.log.log_cleaner) on real 0.8 log files: dedupe, tombstones and their horizon,
compressed wrappers, the dirty ratio, the offset map's limit, the checkpoint and a swap interrupted by a crash."""

from __future__ import annotations

import os
import threading

import pytest

from tests.support.logs import Clock, opened, set_mtime
from zkafka.log.checkpoint import OffsetCheckpoint
from zkafka.log.log08 import Log08
from zkafka.log.log_cleaner import CLEANER_CHECKPOINT, LogCleaner, OffsetMap, group_segments_by_size
from zkafka.log.log_config import LogConfig
from zkafka.records.compression import GZIP, SNAPPY
from zkafka.records.format08 import build_message_set, iter_messages

SEGMENT = 400  # bytes: a handful of small messages per segment


def open_log(path, compact=True, need_recovery=False, **settings) -> Log08:
    config = LogConfig(segment_bytes=SEGMENT, compact=compact, file_delete_delay_ms=0, **settings)
    os.makedirs(path, exist_ok=True)
    return opened(
        Log08(str(path), path.name.rsplit("-", 1)[0], 0, config, time_ms=Clock(), need_recovery=need_recovery)
    )


def put(log: Log08, key: str, value: str | None, codec: int = 0) -> None:
    log.append(build_message_set([(key.encode(), None if value is None else value.encode())], codec))


def contents(log: Log08) -> list[tuple[int, str, str | None]]:
    """(offset, key, value) of every message in the log, in order."""
    out = []
    for segment in log.segments:
        data = segment.read(0, segment.size) if segment.size else b""
        for m in iter_messages(data):
            out.append((m.offset, m.key.decode(), None if m.value is None else m.value.decode()))
    return out


def cleaner_for(*logs: Log08, **options) -> LogCleaner:
    return LogCleaner(lambda: list(logs), **options)


@pytest.fixture
def log(tmp_path) -> Log08:
    return open_log(tmp_path / "compacted-0")


def fill(log: Log08, rounds: int, keys: int = 4) -> None:
    for r in range(rounds):
        for k in range(keys):
            put(log, f"k{k}", f"v{r}")


def test_cleaning_keeps_the_last_value_of_each_key_with_its_offset(log, tmp_path) -> None:
    fill(log, rounds=6)
    active_start = log.segments[-1].start
    before = contents(log)
    stats = cleaner_for(log).clean_once()
    assert stats.end_offset == active_start
    kept = [(o, k, v) for o, k, v in contents(log) if o < active_start]
    last = {}
    for offset, key, value in before:
        if offset < active_start:
            last[key] = (offset, key, value)
    assert kept == sorted(last.values())  # one message per key, the last one, offsets unchanged
    assert [m for m in contents(log) if m[0] >= active_start] == [m for m in before if m[0] >= active_start]
    assert stats.messages_written == len(kept) and stats.messages_read == active_start
    checkpoint = OffsetCheckpoint(tmp_path / CLEANER_CHECKPOINT).read()
    assert checkpoint == {("compacted", 0): active_start}
    assert len(log.segments) < len(before) // 4
    assert not [n for n in os.listdir(log.dir_path) if n.endswith((".cleaned", ".swap", ".deleted"))]


def test_reads_and_a_reload_after_cleaning(log, tmp_path) -> None:
    fill(log, rounds=6)
    cleaner_for(log).clean_once()
    expected = contents(log)
    first_kept = expected[0][0]
    region = log.read(0, 10_000)  # an offset that was cleaned away reads from the next one kept
    assert next(iter_messages(region.read())).offset == first_kept
    log.close()
    reopened = open_log(tmp_path / "compacted-0", need_recovery=True)
    assert contents(reopened) == expected
    assert reopened.log_end_offset == 24


def test_the_dirty_ratio_decides_when_to_clean(log) -> None:
    fill(log, rounds=6)
    cleaner = cleaner_for(log)
    assert cleaner.grab_filthiest_log().dirty_ratio == 1.0
    cleaner.clean_once()
    assert cleaner.grab_filthiest_log() is None  # everything before the active segment is clean
    assert cleaner.clean_once() is None
    fill(log, rounds=6)
    to_clean = cleaner.grab_filthiest_log()
    assert to_clean.dirty_ratio > 0.5 and to_clean.first_dirty_offset > 0


def test_the_filthiest_compacted_log_goes_first_and_delete_logs_are_left_alone(tmp_path) -> None:
    a, b = open_log(tmp_path / "a-0"), open_log(tmp_path / "b-0")
    plain = open_log(tmp_path / "plain-0", compact=False)
    for each in (a, b, plain):
        fill(each, rounds=6)
    plain_before = contents(plain)
    cleaner = cleaner_for(plain, a, b)
    assert {cleaner.clean_once().log, cleaner.clean_once().log} == {"a-0", "b-0"}
    assert cleaner.clean_once() is None
    fill(a, rounds=3)
    fill(b, rounds=9)
    assert cleaner.grab_filthiest_log().log is b
    assert cleaner.clean_once().log == "b-0"
    assert contents(plain) == plain_before


def last_of_each_key(messages):
    last = {}
    for message in messages:
        last[message[1]] = message
    return sorted(last.values())


@pytest.mark.parametrize(("retention_ms", "kept"), [(0, False), (86_400_000, True)])
def test_tombstones_are_kept_until_the_delete_horizon(tmp_path, retention_ms, kept) -> None:
    log = open_log(tmp_path / "compacted-0", delete_retention_ms=retention_ms)
    fill(log, rounds=3)
    put(log, "k1", None)
    fill(log, rounds=3, keys=1)  # more traffic on k0 only: k1's tombstone is the last of its key
    log.roll()
    cleaner = cleaner_for(log)
    cleaner.clean_once()
    assert ("k1", None) in [(k, v) for _, k, v in contents(log)]  # no clean segment yet: horizon 0
    for segment in log.segments[:-1]:
        set_mtime(segment.path, segment.mtime_ms - 1_000_000)
    fill(log, rounds=8, keys=1)
    log.roll()
    cleaner.clean_once()  # horizon: the clean segment's mtime minus delete.retention.ms
    assert (("k1", None) in [(k, v) for _, k, v in contents(log)]) is kept


def test_compressed_wrappers_keep_their_retained_messages_recompressed(log) -> None:
    for codec in (GZIP, SNAPPY):
        log.append(build_message_set([(b"a", b"1"), (b"b", b"1"), (b"c", b"1")], codec))
    put(log, "a", "2")
    put(log, "c", "2")
    log.roll()
    cleaner_for(log).clean_once()
    assert contents(log) == [(4, "b", "1"), (6, "a", "2"), (7, "c", "2")]
    data = log.segments[0].read(0, log.segments[0].size)
    wrappers = list(iter_messages(data, deep=False))
    assert [w.codec for w in wrappers[:1]] == [SNAPPY] and wrappers[0].offset == 4


def test_a_small_offset_map_cleans_in_several_passes(tmp_path) -> None:
    log = open_log(tmp_path / "compacted-0", min_cleanable_ratio=0.0)
    fill(log, rounds=2, keys=40)  # 40 distinct keys, twice
    active_start = log.segments[-1].start
    expected = last_of_each_key([m for m in contents(log) if m[0] < active_start])
    cleaner = cleaner_for(log, dedupe_buffer_size=30 * 24, load_factor=1.0)  # 30 keys of room
    first = cleaner.clean_once()
    assert 0 < first.end_offset < active_start
    second = cleaner.clean_once()
    assert second.first_dirty_offset == first.end_offset and second.end_offset > first.end_offset
    passes = 2
    while cleaner.clean_once() is not None:
        passes += 1
    assert passes < 6
    assert [m for m in contents(log) if m[0] < active_start] == expected


def test_a_segment_larger_than_the_offset_map_is_an_error(log) -> None:
    fill(log, rounds=6)
    with pytest.raises(ValueError, match="cannot hold segment .* raise log.cleaner.dedupe.buffer.size"):
        cleaner_for(log, dedupe_buffer_size=24, load_factor=1.0).clean_once()


def test_groups_stay_under_one_segment(log) -> None:
    fill(log, rounds=12)
    groups = group_segments_by_size(log.segments[:-1], 3 * SEGMENT, 10 * 1024 * 1024)
    assert [s for g in groups for s in g] == list(log.segments[:-1])
    assert all(sum(s.size for s in g) < 3 * SEGMENT or len(g) == 1 for g in groups)


def test_an_interrupted_swap_is_finished_when_the_log_loads(log, tmp_path) -> None:
    fill(log, rounds=6)
    cleaner = cleaner_for(log)
    to_clean = cleaner.grab_filthiest_log()

    def crash(old, open_new):  # the cleaned files renamed to .swap, then the broker dies
        raise SystemExit("crash")

    log.replace_segments = crash
    with pytest.raises(SystemExit):
        cleaner.clean(to_clean)
    del log.replace_segments
    names = os.listdir(log.dir_path)
    assert any(n.endswith(".log.swap") for n in names) and any(n.endswith(".index.swap") for n in names)
    log.close()
    reopened = open_log(tmp_path / "compacted-0", need_recovery=True)
    offsets = [o for o, _, _ in contents(reopened)]
    assert offsets == sorted(set(offsets))  # no offset twice: the swapped-in segment's range won
    keys = {k for _, k, _ in contents(reopened)}
    assert keys == {"k0", "k1", "k2", "k3"} and reopened.log_end_offset == 24
    assert not [n for n in os.listdir(reopened.dir_path) if n.endswith((".swap", ".cleaned"))]


def test_the_cleaning_runs_through_offload_and_the_swap_on_the_callers_thread(tmp_path) -> None:
    config = LogConfig(segment_bytes=SEGMENT, compact=True, file_delete_delay_ms=0)
    os.makedirs(tmp_path / "compacted-0")
    scheduled = []  # (thread, task) of the log's delayed work: the flushes after rolls, deletions
    log = opened(
        Log08(
            str(tmp_path / "compacted-0"),
            "compacted",
            0,
            config,
            time_ms=Clock(),
            scheduler=lambda delay, task: scheduled.append((threading.get_ident(), task)),
        )
    )
    fill(log, rounds=6)
    for _, task in scheduled:
        task()
    scheduled.clear()
    in_place = open_log(tmp_path / "reference-0")
    fill(in_place, rounds=6)
    cleaner_for(in_place).clean_once()
    offloaded = []

    def on_another_thread(task):
        result = []
        worker = threading.Thread(target=lambda: result.append(task()))
        worker.start()
        worker.join()
        offloaded.append(worker.ident)
        assert result, "the offloaded task failed"
        return result[0]

    stats = cleaner_for(log, offload=on_another_thread).clean_once()
    assert contents(log) == contents(in_place)
    # choosing the log, the offset map, one write per group, the checkpoint
    assert len(offloaded) == 3 + len(stats.groups)
    assert scheduled and {thread for thread, _ in scheduled} == {threading.get_ident()}
    for _, task in scheduled:
        task()
    assert not [n for n in os.listdir(log.dir_path) if n.endswith((".cleaned", ".swap", ".deleted"))]


def test_replace_segments_refuses_a_log_that_changed(log) -> None:
    fill(log, rounds=6)
    old = log.segments[:2]
    log.truncate_fully_and_start_at(100)
    assert log.replace_segments(old, lambda: pytest.fail("must not open")) is None


def test_offset_map() -> None:
    offset_map = OffsetMap(2)
    offset_map.put(b"a", 1)
    offset_map.put(b"a", 5)
    assert (offset_map.get(b"a"), offset_map.get(b"b"), len(offset_map)) == (5, -1, 1)
    with pytest.raises(ValueError):
        OffsetMap(0)

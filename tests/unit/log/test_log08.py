"""The 0.8 log (zkafka.log.log08): offsets, the index, reads, roll, flush, recovery, retention, truncation."""

import logging
import os

import pytest

from tests.support.logs import Clock, opened, set_mtime
from zkafka.errors import (
    InvalidMessageError,
    KafkaStorageError,
    MessageSetSizeTooLargeError,
    OffsetOutOfRangeError,
)
from zkafka.log.log08 import Log08
from zkafka.log.log_config import LogConfig
from zkafka.protocol import EARLIEST_TIME, LATEST_TIME
from zkafka.records.compression import GZIP, SNAPPY
from zkafka.records.format08 import OffsetsOutOfOrderError, build_message_set, entries, iter_messages

# The codec's decoding, checks and offset assignment run on the native core and on the pure path.
pytestmark = pytest.mark.usefixtures("codec_path")

ENTRY = 31  # one entry of a null key and a 5-byte value


def messages(*values: bytes, codec: int = 0, base_offset: int = 0) -> bytes:
    return build_message_set([(None, v) for v in values], codec, base_offset)


def one(i: int) -> bytes:
    return messages(b"v%04d" % i)


def open_log(path, clock=None, **settings) -> Log08:
    options = {
        key: settings.pop(key)
        for key in ("recovery_point", "need_recovery", "scheduler", "visible_end")
        if key in settings
    }
    options.setdefault("need_recovery", False)
    config = LogConfig(**{"segment_bytes": 10_000, "index_interval_bytes": 4096, **settings})
    os.makedirs(path, exist_ok=True)
    return opened(Log08(str(path), "t", 0, config, time_ms=clock or Clock(), **options))


def names(path) -> list[str]:
    return sorted(os.listdir(path))


def offsets_in(data: bytes) -> list[int]:
    return [offset for offset, _, _ in entries(data)]


def filled(path, count: int, **settings) -> Log08:
    log = open_log(path, **settings)
    for i in range(count):
        log.append(one(i))
    return log


# -- append: offsets ------------------------------------------------------------------------------------


def test_a_new_log_has_one_empty_segment(tmp_path):
    log = open_log(tmp_path / "t-0")
    assert names(tmp_path / "t-0") == ["00000000000000000000.index", "00000000000000000000.log"]
    assert (log.log_start, log.log_end_offset, log.recovery_point) == (0, 0, 0)
    assert os.path.getsize(tmp_path / "t-0" / "00000000000000000000.index") == 10 * 1024 * 1024


def test_the_leader_assigns_offsets_from_the_log_end(tmp_path):
    log = open_log(tmp_path / "t-0")
    data = messages(b"a", b"b", b"c", base_offset=77)  # client offsets are ignored
    info = log.append(data)
    assert (info.first_offset, info.next_offset, info.count) == (0, 3, 3)
    info = log.append(messages(b"d", b"e"))
    assert (info.first_offset, info.next_offset, info.size) == (3, 5, len(messages(b"d", b"e")))
    stored = (tmp_path / "t-0" / "00000000000000000000.log").read_bytes()
    assert offsets_in(stored) == [0, 1, 2, 3, 4]
    assert stored[8:] == (messages(b"a", b"b", b"c") + messages(b"d", b"e", base_offset=3))[8:]
    assert log.log_end_offset == 5


def test_offsets_inside_a_compressed_wrapper(tmp_path):
    log = open_log(tmp_path / "t-0")
    log.append(messages(b"x", b"y"))
    info = log.append(messages(b"a", b"b", b"c", codec=GZIP))
    assert (info.first_offset, info.next_offset, info.count) == (2, 5, 3)
    region = log.read(3, 10_000)  # inside the wrapper: the whole wrapper comes back
    assert offsets_in(region.read()) == [4]  # a wrapper's offset is its last inner offset
    assert [(m.offset, m.value) for m in iter_messages(region.read(), start_offset=3)] == [
        (3, b"b"),
        (4, b"c"),
    ]
    assert [m.offset for m in iter_messages(log.read(0, 10_000).read())] == [0, 1, 2, 3, 4]


def test_a_follower_keeps_the_leaders_offsets(tmp_path):
    log = open_log(tmp_path / "t-0")
    info = log.append(messages(b"a", b"b", base_offset=10), assign_offsets=False)
    assert (info.first_offset, info.next_offset, log.log_end_offset) == (10, 12, 12)
    wrapper = messages(b"c", b"d", codec=SNAPPY, base_offset=12)
    assert log.append(wrapper, assign_offsets=False).next_offset == 14
    with pytest.raises(OffsetsOutOfOrderError):
        log.append(messages(b"old", base_offset=13), assign_offsets=False)
    assert log.log_end_offset == 14
    assert [m.offset for m in iter_messages(log.read(10, 10_000).read())] == [10, 11, 12, 13]


def test_a_rejected_set_leaves_the_log_untouched(tmp_path):
    log = open_log(tmp_path / "t-0", segment_bytes=100)
    log.append(one(0))
    corrupt = bytearray(one(1))
    corrupt[-1] ^= 1
    with pytest.raises(InvalidMessageError):
        log.append(bytes(corrupt))
    with pytest.raises(MessageSetSizeTooLargeError, match="segment.bytes 100"):
        log.append(messages(*[b"v"] * 5))
    assert (log.log_end_offset, log.size, len(log.segments)) == (1, ENTRY, 1)


def test_a_partial_tail_is_dropped_and_an_empty_append_writes_nothing(tmp_path):
    log = open_log(tmp_path / "t-0")
    info = log.append(one(0) + one(1)[:-3])
    assert (info.first_offset, info.next_offset, info.size) == (0, 1, ENTRY)
    empty = log.append(b"")
    assert (empty.first_offset, empty.next_offset, empty.size, empty.count) == (1, 1, 0, 0)


def test_listeners_hear_of_appends(tmp_path):
    log = open_log(tmp_path / "t-0")
    heard = []
    log.add_listener(lambda source, info: heard.append((source.log_end_offset, info.next_offset)))
    log.append(one(0))
    log.append(b"")
    log.append(messages(b"a", b"b"))
    assert heard == [(1, 1), (3, 3)]


# -- the index ------------------------------------------------------------------------------------------


def test_an_index_entry_follows_more_than_the_interval_of_bytes(tmp_path):
    log = filled(tmp_path / "t-0", 10, index_interval_bytes=2 * ENTRY)
    log.roll()
    index = (tmp_path / "t-0" / "00000000000000000000.index").read_bytes()
    # an entry before the append once more than 62 bytes went by since the last: offsets 3, 6, 9
    assert index == bytes.fromhex("00000003 0000005d 00000006 000000ba 00000009 00000117")


def test_lookups_through_the_index_land_on_every_offset(tmp_path):
    log = filled(tmp_path / "t-0", 200, index_interval_bytes=100)
    assert log.segments[0].index.entries > 40
    for offset in range(200):
        region = log.read(offset, ENTRY)
        assert (region.position, region.length) == (offset * ENTRY, ENTRY)
        assert next(iter_messages(region.read())).value == b"v%04d" % offset


# -- reads ----------------------------------------------------------------------------------------------


def test_a_read_comes_from_one_segment(tmp_path):
    log = filled(tmp_path / "t-0", 10, segment_bytes=4 * ENTRY)
    assert [s.start for s in log.segments] == [0, 4, 8]
    region = log.read(2, 10_000)
    assert (region.segment.start, region.position, region.length) == (0, 2 * ENTRY, 2 * ENTRY)
    region = log.read(4, 3 * ENTRY + 5)  # cut at max_bytes: a partial entry is normal
    assert (region.segment.start, region.length) == (4, 3 * ENTRY + 5)
    assert offsets_in(region.read()) == [4, 5, 6]


def test_read_bounds(tmp_path):
    log = filled(tmp_path / "t-0", 3)
    assert log.read(3, 100).length == 0
    with pytest.raises(OffsetOutOfRangeError, match="valid offsets are 0 to 3"):
        log.read(4, 100)
    with pytest.raises(OffsetOutOfRangeError):
        log.read(-1, 100)
    assert log.read(0, 0).length == 0


def test_reads_stop_at_the_visible_end(tmp_path):
    watermark = {"hw": 2}
    log = filled(tmp_path / "t-0", 5, visible_end=lambda log: watermark["hw"])
    assert offsets_in(log.read(0, 10_000).read()) == [0, 1]
    assert log.read(2, 10_000).length == 0  # at or past the high watermark: nothing yet
    assert offsets_in(log.read(0, 10_000, max_offset=log.log_end_offset).read()) == [0, 1, 2, 3, 4]
    watermark["hw"] = 5
    assert offsets_in(log.read(3, 10_000).read()) == [3, 4]


# -- roll -----------------------------------------------------------------------------------------------


def test_roll_by_size_counts_the_incoming_set(tmp_path):
    log = open_log(tmp_path / "t-0", segment_bytes=3 * ENTRY)
    log.append(one(0) + one(1))
    log.append(one(2))  # 62 + 31 <= 93: fits
    assert len(log.segments) == 1
    log.append(one(3))
    assert [(s.start, s.size) for s in log.segments] == [(0, 3 * ENTRY), (3, ENTRY)]
    assert names(tmp_path / "t-0")[-2:] == ["00000000000000000003.index", "00000000000000000003.log"]
    assert os.path.getsize(tmp_path / "t-0" / "00000000000000000000.index") == 0  # trimmed


def test_roll_by_age_from_creation(tmp_path):
    clock = Clock()
    log = open_log(tmp_path / "t-0", clock, segment_ms=1000)
    log.append(one(0))
    clock.now += 1000
    log.append(one(1))
    assert len(log.segments) == 1
    clock.now += 1
    log.append(one(2))
    assert [s.start for s in log.segments] == [0, 2]
    assert log.segments[-1].created_ms == clock.now
    log.roll()
    clock.now += 5000
    log.append(one(3))  # an empty segment does not roll
    log.append(one(4))  # age counts from the segment's creation, not from its first append
    assert [s.start for s in log.segments] == [0, 2, 3, 4]


def test_roll_when_the_index_is_full(tmp_path):
    log = filled(tmp_path / "t-0", 12, index_interval_bytes=0, index_max_bytes=24)
    # an index entry before every append but the first: 3 entries fill it, the fifth append rolls
    assert [s.start for s in log.segments] == [0, 4, 8]
    assert [s.index.entries for s in log.segments] == [3, 3, 3]


def test_a_roll_flushes_the_old_segment_through_the_scheduler(tmp_path):
    tasks = []
    log = open_log(
        tmp_path / "t-0", segment_bytes=2 * ENTRY, scheduler=lambda delay, task: tasks.append((delay, task))
    )
    log.append(one(0) + one(1))
    log.append(one(2))
    assert (log.recovery_point, [delay for delay, _ in tasks]) == (0, [0])
    tasks[0][1]()
    assert log.recovery_point == 2
    assert log.segments[0].flushed_size == 2 * ENTRY


def test_a_rolls_index_trim_runs_with_the_flush_after_it_through_offload(tmp_path):
    tasks, offloaded = [], []
    log = open_log(
        tmp_path / "t-0",
        segment_bytes=3 * ENTRY,
        index_interval_bytes=0,
        scheduler=lambda delay, task: tasks.append(task),
    )
    log.offload = lambda task: offloaded.append(task) or task()
    for offset in range(4):
        log.append(one(offset))
    sealed = log.segments[0]
    index_path = sealed.index.path
    # the roll left the sealed index at its full size: nothing on the event loop shrank it
    assert os.path.getsize(index_path) == LogConfig().index_max_bytes // 8 * 8
    assert (len(tasks), offloaded) == (1, [])
    tasks[0]()
    assert len(offloaded) == 2  # the trim, then the flush's fsyncs
    assert os.path.getsize(index_path) == sealed.index.entries * 8 == 2 * 8
    assert [sealed.index.lookup(o) for o in (1, 2)] == [(1, ENTRY), (2, 2 * ENTRY)]
    assert log.recovery_point == 3 and [log.read(o, 10_000).length > 0 for o in range(4)] == [True] * 4


def test_without_a_scheduler_a_roll_flushes_at_once(tmp_path):
    log = filled(tmp_path / "t-0", 3, segment_bytes=2 * ENTRY)
    assert (log.recovery_point, log.log_end_offset) == (2, 3)


# -- flush ----------------------------------------------------------------------------------------------


def test_flush_advances_the_recovery_point(tmp_path):
    log = filled(tmp_path / "t-0", 5)
    assert (log.recovery_point, log.unflushed_messages) == (0, 5)
    assert log.flush(3) is True
    assert log.recovery_point == 3
    assert log.flush(2) is False
    assert log.flush() is True
    assert (log.recovery_point, log.unflushed_messages) == (5, 0)
    assert log.flush() is False


def test_flush_by_message_count(tmp_path):
    log = filled(tmp_path / "t-0", 4, flush_interval_messages=3)
    assert log.recovery_point == 3


# -- recovery -------------------------------------------------------------------------------------------


def crash(log: Log08) -> None:
    """Stop without flushing or trimming, like a killed broker (the files stay as they are)."""
    for segment in log.segments:
        os.close(segment.index._fd)
        segment.index._fd = None
        segment.close()


def test_recovery_truncates_a_torn_tail_and_deletes_later_segments(tmp_path, caplog):
    path = tmp_path / "t-0"
    log = filled(path, 9, segment_bytes=3 * ENTRY, index_interval_bytes=0)
    crash(log)
    middle = path / "00000000000000000003.log"
    middle.write_bytes(middle.read_bytes()[: ENTRY + 10])  # offset 4 torn
    with caplog.at_level(logging.WARNING, logger="zkafka.log.log_loader"):
        log = open_log(path, segment_bytes=3 * ENTRY, index_interval_bytes=0, need_recovery=True)
    assert names(path) == [
        "00000000000000000000.index",
        "00000000000000000000.log",
        "00000000000000000003.index",
        "00000000000000000003.log",
    ]
    assert [(s.start, s.size) for s in log.segments] == [(0, 3 * ENTRY), (3, ENTRY)]
    assert (log.log_end_offset, log.recovery_point) == (4, 0)
    assert "truncated 10 bytes at offset 4 and deleted 1 later segment(s)" in caplog.text
    assert log.append(one(4)).first_offset == 4
    assert offsets_in(log.read(3, 1000).read()) == [3, 4]


def test_recovery_says_what_it_cut_when_the_index_is_rebuilt_first(tmp_path, caplog):
    path = tmp_path / "t-0"
    log = filled(path, 4)
    crash(log)  # the active segment's index stays pre-allocated: it is rebuilt before recovery runs
    segment = path / "00000000000000000000.log"
    segment.write_bytes(segment.read_bytes()[: 3 * ENTRY + 10])  # offset 3 torn
    with caplog.at_level(logging.WARNING, logger="zkafka.log.log_loader"):
        log = open_log(path, need_recovery=True)
    assert log.log_end_offset == 3
    assert f"corrupt or torn entries in {segment}: truncated 10 bytes at offset 3" in caplog.text


def test_a_recovery_point_past_the_log_end_is_taken_down_to_it(tmp_path, caplog):
    path = tmp_path / "t-0"
    filled(path, 3).close()
    with caplog.at_level(logging.WARNING, logger="zkafka.log.log_loader"):
        log = open_log(path, need_recovery=True, recovery_point=10)
    assert (log.log_end_offset, log.recovery_point) == (3, 3)  # as Kafka's LogLoader: min(checkpoint, LEO)
    assert (
        "the recovery point 10 in recovery-point-offset-checkpoint is past the log end offset 3"
        in caplog.text
    )


def test_recovery_rebuilds_the_same_index(tmp_path):
    path = tmp_path / "t-0"
    log = open_log(path, index_interval_bytes=50)
    for i in range(30):
        log.append(messages(b"a%d" % i, b"b", codec=GZIP if i % 3 else 0))
    written = log.segments[0].index
    expected = [written.entry(slot) for slot in range(written.entries)]
    crash(log)
    log = open_log(path, index_interval_bytes=50, need_recovery=True)
    rebuilt = log.segments[0].index
    assert [rebuilt.entry(slot) for slot in range(rebuilt.entries)] == expected
    assert log.log_end_offset == 60


def test_recovery_starts_at_the_segment_holding_the_recovery_point(tmp_path):
    path = tmp_path / "t-0"
    log = filled(path, 6, segment_bytes=2 * ENTRY)
    log.close()
    first = path / "00000000000000000000.log"
    first.write_bytes(first.read_bytes()[:-1] + b"X")  # corrupt, but below the recovery point
    last = path / "00000000000000000004.log"
    last.write_bytes(last.read_bytes() + b"\x00" * 7)
    log = open_log(path, segment_bytes=2 * ENTRY, need_recovery=True, recovery_point=3)
    assert first.stat().st_size == 2 * ENTRY
    assert last.stat().st_size == 2 * ENTRY
    assert (log.log_end_offset, len(log.segments)) == (6, 3)


def test_after_a_clean_shutdown_nothing_is_recovered(tmp_path):
    path = tmp_path / "t-0"
    filled(path, 3).close()
    segment = path / "00000000000000000000.log"
    segment.write_bytes(segment.read_bytes() + b"\x00" * 7)
    log = open_log(path, need_recovery=False)
    assert segment.stat().st_size == 3 * ENTRY + 7
    assert (log.log_end_offset, log.recovery_point) == (3, 3)


def test_a_missing_or_corrupt_index_is_rebuilt(tmp_path):
    path = tmp_path / "t-0"
    filled(path, 20, index_interval_bytes=40, segment_bytes=10 * ENTRY).close()
    expected = (path / "00000000000000000000.index").read_bytes()
    assert len(expected) == 32
    (path / "00000000000000000000.index").unlink()
    (path / "00000000000000000010.index").write_bytes(b"\x00" * 12)
    log = open_log(path, index_interval_bytes=40, segment_bytes=10 * ENTRY)
    assert (path / "00000000000000000000.index").read_bytes() == expected
    assert log.segments[1].index.entries == 4
    assert [log.read(o, ENTRY).position for o in (5, 15)] == [5 * ENTRY, 5 * ENTRY]


def test_loading_clears_leftovers(tmp_path):
    path = tmp_path / "t-0"
    filled(path, 4, segment_bytes=2 * ENTRY).close()
    (path / "00000000000000000000.log.deleted").write_bytes(b"old")
    (path / "00000000000000000000.index.deleted").write_bytes(b"old")
    (path / "00000000000000000000.log.cleaned").write_bytes(b"half")
    (path / "00000000000000000009.index").write_bytes(b"")  # no segment
    (path / "00000000000000000002.index.swap").write_bytes(b"")
    swapped = messages(b"s", b"t", base_offset=2, codec=0)
    (path / "00000000000000000002.log.swap").write_bytes(swapped)
    log = open_log(path)
    assert names(path) == [
        "00000000000000000000.index",
        "00000000000000000000.log",
        "00000000000000000002.index",
        "00000000000000000002.log",
    ]
    assert (path / "00000000000000000002.log").read_bytes() == swapped
    assert [m.value for m in iter_messages(log.read(2, 1000).read())] == [b"s", b"t"]


# -- offsets request -------------------------------------------------------------------------------------


def test_offsets_before(tmp_path):
    clock = Clock(10_000)
    log = filled(tmp_path / "t-0", 5, clock=clock, segment_bytes=2 * ENTRY)
    for segment, mtime in zip(log.segments, (1000, 2000, 3000), strict=True):
        set_mtime(segment.path, mtime)
    assert log.offsets_before(LATEST_TIME, 10) == [5, 4, 2, 0]
    assert log.offsets_before(EARLIEST_TIME, 10) == [0]
    assert log.offsets_before(2500, 10) == [2, 0]
    assert log.offsets_before(999, 10) == []


# -- retention ------------------------------------------------------------------------------------------


def test_retention_renames_then_deletes_after_the_delay(tmp_path):
    clock = Clock()
    tasks = []
    log = filled(
        tmp_path / "t-0",
        5,
        clock=clock,
        segment_bytes=2 * ENTRY,
        file_delete_delay_ms=60_000,
        scheduler=lambda delay, task: tasks.append((delay, task)),
    )
    tasks.clear()
    for segment, age in zip(log.segments, (3000, 2000, 0), strict=True):
        set_mtime(segment.path, clock.now - age)
    assert log.delete_expired_segments(clock.now, 1500) == 2
    assert log.log_start == 4
    assert names(tmp_path / "t-0") == [
        "00000000000000000000.index.deleted",
        "00000000000000000000.log.deleted",
        "00000000000000000002.index.deleted",
        "00000000000000000002.log.deleted",
        "00000000000000000004.index",
        "00000000000000000004.log",
    ]
    assert [delay for delay, _ in tasks] == [60_000, 60_000]
    for _, task in tasks:
        task()
    assert names(tmp_path / "t-0") == ["00000000000000000004.index", "00000000000000000004.log"]
    with pytest.raises(OffsetOutOfRangeError):
        log.read(3, 100)


def test_a_log_closed_before_its_delayed_deletes_closes_their_files(tmp_path):
    tasks = []
    log = filled(
        tmp_path / "t-0",
        5,
        segment_bytes=2 * ENTRY,
        file_delete_delay_ms=60_000,
        scheduler=lambda delay, task: tasks.append(task),
    )
    tasks.clear()
    before = open_files(tmp_path)
    assert log.delete_records_before(4) == 4 and len(tasks) == 2
    assert len(open_files(tmp_path)) == len(before)  # the two doomed segments still open for their readers
    log.close()
    # the .deleted files stay for the next load to remove (as Kafka's); none of them is open any longer
    assert [path for path in open_files(tmp_path) if path.endswith(".deleted")] == []
    assert len([name for name in names(tmp_path / "t-0") if name.endswith(".deleted")]) == 4
    for task in tasks:  # a delayed delete that runs after the close still removes the files
        task()
    assert names(tmp_path / "t-0") == ["00000000000000000004.index", "00000000000000000004.log"]


def open_files(under) -> list[str]:
    """The files under ``under`` this process has open (a mapping's duplicate descriptor included)."""
    paths = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(under)):
            paths.append(target)
    return paths


def test_retention_by_size_and_the_empty_active_segment(tmp_path):
    clock = Clock()
    log = filled(tmp_path / "t-0", 6, clock=clock, segment_bytes=2 * ENTRY)
    assert log.delete_segments_over_size(3 * ENTRY) == 1
    assert [s.start for s in log.segments] == [2, 4]
    assert log.delete_segments_over_size(0) == 2  # all would go: rolled first
    assert [(s.start, s.size) for s in log.segments] == [(6, 0)]
    set_mtime(log.segments[0].path, 1000)
    assert log.delete_expired_segments(clock.now, 1) == 0  # an empty active segment stays, untouched
    assert log.segments[0].mtime_ms == 1000
    assert log.append(one(6)).first_offset == 6


# -- truncation -----------------------------------------------------------------------------------------


def test_truncate_to_removes_later_segments_and_entries(tmp_path):
    log = filled(tmp_path / "t-0", 7, segment_bytes=3 * ENTRY, index_interval_bytes=0)
    log.truncate_to(4)
    assert [(s.start, s.size) for s in log.segments] == [(0, 3 * ENTRY), (3, ENTRY)]
    assert (log.log_end_offset, log.recovery_point) == (4, 4)
    assert log.segments[-1].index.entries == 0
    assert names(tmp_path / "t-0")[-2:] == ["00000000000000000003.index", "00000000000000000003.log"]
    log.truncate_to(10)  # past the end: nothing
    assert log.append(messages(b"x", b"y")).first_offset == 4
    assert [m.offset for m in iter_messages(log.read(3, 1000).read())] == [3, 4, 5]
    log.truncate_to(3)
    assert [(s.start, s.size) for s in log.segments] == [(0, 3 * ENTRY), (3, 0)]


def test_reads_from_where_appends_ended_stay_right_after_a_truncation(tmp_path):
    log = open_log(tmp_path / "t-0", index_interval_bytes=100_000)  # no index entry: the ends or a scan
    for i in range(4):
        log.append(messages(b"a" * 10 * (i + 1)))
    assert offsets_in(log.read(2, 10_000).read()) == [2, 3]
    assert offsets_in(log.read(2, 10_000, max_offset=3).read()) == [2]
    assert log.read(4, 10_000).length == 0
    log.truncate_to(1)
    log.append(messages(b"b" * 50, b"c"))  # offsets 1 and 2, other sizes than before
    log.append(messages(b"d"))
    assert [m.value for m in iter_messages(log.read(2, 10_000).read())] == [b"c", b"d"]
    assert [m.value for m in iter_messages(log.read(3, 10_000).read())] == [b"d"]
    assert offsets_in(log.read(1, 10_000, max_offset=3).read()) == [1, 2]


def test_a_lent_descriptor_outlives_its_segments_close_until_given_back(tmp_path):
    segment = filled(tmp_path / "t-0", 3).segments[0]
    first, second = segment.retain_fd(), segment.retain_fd()
    assert first == second == segment.fileno()
    segment.delete()  # retention: closed and unlinked while two file regions are being sent
    with pytest.raises(ValueError, match="is closed"):
        segment.retain_fd()
    assert offsets_in(os.pread(first, ENTRY, 0)) == [0]
    segment.release_fd()
    assert os.fstat(first).st_size == segment.size
    segment.release_fd()  # the last one closes it
    with pytest.raises(OSError):
        os.fstat(first)


def test_a_closed_log_refuses_writes_and_opens_no_file(tmp_path):
    # A group's record or a late produce after the broker closed its logs once rolled (a closed index looks
    # full) to a new segment whose descriptors nobody closed, its bytes unflushed under a clean-shutdown marker.
    path = tmp_path / "t-0"
    log = filled(path, 3, scheduler=lambda delay_ms, task: None)  # the broker's logs have one
    log.close()
    files = names(path)
    for write in (lambda: log.append(one(3)), log.roll, lambda: log.truncate_fully_and_start_at(100)):
        with pytest.raises(KafkaStorageError, match=f"log t-0 in {path} is closed"):
            write()
    assert names(path) == files and log.log_end_offset == 3
    assert open_log(path).log_end_offset == 3


def test_truncate_fully_and_start_at(tmp_path):
    log = filled(tmp_path / "t-0", 3)
    log.truncate_fully_and_start_at(100)
    assert [(s.start, s.size) for s in log.segments] == [(100, 0)]
    assert (log.log_start, log.log_end_offset, log.recovery_point) == (100, 100, 100)
    assert names(tmp_path / "t-0") == ["00000000000000000100.index", "00000000000000000100.log"]
    assert log.append(one(0)).first_offset == 100


def test_delete_records_before_moves_the_start_and_drops_whole_segments(tmp_path):
    log = filled(tmp_path / "t-0", 10, segment_bytes=100)  # a few messages a segment
    starts = [s.start for s in log.segments]
    target = starts[2] + 1  # inside the third segment
    assert log.delete_records_before(target) == target
    assert [s.start for s in log.segments] == starts[2:]  # the two below go; the third stays, partly hidden
    with pytest.raises(OffsetOutOfRangeError, match=f"valid offsets are {target} to 10"):
        log.read(target - 1, 1000)
    assert offsets_in(log.read(target, 1000).read())[0] == target
    assert log.delete_records_before(1) == target  # never back
    with pytest.raises(OffsetOutOfRangeError):
        log.delete_records_before(11)
    assert log.delete_records_before(10) == 10 and log.read(10, 1000).length == 0

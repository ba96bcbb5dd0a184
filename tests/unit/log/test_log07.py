"""One partition's log (zkafka.log.log07): layout, append, roll, flush visibility, recovery, reads, retention."""

import logging
import os
import struct

import pytest

from tests.support.logs import Clock, entry, opened, set_mtime
from zkafka.errors import (
    InvalidMessageError,
    InvalidMessageSizeError,
    KafkaStorageError,
    MessageSizeTooLargeError,
    OffsetOutOfRangeError,
)
from zkafka.log.log07 import Log, LogLayoutError, segment_file_name
from zkafka.log.segmented_log import LogAppendInfo
from zkafka.protocol import EARLIEST_TIME, LATEST_TIME
from zkafka.records.compression import GZIP
from zkafka.records.format07 import iter_messages
from zkafka.records.message07 import build_message_set

# The codec's decoding, checks and offset assignment run on the native core and on the pure path.
pytestmark = pytest.mark.usefixtures("codec_path")

HOUR_MS = 3600 * 1000


def open_log(path, clock=None, **overrides) -> Log:
    settings = dict(
        max_segment_size=1000,
        roll_ms=HOUR_MS,
        flush_interval=1,
        max_message_size=1_000_000,
        need_recovery=False,
        time_ms=clock or Clock(),
    )
    settings.update(overrides)
    os.makedirs(path, exist_ok=True)
    return opened(Log(path, "t", 0, **settings))


def appended(info) -> tuple[int, int]:
    """The (bytes, messages) of an append's result."""
    return info.size, info.count


def file_names(path) -> list[str]:
    return sorted(os.listdir(path))


# -- layout and append ----------------------------------------------------------------------------------


def test_empty_directory_gets_the_first_segment(tmp_path):
    log = open_log(tmp_path / "t-0")
    assert file_names(tmp_path / "t-0") == ["00000000000000000000.kafka"]
    assert (log.log_start, log.flushed_end, log.size) == (0, 0, 0)
    assert log.read(0, 100) == b""


def test_segment_file_name_has_20_digits():
    assert segment_file_name(0) == "00000000000000000000.kafka"
    assert segment_file_name(536870921) == "00000000000536870921.kafka"


def test_appended_bytes_are_the_message_set_bytes(tmp_path):
    log = open_log(tmp_path / "t-0")
    data = entry(b"hello") + entry(b"") + entry(b"world!")
    assert build_message_set([b"hello", b"", b"world!"]) == data
    assert appended(log.append(data)) == (len(data), 3)
    assert (tmp_path / "t-0" / "00000000000000000000.kafka").read_bytes() == data
    assert log.read(0, 1000) == data
    assert [m.payload for m, _ in iter_messages(log.read(0, 1000))] == [b"hello", b"", b"world!"]


def test_compressed_set_is_stored_as_sent_and_counted_deep(tmp_path):
    log = open_log(tmp_path / "t-0", flush_interval=100)
    data = build_message_set([b"a", b"b", b"c"], GZIP)
    assert appended(log.append(data)) == (len(data), 3)
    assert log.unflushed_messages == 3
    log.flush()
    assert (tmp_path / "t-0" / "00000000000000000000.kafka").read_bytes() == data


def test_partial_trailing_entry_is_dropped(tmp_path):
    log = open_log(tmp_path / "t-0")
    whole = entry(b"one")
    assert appended(log.append(whole + entry(b"two")[:-2])) == (len(whole), 1)
    assert (tmp_path / "t-0" / "00000000000000000000.kafka").read_bytes() == whole


@pytest.mark.parametrize(
    "bad, error",
    [
        (entry(b"x" * 11), MessageSizeTooLargeError),
        (entry(b"ok") + entry(b"x" * 11), MessageSizeTooLargeError),
        (entry(b"ok") + entry(b"bad")[:-1] + b"?", InvalidMessageError),
        (entry(b"ok")[:-1], InvalidMessageSizeError),
        (struct.pack(">i", -1) + b"12345", InvalidMessageSizeError),
    ],
)
def test_rejected_set_leaves_the_log_untouched(tmp_path, bad, error):
    log = open_log(tmp_path / "t-0", max_message_size=10, max_segment_size=5, flush_interval=100)
    log.append(entry(b"first"))
    log.flush()
    before = (tmp_path / "t-0" / "00000000000000000000.kafka").read_bytes()
    with pytest.raises(error):
        log.append(bad)
    assert file_names(tmp_path / "t-0") == ["00000000000000000000.kafka"]
    assert (tmp_path / "t-0" / "00000000000000000000.kafka").read_bytes() == before
    assert (log.size, log.flushed_end, log.unflushed_messages) == (len(before), len(before), 0)


# -- roll -----------------------------------------------------------------------------------------------


def test_roll_by_size_is_strictly_greater_and_named_by_offset(tmp_path):
    one = entry(b"0123456789")  # 20 bytes
    log = open_log(tmp_path / "t-0", max_segment_size=40)
    log.append(one)
    log.append(one)  # size == 40: not over the limit
    log.append(one)  # still goes to the first segment, which grows past the limit
    assert file_names(tmp_path / "t-0") == ["00000000000000000000.kafka"]
    log.append(one)  # the roll check runs before this append
    assert file_names(tmp_path / "t-0") == ["00000000000000000000.kafka", "00000000000000000060.kafka"]
    assert [(s.start, s.size) for s in log.segments] == [(0, 60), (60, 20)]
    assert log.read(60, 100) == one


def test_roll_by_age_of_first_append(tmp_path):
    clock = Clock()
    log = open_log(tmp_path / "t-0", clock, roll_ms=1000)
    log.append(entry(b"a"))
    assert log.segments[-1].first_append_ms == clock.now
    clock.now += 1000
    log.append(entry(b"b"))  # exactly roll_ms old: not yet
    assert len(log.segments) == 1
    clock.now += 1
    log.append(entry(b"c"))
    assert [s.start for s in log.segments] == [0, 2 * len(entry(b"a"))]
    assert log.segments[-1].first_append_ms == clock.now
    assert file_names(tmp_path / "t-0")[-1] == segment_file_name(2 * len(entry(b"a")))


def test_roll_flushes_the_old_segment_first(tmp_path):
    log = open_log(tmp_path / "t-0", max_segment_size=5, flush_interval=100)
    log.append(entry(b"unflushed"))
    assert log.flushed_end == 0
    log.append(entry(b"next"))
    assert [s.flushed_size == s.size for s in log.segments] == [True, False]
    assert log.flushed_end == len(entry(b"unflushed"))
    assert log.read(0, 100) == entry(b"unflushed")


def test_a_reloaded_segment_has_no_first_append_time(tmp_path):
    clock = Clock()
    open_log(tmp_path / "t-0", clock, roll_ms=1000).append(entry(b"a"))
    clock.now += 10_000
    log = open_log(tmp_path / "t-0", clock, roll_ms=1000)
    assert log.segments[-1].first_append_ms is None
    log.append(entry(b"b"))
    assert len(log.segments) == 1
    assert log.segments[-1].first_append_ms == clock.now


def test_roll_deletes_a_stray_file_with_the_new_name(tmp_path):
    log = open_log(tmp_path / "t-0")
    data = entry(b"abc")
    log.append(data)
    stray = tmp_path / "t-0" / segment_file_name(len(data))
    stray.write_bytes(b"junk")
    log.roll()
    assert stray.read_bytes() == b""
    assert [(s.start, s.size) for s in log.segments] == [(0, len(data)), (len(data), 0)]


def test_rolling_an_empty_segment_does_nothing(tmp_path):
    log = open_log(tmp_path / "t-0")
    log.roll()
    assert file_names(tmp_path / "t-0") == ["00000000000000000000.kafka"]


# -- flush and visibility -------------------------------------------------------------------------------


def test_unflushed_bytes_are_invisible_until_the_count_trigger(tmp_path):
    clock = Clock()
    log = open_log(tmp_path / "t-0", clock, flush_interval=3)
    two = entry(b"a") + entry(b"b")
    log.append(two)
    assert log.unflushed_messages == 2
    assert (log.size, log.flushed_end) == (len(two), 0)
    assert log.read_region(0, 1000)[2] == 0
    assert log.offsets_before(LATEST_TIME, 10) == [0]
    with pytest.raises(OffsetOutOfRangeError):
        log.read_region(len(entry(b"a")), 1000)
    clock.now += 5
    log.append(entry(b"c"))
    assert log.unflushed_messages == 0
    assert log.last_flush_ms == clock.now
    assert log.flushed_end == log.size == len(two) + len(entry(b"c"))
    assert log.offsets_before(LATEST_TIME, 1) == [log.size]


def test_explicit_flush_makes_bytes_visible(tmp_path):
    log = open_log(tmp_path / "t-0", flush_interval=100)
    data = entry(b"payload")
    log.append(data)
    assert log.read(0, 100) == b""
    assert log.flush() is True
    assert log.read(0, 100) == data
    assert log.flush() is False


def test_close_flushes_and_writes_after_it_are_refused(tmp_path):
    log = open_log(tmp_path / "t-0", flush_interval=100)
    log.append(entry(b"x"))
    log.close()
    assert log.flushed_end == len(entry(b"x"))
    for write in (lambda: log.append(entry(b"y")), log.roll):  # the roll opened a new segment file
        with pytest.raises(KafkaStorageError, match="log t-0 .* is closed"):
            write()
    assert file_names(tmp_path / "t-0") == [segment_file_name(0)]


# -- reads ----------------------------------------------------------------------------------------------


def rolled_log(tmp_path, **overrides) -> Log:
    """Three segments of 2, 2 and 1 entries of 20 bytes: starts 0, 40, 80, end 100."""
    log = open_log(tmp_path / "t-0", max_segment_size=39, **overrides)
    for i in range(5):
        log.append(entry(b"payload-%02d" % i))
    assert [(s.start, s.size) for s in log.segments] == [(0, 40), (40, 40), (80, 20)]
    return log


def test_a_fetch_never_spans_segments(tmp_path):
    log = rolled_log(tmp_path)
    assert log.read_region(0, 1000)[1:] == (0, 40)
    segment, position, length = log.read_region(20, 1000)
    assert (segment.start, position, length) == (0, 20, 20)
    segment, position, length = log.read_region(40, 1000)
    assert (segment.start, position, length) == (40, 0, 40)
    assert log.read(80, 1000) == entry(b"payload-04")


def test_a_fetch_is_not_aligned_to_messages(tmp_path):
    log = rolled_log(tmp_path)
    assert log.read(0, 30) == entry(b"payload-00") + entry(b"payload-01")[:10]
    assert log.read(45, 10) == entry(b"payload-02")[5:15]


def test_offset_bounds(tmp_path):
    log = rolled_log(tmp_path)
    segment, position, length = log.read_region(100, 1000)
    assert (segment.start, position, length) == (80, 20, 0)
    assert log.read(100, 1000) == b""
    with pytest.raises(OffsetOutOfRangeError, match="0 to 100"):
        log.read_region(101, 1000)
    with pytest.raises(OffsetOutOfRangeError):
        log.read_region(-1, 1000)
    log.delete_old_segments(lambda s: s.start == 0)
    assert log.log_start == 40
    with pytest.raises(OffsetOutOfRangeError, match="40 to 100"):
        log.read_region(39, 1000)
    assert log.read_region(40, 1000)[2] == 40


# -- offsets request ------------------------------------------------------------------------------------


def test_offsets_of_an_empty_log(tmp_path):
    clock = Clock()
    log = open_log(tmp_path / "t-0", clock)
    set_mtime(log.segments[0].path, clock.now - 1000)
    assert log.offsets_before(LATEST_TIME, 10) == [0]
    assert log.offsets_before(EARLIEST_TIME, 10) == [0]
    assert log.offsets_before(clock.now, 10) == [0]
    assert log.offsets_before(clock.now - 1001, 10) == []


def test_offsets_before(tmp_path):
    clock = Clock(10_000)
    log = rolled_log(tmp_path, clock=clock)
    for segment, mtime in zip(log.segments, (1000, 2000, 3000), strict=True):
        set_mtime(segment.path, mtime)
    # candidates: (0, 1000), (40, 2000), (80, 3000), (100, now)
    assert log.offsets_before(LATEST_TIME, 10) == [100, 80, 40, 0]
    assert log.offsets_before(LATEST_TIME, 1) == [100]
    assert log.offsets_before(EARLIEST_TIME, 10) == [0]
    assert log.offsets_before(2500, 10) == [40, 0]
    assert log.offsets_before(2000, 1) == [40]
    assert log.offsets_before(999, 10) == []
    assert log.offsets_before(10_000, 2) == [100, 80]
    assert log.offsets_before(9_999, 10) == [80, 40, 0]
    assert log.offsets_before(LATEST_TIME, 0) == []


def test_offsets_ignore_unflushed_bytes_and_an_empty_last_segment(tmp_path):
    log = rolled_log(tmp_path, flush_interval=100)
    log.roll()
    assert log.offsets_before(LATEST_TIME, 10) == [100, 80, 40, 0]
    log.append(entry(b"unflushed"))
    assert log.offsets_before(LATEST_TIME, 10) == [100, 80, 40, 0]
    log.flush()
    assert log.offsets_before(LATEST_TIME, 2) == [100 + len(entry(b"unflushed")), 100]


# -- recovery -------------------------------------------------------------------------------------------


def write_segment(directory, start: int, data: bytes) -> str:
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, segment_file_name(start))
    with open(path, "wb") as handle:
        handle.write(data)
    return path


GOOD = entry(b"first") + entry(b"second")


@pytest.mark.parametrize(
    "tail",
    [
        pytest.param(entry(b"third")[:7], id="torn entry"),
        pytest.param(entry(b"third")[:2], id="torn length"),
        pytest.param(entry(b"third")[:-1] + b"X", id="crc mismatch"),
        pytest.param(struct.pack(">i", 3) + b"abc", id="entry shorter than a header"),
        pytest.param(b"\xff" * 16, id="garbage"),
        pytest.param(b"\x00" * 16, id="zeros"),
    ],
)
def test_recovery_truncates_a_bad_tail(tmp_path, caplog, tail):
    path = write_segment(tmp_path / "t-0", 0, GOOD + tail)
    with caplog.at_level(logging.WARNING, logger="zkafka.log.log07"):
        log = open_log(tmp_path / "t-0", need_recovery=True)
    assert os.path.getsize(path) == len(GOOD)
    assert (log.size, log.flushed_end) == (len(GOOD), len(GOOD))
    assert f"truncated {len(tail)} bytes" in caplog.text
    log.append(entry(b"after"))
    assert log.read(0, 1000) == GOOD + entry(b"after")


def test_recovery_keeps_an_intact_segment(tmp_path):
    path = write_segment(tmp_path / "t-0", 0, GOOD)
    open_log(tmp_path / "t-0", need_recovery=True)
    assert os.path.getsize(path) == len(GOOD)


def test_no_recovery_keeps_the_tail(tmp_path):
    tail = entry(b"third")[:7]
    path = write_segment(tmp_path / "t-0", 0, GOOD + tail)
    log = open_log(tmp_path / "t-0", need_recovery=False)
    assert os.path.getsize(path) == len(GOOD + tail)
    assert log.flushed_end == len(GOOD + tail)


def test_recovery_checks_only_the_last_segment(tmp_path):
    older = write_segment(tmp_path / "t-0", 0, GOOD[:-1] + b"X")
    write_segment(tmp_path / "t-0", len(GOOD), GOOD + b"\x00\x00")
    log = open_log(tmp_path / "t-0", need_recovery=True)
    assert os.path.getsize(older) == len(GOOD)
    assert [(s.start, s.size) for s in log.segments] == [(0, len(GOOD)), (len(GOOD), len(GOOD))]


def test_loading_ignores_other_files_and_opens_only_the_last_for_writing(tmp_path):
    write_segment(tmp_path / "t-0", 0, GOOD)
    write_segment(tmp_path / "t-0", len(GOOD), GOOD)
    (tmp_path / "t-0" / "notes.txt").write_text("not a segment")
    (tmp_path / "t-0" / "00000000000000000999.kafka.bak").write_text("not a segment")
    log = open_log(tmp_path / "t-0")
    assert [s.start for s in log.segments] == [0, len(GOOD)]
    with pytest.raises(OSError):
        os.write(log.segments[0].fileno(), b"x")
    log.append(entry(b"more"))
    assert log.read(len(GOOD), 1000) == GOOD + entry(b"more")


def test_a_gap_between_segments_stops_the_load(tmp_path):
    write_segment(tmp_path / "t-0", 0, GOOD)
    write_segment(tmp_path / "t-0", len(GOOD) + 1, GOOD)
    with pytest.raises(LogLayoutError, match="not contiguous"):
        open_log(tmp_path / "t-0")


def test_an_overlap_between_segments_stops_the_load(tmp_path):
    write_segment(tmp_path / "t-0", 0, GOOD)
    write_segment(tmp_path / "t-0", 5, GOOD)
    with pytest.raises(LogLayoutError, match="not contiguous"):
        open_log(tmp_path / "t-0")


def test_a_segment_name_that_is_not_an_offset_stops_the_load(tmp_path):
    (tmp_path / "t-0").mkdir()
    (tmp_path / "t-0" / "first.kafka").write_bytes(GOOD)
    with pytest.raises(LogLayoutError, match="first.kafka"):
        open_log(tmp_path / "t-0")


# -- retention ------------------------------------------------------------------------------------------


def test_delete_old_segments_stops_at_the_first_kept(tmp_path):
    log = rolled_log(tmp_path)
    seen = []

    def predicate(segment):
        seen.append(segment.start)
        return segment.start != 40

    deleted = log.delete_old_segments(predicate)
    assert [s.start for s in deleted] == [0]
    assert seen == [0, 40]
    assert [s.start for s in log.segments] == [40, 80]
    assert file_names(tmp_path / "t-0") == [segment_file_name(40), segment_file_name(80)]


def test_deleting_every_segment_rolls_a_non_empty_log(tmp_path):
    log = rolled_log(tmp_path)
    deleted = log.delete_old_segments(lambda s: True)
    assert [s.start for s in deleted] == [0, 40, 80]
    assert [(s.start, s.size) for s in log.segments] == [(100, 0)]
    assert file_names(tmp_path / "t-0") == [segment_file_name(100)]
    assert (log.log_start, log.flushed_end) == (100, 100)
    log.append(entry(b"again"))
    assert log.read(100, 1000) == entry(b"again")


def test_deleting_every_segment_keeps_an_empty_last_one_and_touches_it(tmp_path):
    clock = Clock(50_000_000)
    log = rolled_log(tmp_path, clock=clock)
    log.roll()
    set_mtime(log.segments[-1].path, 1000)
    deleted = log.delete_old_segments(lambda s: True)
    assert [s.start for s in deleted] == [0, 40, 80]
    assert [s.start for s in log.segments] == [100]
    assert log.segments[0].mtime_ms == clock.now


def test_an_empty_new_log_is_never_deleted(tmp_path):
    log = open_log(tmp_path / "t-0")
    assert log.delete_old_segments(lambda s: True) == []
    assert file_names(tmp_path / "t-0") == ["00000000000000000000.kafka"]


# -- append results, listeners and the visible end ------------------------------------------------------


def test_append_returns_the_byte_offsets_it_assigned(tmp_path):
    log = open_log(tmp_path / "t-0", max_segment_size=39)
    first, second = entry(b"payload-00"), entry(b"payload-01") + entry(b"payload-02")
    assert log.append(first) == LogAppendInfo(0, 20, 20, 1)
    info = log.append(second)
    assert (info.first_offset, info.next_offset, info.size, info.count) == (20, 60, 40, 2)
    assert log.append(entry(b"payload-03")).first_offset == 60  # on the segment rolled at 60
    assert [s.start for s in log.segments] == [0, 60]
    assert log.append(entry(b"x")[:3]) == LogAppendInfo(80, 80, 0, 0)


def test_listeners_hear_of_every_append_that_wrote_bytes(tmp_path, caplog):
    log = open_log(tmp_path / "t-0", flush_interval=100)
    heard = []

    def listener(source, info):
        # called outside the lock: the log can be read from a listener
        heard.append((source.name, info, source.read_region(0, 100).length))

    def broken(source, info):
        raise RuntimeError("listener bug")

    log.add_listener(broken)
    log.add_listener(listener)
    with caplog.at_level(logging.ERROR, logger="zkafka.log.segmented_log"):
        info = log.append(entry(b"a"))
    assert heard == [("t-0", info, 0)]
    assert "listener bug" in caplog.text
    log.append(b"")
    assert len(heard) == 1
    log.remove_listener(listener)
    log.append(entry(b"b"))
    assert len(heard) == 1


def test_a_log_end_visibility_policy_shows_unflushed_bytes(tmp_path):
    from zkafka.log.segmented_log import log_end

    log = open_log(tmp_path / "t-0", flush_interval=100, visible_end=log_end)
    data = entry(b"unflushed")
    log.append(data)
    assert (log.flushed_end, log.visible_end, log.log_end_offset) == (0, len(data), len(data))
    assert log.read(0, 1000) == data
    assert log.offsets_before(LATEST_TIME, 1) == [len(data)]
    with pytest.raises(OffsetOutOfRangeError):
        log.read_region(len(data) + 1, 1000)

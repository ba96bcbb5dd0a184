"""The 0.8 offset index (zkafka.log.offset_index): file format, lookups, pre-allocation, trimming, checks."""

import os

import pytest

from tests.support.logs import opened
from zkafka.log.offset_index import CorruptIndexError, OffsetIndex


def test_golden_bytes_of_a_trimmed_index(tmp_path):
    path = str(tmp_path / "00000000000000000100.index")
    index = opened(OffsetIndex(path, 100, max_bytes=30))
    assert os.path.getsize(path) == 24  # pre-allocated, rounded down to whole entries
    index.append(103, 0x10)
    index.append(110, 0x200)
    index.close()
    assert open(path, "rb").read() == bytes.fromhex("00000003 00000010 0000000a 00000200")


def test_a_trim_keeps_the_entries_for_readers_of_the_file_and_for_the_fsync(tmp_path):
    # A roll trims the sealed index on the event loop without an msync: the entries written through the
    # mapping are in the file at once, and its fsync (the flush's, on the disk pool) makes them durable.
    path = str(tmp_path / "00000000000000000100.index")
    index = opened(OffsetIndex(path, 100, max_bytes=80))
    index.append(103, 0x10)
    index.append(110, 0x200)
    index.trim()
    assert open(path, "rb").read() == bytes.fromhex("00000003 00000010 0000000a 00000200")
    assert index.lookup(111) == (110, 0x200)
    os.fsync(index.fileno())
    index.close()


def test_lookup_finds_the_last_entry_at_or_before_the_offset(tmp_path):
    index = opened(OffsetIndex(str(tmp_path / "x.index"), 1000, max_bytes=800))
    for i in range(1, 50):
        index.append(1000 + 10 * i, 100 * i)
    assert index.lookup(999) == (1000, 0)
    assert index.lookup(1000) == (1000, 0)
    assert index.lookup(1009) == (1000, 0)
    assert index.lookup(1010) == (1010, 100)
    assert index.lookup(1255) == (1250, 2500)
    assert index.lookup(10**9) == (1490, 4900)
    assert (index.last_offset, index.last_position) == (1490, 4900)


def test_an_empty_index_looks_up_the_base(tmp_path):
    index = opened(OffsetIndex(str(tmp_path / "x.index"), 7, max_bytes=80))
    assert index.lookup(100) == (7, 0)
    assert (index.entries, index.last_offset, index.last_position) == (0, 7, 0)


def test_a_full_index_refuses_entries(tmp_path):
    index = opened(OffsetIndex(str(tmp_path / "x.index"), 0, max_bytes=16))
    index.append(1, 10)
    assert not index.is_full
    index.append(2, 20)
    assert index.is_full
    with pytest.raises(ValueError, match="full"):
        index.append(3, 30)


@pytest.mark.parametrize("offset", [15, 12, 9, 10 + 2**31])
def test_entries_must_increase_and_fit_in_int32(tmp_path, offset):
    index = opened(OffsetIndex(str(tmp_path / "x.index"), 10, max_bytes=80))
    index.append(15, 0)
    with pytest.raises(ValueError, match=f"offset {offset} cannot follow 15"):
        index.append(offset, 9)
    assert index.entries == 1


def test_an_existing_index_is_taken_as_full_and_regrown_when_active(tmp_path):
    path = str(tmp_path / "x.index")
    index = opened(OffsetIndex(path, 0, max_bytes=800))
    index.append(5, 50)
    index.append(9, 90)
    index.close()
    reopened = opened(OffsetIndex(path, 0, max_bytes=None))
    assert (reopened.entries, reopened.is_full, reopened.lookup(6)) == (2, True, (5, 50))
    reopened.close()
    active = opened(OffsetIndex(path, 0, max_bytes=800))
    assert os.path.getsize(path) == 800
    assert (active.entries, active.max_entries) == (2, 100)
    active.append(12, 120)
    active.trim()
    assert os.path.getsize(path) == 24


def test_truncate_to_offset_drops_entries_at_or_after_it(tmp_path):
    index = opened(OffsetIndex(str(tmp_path / "x.index"), 0, max_bytes=80))
    for offset in (10, 20, 30):
        index.append(offset, offset * 10)
    index.truncate_to_offset(25)
    assert (index.entries, index.last_offset) == (2, 20)
    index.truncate_to_offset(20)
    assert (index.entries, index.last_offset) == (1, 10)
    index.truncate_to_offset(3)
    assert index.entries == 0
    index.append(4, 40)
    assert index.lookup(100) == (4, 40)


def test_sanity_check(tmp_path):
    path = tmp_path / "x.index"
    path.write_bytes(bytes.fromhex("00000003 00000010 0000"))
    with pytest.raises(CorruptIndexError, match="not a multiple of 8"):
        opened(OffsetIndex(str(path), 0, max_bytes=None)).sanity_check()
    path.write_bytes(bytes.fromhex("00000003 00000010 00000000 00000000"))  # a pre-allocated tail
    with pytest.raises(CorruptIndexError, match="last offset 100 is not above the base offset 100"):
        opened(OffsetIndex(str(path), 100, max_bytes=None)).sanity_check()
    path.write_bytes(bytes.fromhex("00000003 00000010"))
    opened(OffsetIndex(str(path), 100, max_bytes=None)).sanity_check()


def test_a_trim_task_shrinks_the_file_unless_the_index_was_resized_or_closed_since(tmp_path):
    index = opened(OffsetIndex(str(tmp_path / "0.index"), 0, max_bytes=800))
    index.append(1, 10)
    index.trim_task()()
    assert os.path.getsize(index.path) == 8 and index.lookup(5) == (1, 10)
    stale = index.trim_task()
    index.resize(800)  # the segment became the active one again
    stale()
    assert os.path.getsize(index.path) == 800
    index.append(2, 20)
    late = index.trim_task()
    index.close()
    late()
    assert os.path.getsize(index.path) == 16

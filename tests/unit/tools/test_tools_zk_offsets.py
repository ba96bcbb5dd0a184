"""The ExportZkOffsets / ImportZkOffsets file format."""

from __future__ import annotations

import pytest

from zkafka.tools.zk_offsets import (
    OffsetEntry,
    OffsetFileError,
    format_offset_file,
    groups_of,
    parse_offset_file,
    parse_offset_line,
    parse_offset_path,
)


def test_an_entry_is_written_as_the_offset_node_path_and_value():
    entry = OffsetEntry("g1", "orders", "0-3", 1234)
    assert entry.path == "/consumers/g1/offsets/orders/0-3"
    assert entry.line() == "/consumers/g1/offsets/orders/0-3:1234"


def test_file_round_trips():
    entries = [OffsetEntry("g1", "orders", "0-0", 0), OffsetEntry("g2", "t.x_y-z", "10-2", 9_000_000_000)]
    text = format_offset_file(entries)
    assert text == "/consumers/g1/offsets/orders/0-0:0\n/consumers/g2/offsets/t.x_y-z/10-2:9000000000\n"
    assert parse_offset_file(text.splitlines(keepends=True)) == entries
    assert groups_of(entries) == ["g1", "g2"]


def test_blank_lines_and_surrounding_space_are_ignored():
    lines = ["\n", "  /consumers/g/offsets/t/0-1:5 \r\n", "   \n"]
    assert parse_offset_file(lines) == [OffsetEntry("g", "t", "0-1", 5)]


def test_the_value_follows_the_last_colon_so_a_group_may_hold_one():
    assert parse_offset_line("/consumers/host:1/offsets/t/0-0:42") == OffsetEntry("host:1", "t", "0-0", 42)


@pytest.mark.parametrize(
    "path",
    [
        "/consumers/g/offsets/t",
        "/consumers/g/owners/t/0-0",
        "/brokers/g/offsets/t/0-0",
        "consumers/g/offsets/t/0-0",
        "/consumers/g/offsets/t/0-0/x",
        "/consumers//offsets/t/0-0",
        "/consumers/g/offsets/t/0",
        "/consumers/g/offsets/t/a-b",
    ],
)
def test_only_offset_node_paths_are_accepted(path):
    with pytest.raises(ValueError):
        parse_offset_path(path)


def test_a_good_path_splits_into_group_topic_and_partition():
    assert parse_offset_path("/consumers/g/offsets/t/1-10") == ("g", "t", "1-10")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("/consumers/g/offsets/t/0-0", "expected <path>:<offset>"),
        ("/consumers/g/offsets/t/0-0:abc", "not a number"),
        ("/consumers/g/offsets/t/0-0:-5", "negative"),
        ("/consumers/g/ids/c:5", "not an offset node path"),
    ],
)
def test_a_bad_line_is_reported_with_its_number(line, message):
    with pytest.raises(OffsetFileError, match=rf"^line 2: .*{message}"):
        parse_offset_file(["/consumers/g/offsets/t/0-0:1\n", line + "\n"])

"""Offset checkpoint files (zkafka.log.checkpoint): the text format, atomic replacement, strict reading."""

import os

import pytest

from zkafka.log.checkpoint import CheckpointError, OffsetCheckpoint


def test_golden_bytes_and_round_trip(tmp_path):
    path = tmp_path / "recovery-point-offset-checkpoint"
    checkpoint = OffsetCheckpoint(path)
    offsets = {("t", 1): 7, ("a.b-c", 0): 5, ("t", 0): 1234567890123}
    checkpoint.write(offsets)
    assert path.read_bytes() == b"0\n3\na.b-c 0 5\nt 0 1234567890123\nt 1 7\n"
    assert checkpoint.read() == offsets
    assert os.listdir(tmp_path) == ["recovery-point-offset-checkpoint"]  # no .tmp left behind


def test_an_empty_checkpoint(tmp_path):
    checkpoint = OffsetCheckpoint(tmp_path / "c")
    checkpoint.write({})
    assert (tmp_path / "c").read_bytes() == b"0\n0\n"
    assert checkpoint.read() == {}


def test_a_missing_file_reads_as_empty(tmp_path):
    assert OffsetCheckpoint(tmp_path / "none").read() == {}


@pytest.mark.parametrize("content", [b"", b"0\n", b"0"])
def test_an_empty_file_or_a_version_alone_reads_as_empty(tmp_path, content):
    (tmp_path / "c").write_bytes(content)  # as 0.8.2's OffsetCheckpoint.read
    assert OffsetCheckpoint(tmp_path / "c").read() == {}


def test_a_write_replaces_the_whole_file(tmp_path):
    checkpoint = OffsetCheckpoint(tmp_path / "c")
    checkpoint.write({("t", p): p for p in range(100)})
    checkpoint.write({("u", 3): 9})
    assert checkpoint.read() == {("u", 3): 9}


@pytest.mark.parametrize(
    "content, problem",
    [
        (b"1\n0\n", "unknown version '1'"),
        (b"0\nx\n", "line 2 should be the entry count, found 'x'"),
        (b"0\n-1\n", "line 2 should be the entry count"),
        (b"0\n2\nt 0 5\n", "expected 2 entries, found 1"),
        (b"0\n1\nt 0 5\nt 1 6\n", "expected 1 entries, found 2"),
        (b"0\n2\nt 0 5\nt 0 6\n", "naming 1 partitions"),
        (b"0\n1\nt 0\n", "malformed line 3 't 0'"),
        (b"0\n1\nt 0 5 6\n", "malformed line 3"),
        (b"0\n1\nt  0 5\n", "malformed line 3"),
        (b"0\n1\nt x 5\n", "malformed line 3"),
        (b"0\n1\nt 0 5.0\n", "malformed line 3"),
        (b"0\n1\n 0 5\n", "malformed line 3"),
        (b"0\n1\nt 0 5\n\n", "malformed line 4"),
        (b"0\n1\n\xff 0 5\n", "not UTF-8"),
    ],
)
def test_strict_reading(tmp_path, content, problem):
    path = tmp_path / "c"
    path.write_bytes(content)
    with pytest.raises(CheckpointError, match=f"checkpoint {path}") as info:
        OffsetCheckpoint(path).read()
    assert problem in str(info.value)


def test_a_topic_with_whitespace_cannot_be_written(tmp_path):
    with pytest.raises(CheckpointError, match="'a b'"):
        OffsetCheckpoint(tmp_path / "c").write({("a b", 0): 1})
    assert not (tmp_path / "c").exists()

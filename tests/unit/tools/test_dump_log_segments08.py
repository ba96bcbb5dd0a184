"""dump-log-segments on 0.8 .log and .index files written by the real 0.8 log (no broker, no ZooKeeper)."""

from __future__ import annotations

import os
import struct
import subprocess
import sys

from tests.unit.log.test_log08 import open_log
from zkafka.records.compression import GZIP, LZ4
from zkafka.records.format08 import build_message_set, encode_message
from zkafka.tools.dump_log_segments import dump_index, dump_log08


def written_log(path, close: bool = True):
    """Offsets 0-2 plain (keys on two), 3-5 one gzip wrapper, 6-99 plain: an index entry every ~200 bytes."""
    log = open_log(path, index_interval_bytes=200)
    log.append(build_message_set([(b"k0", b"zero"), (None, b"one"), (b"k2", None)]))
    log.append(build_message_set([(None, b"a"), (None, b"b"), (None, b"c")], GZIP))
    for i in range(6, 100):
        log.append(build_message_set([(None, b"v%04d" % i)]))
    if close:
        log.close()
    return path / "00000000000000000000.log", path / "00000000000000000000.index"


def run(fn, *args, **kwargs):
    lines: list[str] = []
    report = fn(*args, lines.append, **kwargs)
    return report, lines


def test_log_lines_as_082_prints_them(tmp_path):
    log_path, _ = written_log(tmp_path / "t-0")
    report, lines = run(dump_log08, str(log_path))
    assert lines[:2] == [f"Dumping {log_path}", "Starting offset: 0"]
    crc0 = struct.unpack(">I", encode_message(b"k0", b"zero")[:4])[0]
    assert lines[2] == (
        f"offset: 0 position: 0 isvalid: true payloadsize: 4 magic: 0 compresscodec: NoCompressionCodec "
        f"crc: {crc0} keysize: 2"
    )
    assert lines[3].startswith("offset: 1 position: 32 isvalid: true payloadsize: 3 ")  # 12 + 14 + 2 + 4
    assert "keysize: 2" in lines[4] and "payloadsize: -1" in lines[4]  # a null value
    assert "offset: 5 " in lines[5] and "compresscodec: GZIPCompressionCodec" in lines[5]  # the wrapper
    assert len(lines) == 2 + 3 + 1 + 94
    assert report.valid and report.messages == 98


def test_deep_lists_the_wrappers_messages_at_its_position_and_data_on_request(tmp_path):
    log_path, _ = written_log(tmp_path / "t-0")
    _, lines = run(dump_log08, str(log_path), deep=True, print_data=True)
    wrapper_position = lines[5].split("position: ")[1].split()[0]
    inner = lines[5:8]
    assert [line.split()[1] for line in inner] == ["3", "4", "5"]
    assert all(f"position: {wrapper_position} " in line and "NoCompressionCodec" in line for line in inner)
    assert inner[0].endswith("payload: a")
    assert lines[2].endswith("keysize: 2 key: k0 payload: zero")
    assert lines[4].endswith("keysize: 2 key: k2 payload: null")


def test_a_damaged_log_is_reported(tmp_path):
    log_path, _ = written_log(tmp_path / "t-0")
    data = bytearray(log_path.read_bytes())
    data[59] ^= 0xFF  # inside the value of offset 1 (entry at 32: 12 + crc, magic, attributes, 2 lengths)
    log_path.write_bytes(bytes(data) + b"\x00\x00\x00")
    report, lines = run(dump_log08, str(log_path))
    assert "isvalid: false" in lines[3]
    assert lines[-1] == "Found 3 invalid bytes at the end of 00000000000000000000.log"
    assert not report.valid and report.invalid == 1 and report.trailing == 3
    assert "1 messages fail their CRC check" in "\n".join(report.complaints())


def test_the_index_matches_its_log(tmp_path):
    log_path, index_path = written_log(tmp_path / "t-0")
    report, lines = run(dump_index, str(index_path))
    assert lines[0] == f"Dumping {index_path}"
    entries = [tuple(int(x) for x in line.replace("offset: ", "").split(" position: ")) for line in lines[1:]]
    assert len(entries) == os.path.getsize(index_path) // 8 >= 5
    data = log_path.read_bytes()
    for offset, position in entries:
        assert struct.unpack_from(">q", data, position)[0] >= offset  # a wrapper carries its last offset
    assert report.valid and not report.mismatches
    report, lines = run(dump_index, str(index_path), verify_only=True)
    assert lines == [f"Dumping {index_path}"] and report.valid


def test_a_preallocated_index_stops_at_its_unused_tail(tmp_path):
    _, index_path = written_log(tmp_path / "t-0", close=False)  # the active index: 10 MiB, mostly zeros
    assert os.path.getsize(index_path) == 10 * 1024 * 1024
    report, lines = run(dump_index, str(index_path), verify_only=True)
    assert report.valid and 5 <= report.messages < 100


def test_index_mismatches_are_reported(tmp_path):
    _, index_path = written_log(tmp_path / "t-0")
    data = bytearray(index_path.read_bytes())
    relative, position = struct.unpack_from(">ii", data, 8)
    struct.pack_into(">ii", data, 8, relative + 1, position)
    index_path.write_bytes(bytes(data))
    report, _ = run(dump_index, str(index_path))
    assert report.mismatches == [(relative + 1, relative)]
    assert report.complaints() == [
        f"Mismatches in :{index_path}",
        f"  Index offset: {relative + 1}, log offset: {relative}",
    ]


def test_the_command_line(tmp_path):
    log_path, index_path = written_log(tmp_path / "t-0")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "zkafka.cli",
            "dump-log-segments",
            "--deep-iteration",
            "--print-data-log",
            "--files",
            f"{log_path},{index_path}",
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert "payload: v0099" in result.stdout and f"Dumping {index_path}" in result.stdout
    index_path.write_bytes(index_path.read_bytes()[:-8] + struct.pack(">ii", 99, 0))
    result = subprocess.run(
        [sys.executable, "-m", "zkafka.cli", "dump-log-segments", "--verify-index-only", str(index_path)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert "Mismatches in :" in result.stderr and "Index offset: 99, log offset: 0" in result.stderr


def test_an_lz4_wrapper_is_shown_and_read_deep(tmp_path):
    log = open_log(tmp_path / "t-0")
    log.append(build_message_set([(None, b"a"), (b"k", b"b")], LZ4))
    log.close()
    report, lines = run(
        dump_log08, str(tmp_path / "t-0" / "00000000000000000000.log"), deep=True, print_data=True
    )
    assert [line.split()[1] for line in lines[2:]] == ["0", "1"]
    assert lines[2].endswith("payload: a") and lines[3].endswith("keysize: 1 key: k payload: b")
    _, shallow = run(dump_log08, str(tmp_path / "t-0" / "00000000000000000000.log"))
    assert "offset: 1 " in shallow[2] and "compresscodec: LZ4CompressionCodec" in shallow[2]
    assert report.valid and report.messages == 2

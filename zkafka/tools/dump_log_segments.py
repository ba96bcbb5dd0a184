"""DumpLogSegments: print every message of segment files and say where a damaged segment stops being valid."""

from __future__ import annotations

import mmap
import os
from collections.abc import Callable
from dataclasses import dataclass

from zkafka.errors import KafkaError
from zkafka.records.compression import CODEC_OBJECT_NAMES, NO_COMPRESSION, decompress
from zkafka.records.entries import INT32
from zkafka.records.format07 import FORMAT07, iter_messages
from zkafka.records.message import HEADER_SIZE, LOG_OVERHEAD, Message


@dataclass
class SegmentReport:
    """What a dump found in one segment file."""

    path: str
    start_offset: int
    messages: int = 0
    invalid: int = 0
    tail: int = 0  # absolute offset after the last whole entry
    file_size: int = 0
    problem: str | None = None

    @property
    def valid(self) -> bool:
        return self.invalid == 0 and self.problem is None


def start_offset_of(path: str) -> int:
    name = os.path.basename(path)
    stem = name[: -len(".kafka")] if name.endswith(".kafka") else name
    return int(stem) if stem.isdigit() else 0


def dump_segment(
    path: str, out: Callable[[str], None], deep: bool = False, print_payload: bool = False
) -> SegmentReport:
    """Walk one segment with the file rules (stop at < 4 bytes, N < 5, or a short entry) and report it."""
    report = SegmentReport(path, start_offset_of(path))
    report.tail = report.start_offset
    out(f"Dumping {path}")
    out(f"Starting offset: {report.start_offset}")
    with open(path, "rb") as handle:
        report.file_size = os.fstat(handle.fileno()).st_size
        if report.file_size == 0:
            out(f"tail of the log is at offset: {report.start_offset}")
            return report
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            view = memoryview(data)
            try:
                _walk(view, report, out, deep, print_payload)
            finally:
                view.release()
    out(f"tail of the log is at offset: {report.tail}")
    if report.tail != report.start_offset + report.file_size and report.problem is None:
        report.problem = (
            f"{report.start_offset + report.file_size - report.tail} trailing bytes after offset {report.tail} "
            "are not a whole message"
        )
    if report.problem:
        out(f"INVALID: {report.problem}")
    return report


def _walk(view: memoryview, report: SegmentReport, out, deep: bool, print_payload: bool) -> None:
    tail = 0
    try:
        for pos, size in FORMAT07.spans(view):
            offset = report.start_offset + pos
            end = pos + size
            if view[pos + LOG_OVERHEAD] not in HEADER_SIZE:
                report.problem = f"entry at offset {offset} has unknown magic byte {view[pos + LOG_OVERHEAD]}"
                return
            magic, attributes, crc, crc_from = FORMAT07.header(view, pos, end)
            message = FORMAT07.make_message(view, pos, end, magic, attributes, crc, view[crc_from:end])
            valid = message.is_valid()
            report.messages += 1
            if not valid:
                report.invalid += 1
                if report.problem is None:
                    report.problem = f"CRC mismatch in the message at offset {offset}"
            out(_describe(offset, size - LOG_OVERHEAD, message, valid))
            if print_payload:
                out(f"payload:\t{message.payload.decode('utf-8', 'replace')}")
            if deep and valid and message.codec != NO_COMPRESSION:
                for inner_message, inner_offset in iter_messages(decompress(message.codec, message.payload)):
                    out(
                        "    "
                        + _describe(inner_offset, inner_message.size, inner_message, inner_message.is_valid())
                    )
                    if print_payload:
                        out(f"    payload:\t{inner_message.payload.decode('utf-8', 'replace')}")
            tail = end
            report.tail = report.start_offset + tail
    except KafkaError as exc:
        report.problem = f"at offset {report.start_offset + tail}: {exc}"
        return
    if len(view) - tail >= LOG_OVERHEAD:
        (size,) = INT32.unpack_from(view, tail)
        report.problem = (
            f"entry at offset {report.start_offset + tail} has length {size}, beyond the data or too short"
        )


def _describe(offset: int, size: int, message: Message, valid: bool) -> str:
    return (
        f"offset: {offset} isvalid: {str(valid).lower()} size: {size} payloadsize: {len(message.payload)} "
        f"magic: {message.magic} compresscodec: {CODEC_OBJECT_NAMES.get(message.codec, message.codec)} "
        f"crc: {message.checksum}"
    )

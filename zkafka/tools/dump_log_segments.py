"""DumpLogSegments: print every message of segment files and say where a damaged segment stops being valid.

0.7 segments (``.kafka``) with 0.7.2's output; 0.8 segments (``.log``) and offset indexes (``.index``) with
0.8.2's, plus what it only warns about (CRC failures, trailing bytes, index entries that do not match the
log, non-consecutive offsets) counted as damage.
"""

from __future__ import annotations

import mmap
import os
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

from zkafka.errors import KafkaError
from zkafka.log.offset_index import ENTRY_SIZE, INDEX_SUFFIX
from zkafka.log.time_index import TIME_ENTRY_SIZE
from zkafka.records.compression import CODEC_NAMES, CODEC_OBJECT_NAMES, CODECS_07, NO_COMPRESSION, decompress
from zkafka.records.deep_iterator import messages
from zkafka.records.default_record import Record
from zkafka.records.entries import INT32, UINT32
from zkafka.records.format07 import FORMAT07, iter_messages
from zkafka.records.format08 import FORMAT08, OFFSET, Message08, key_value
from zkafka.records.format08 import MAGIC as FORMAT08_MAGIC
from zkafka.records.log_entries import entry_problem, log_entries
from zkafka.records.message07 import HEADER_SIZE, LOG_OVERHEAD, Message
from zkafka.records.message_v1 import MAGIC as MAGIC_V1
from zkafka.records.message_v1 import decode_message as decode_message_v1
from zkafka.records.message_v1 import iter_messages as iter_messages_v1
from zkafka.records.record_batch import MAGIC as MAGIC_V2
from zkafka.records.record_batch import read_batch, read_batch_header

TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime")
_TIME_ENTRY = struct.Struct(">qi")


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
                for inner_message, inner_offset in iter_messages(
                    decompress(message.codec, message.payload, codecs=CODECS_07)
                ):
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


def _codec_name07(codec: int) -> str | int:
    """The codec's Scala object name; 0.7 has none for codec 3 (lz4 is 0.8.2's)."""
    return CODEC_OBJECT_NAMES[codec] if codec in CODECS_07 else codec


def _describe(offset: int, size: int, message: Message, valid: bool) -> str:
    return (
        f"offset: {offset} isvalid: {str(valid).lower()} size: {size} payloadsize: {len(message.payload)} "
        f"magic: {message.magic} compresscodec: {_codec_name07(message.codec)} "
        f"crc: {message.checksum}"
    )


# -- the 0.8 line: .log segments and their .index files (0.8.2's DumpLogSegments) -------------------------

INDEX_ENTRY = struct.Struct(">ii")  # offset - base, position
DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024  # how much of the log one index entry's message is read from


@dataclass
class LogReport08:
    """What a dump of one 0.8 ``.log`` or ``.index`` file found."""

    path: str
    base_offset: int
    messages: int = 0
    invalid: int = 0
    trailing: int = 0  # bytes after the last whole entry
    non_consecutive: list[tuple[int, int]] = field(default_factory=list)  # (offset, the offset after it)
    mismatches: list[tuple[int, int]] = field(default_factory=list)  # (index offset, log offset)
    problem: str | None = None

    @property
    def valid(self) -> bool:
        return not (self.invalid or self.trailing or self.mismatches or self.problem)

    def complaints(self) -> list[str]:
        """What 0.8.2 prints on standard error at the end, and zkafka's own findings."""
        name = self.path
        lines = []
        if self.mismatches:
            lines.append(f"Mismatches in :{name}")
            lines += [f"  Index offset: {i}, log offset: {o}" for i, o in self.mismatches]
        if self.non_consecutive:
            lines.append(f"Non-secutive offsets in :{name}")
            lines += [f"  {a} is followed by {b}" for a, b in self.non_consecutive]
        if self.invalid:
            lines.append(f"{name}: {self.invalid} messages fail their CRC check")
        if self.problem:
            lines.append(f"{name}: {self.problem}")
        return lines


def base_offset_of(path: str) -> int:
    """The base offset a ``<20 digits>.log``/``.index`` name encodes (0 for another name)."""
    stem = os.path.basename(path).split(".")[0]
    return int(stem) if stem.isdigit() else 0


def dump_log08(
    path: str, out: Callable[[str], None], deep: bool = False, print_data: bool = False
) -> LogReport08:
    """Print every entry of a 0.8 ``.log`` segment (wrappers' messages with ``deep``; keys and payloads with
    ``print_data``) as 0.8.2 does: ``offset: O position: P isvalid: ... crc: C [keysize: K]``."""
    report = LogReport08(path, base_offset_of(path))
    out(f"Dumping {path}")
    out(f"Starting offset: {report.base_offset}")
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size == 0:
            return report
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            view = memoryview(data)
            try:
                valid = _walk08(view, report, out, deep, print_data)
            finally:
                view.release()
    report.trailing = size - valid
    if report.trailing:
        out(f"Found {report.trailing} invalid bytes at the end of {os.path.basename(path)}")
    return report


def _walk08(view: memoryview, report: LogReport08, out, deep: bool, print_data: bool) -> int:
    last = -1
    valid = 0
    for pos, size in FORMAT08.spans(view):
        end = pos + size
        if view[pos + FORMAT08.magic_at] in (MAGIC_V1, MAGIC_V2):
            try:
                last = _dump_newer(view, pos, end, report, out, deep or print_data, print_data, last)
            except KafkaError as exc:
                report.problem = f"entry at position {pos}: {exc}"
                return valid
            valid = end
            continue
        if view[pos + FORMAT08.magic_at] != FORMAT08_MAGIC:
            report.problem = f"entry at position {pos} has unknown magic byte {view[pos + FORMAT08.magic_at]}"
            return valid
        try:
            key, value = key_value(view, pos, end)
        except KafkaError as exc:
            report.problem = f"entry at position {pos}: {exc}"
            return valid
        (offset,) = OFFSET.unpack_from(view, pos)
        attributes = view[pos + FORMAT08.magic_at + 1]
        (crc,) = UINT32.unpack_from(view, pos + 12)
        shallow = Message08(key, value, attributes, crc)
        is_valid = zlib.crc32(view[pos + FORMAT08.magic_at : end]) == crc
        listed = [(offset, shallow, is_valid)]
        if deep and is_valid and shallow.codec != NO_COMPRESSION:
            try:
                inner = messages(decompress(shallow.codec, value or b""), FORMAT08, 0, True)
                listed = [(o, m, True) for o, m in inner]
            except KafkaError as exc:
                report.problem = f"the wrapper at offset {offset} (position {pos}) cannot be read: {exc}"
                return valid
        for message_offset, message, ok in listed:
            if last >= 0 and message.codec == NO_COMPRESSION and message_offset != last + 1:
                report.non_consecutive.append((last, message_offset))
            last = message_offset
            report.messages += 1
            report.invalid += not ok
            out(_describe08(message_offset, pos, message, ok, print_data))
        valid = end
    return valid


def _dump_newer(
    view: memoryview, pos: int, end: int, report: LogReport08, out, deep: bool, print_data: bool, last: int
) -> int:
    """A magic-1 message or a record batch printed as Kafka 2.x's DumpLogSegments does: the entry's line,
    then (``deep``) one ``| offset: ...`` line per record. Returns the last record offset printed."""
    entry = next(log_entries(view, pos))
    valid = entry_problem(view, pos, end) is None
    if entry.magic == MAGIC_V2:
        header = read_batch_header(view, pos)
        kind = TIMESTAMP_TYPES[header.timestamp_type]
        head = (
            f"baseOffset: {header.base_offset} lastOffset: {header.last_offset} count: {header.count}"
            f" baseSequence: {header.base_sequence} lastSequence: {header.last_sequence}"
            f" producerId: {header.producer_id} producerEpoch: {header.producer_epoch}"
            f" partitionLeaderEpoch: {header.partition_leader_epoch}"
            f" isTransactional: {str(header.is_transactional).lower()}"
            f" isControl: {str(header.is_control).lower()}"
        )
        codec, crc = header.compression, header.crc
        records = read_batch(view, pos).records if deep and valid else []
    else:
        message = decode_message_v1(view, pos, end)
        kind, head, codec, crc = (
            TIMESTAMP_TYPES[message.timestamp_type],
            f"offset: {entry.last_offset}",
            message.codec,
            message.crc,
        )
        found = iter_messages_v1(view[pos:end]) if deep and valid else ()
        records = [Record(offset, m.timestamp, m.key, m.value) for offset, m in found]
    out(
        f"{head} position: {pos} {kind}: {entry.max_timestamp} size: {end - pos} magic: {entry.magic}"
        f" compresscodec: {CODEC_NAMES[codec].upper()} crc: {crc} isvalid: {str(valid).lower()}"
    )
    for record in records:
        if last >= 0 and record.offset != last + 1:
            report.non_consecutive.append((last, record.offset))
        last = record.offset
        report.messages += 1
        out(
            _describe_record(
                record, kind, entry.magic, header if entry.magic == MAGIC_V2 else None, print_data
            )
        )
    report.invalid += not valid
    return last


def _describe_record(record: Record, kind: str, magic: int, header, print_data: bool) -> str:
    sizes = [-1 if field is None else len(field) for field in (record.key, record.value)]
    line = f"| offset: {record.offset} {kind}: {record.timestamp} keysize: {sizes[0]} valuesize: {sizes[1]}"
    if header is not None:
        sequence = (
            -1 if header.base_sequence < 0 else header.base_sequence + record.offset - header.base_offset
        )
        line += f" sequence: {sequence} headerKeys: [{','.join(h.key for h in record.headers)}]"
    if print_data:
        if record.key is not None:
            line += f" key: {record.key.decode('utf-8', 'replace')}"
        if record.value is not None:
            line += f" payload: {record.value.decode('utf-8', 'replace')}"
    return line


def _describe08(offset: int, position: int, message: Message08, valid: bool, print_data: bool) -> str:
    payload_size = -1 if message.value is None else len(message.value)
    line = (
        f"offset: {offset} position: {position} isvalid: {str(valid).lower()} payloadsize: {payload_size} "
        f"magic: {FORMAT08_MAGIC} compresscodec: {CODEC_OBJECT_NAMES.get(message.codec, message.codec)} "
        f"crc: {message.crc}"
    )
    if message.key is not None:
        line += f" keysize: {len(message.key)}"
    if print_data:
        if message.key is not None:
            line += f" key: {message.key.decode('utf-8', 'replace')}"
        payload = "null" if message.value is None else message.value.decode("utf-8", "replace")
        line += f" payload: {payload}"
    return line


def dump_index(
    path: str,
    out: Callable[[str], None],
    verify_only: bool = False,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
) -> LogReport08:
    """Print each entry of an ``.index`` (``offset: O position: P``; nothing with ``verify_only``) and check it
    against its ``.log``: the first message at the entry's position must carry the entry's offset. Stops at
    the first zero entry after the first (the unused tail of a pre-allocated index)."""
    report = LogReport08(path, base_offset_of(path))
    out(f"Dumping {path}")
    log_path = path[: -len(INDEX_SUFFIX)] + FORMAT08.log_suffix
    with open(path, "rb") as handle:
        index = handle.read()
    if len(index) % ENTRY_SIZE:
        report.problem = f"its size {len(index)} is not a multiple of {ENTRY_SIZE}"
    if not os.path.exists(log_path):
        report.problem = f"{log_path} does not exist"
        return report
    with open(log_path, "rb") as log_file:
        for slot in range(len(index) // ENTRY_SIZE):
            relative, position = INDEX_ENTRY.unpack_from(index, slot * ENTRY_SIZE)
            if relative == 0 and slot > 0:
                return report
            offset = report.base_offset + relative
            found = _first_offset(os.pread(log_file.fileno(), max_message_size, position))
            if found != offset:
                report.mismatches.append((offset, found if found is not None else -1))
            report.messages += 1
            if not verify_only:
                out(f"offset: {offset} position: {position}")
    return report


def _first_offset(data: bytes) -> int | None:
    """The offset of the first message (deep) of the entries in ``data``; None if it has none or is bad."""
    try:
        for offset, _ in messages(data, FORMAT08, 0, True):
            return offset
    except KafkaError:
        return None
    return None


def dump_time_index(path: str, out: Callable[[str], None]) -> LogReport08:
    """Print each entry of a ``.timeindex`` (``timestamp: T offset: O``, as Kafka's DumpLogSegments) and say
    where timestamps or offsets fail to increase."""
    report = LogReport08(path, base_offset_of(path))
    out(f"Dumping {path}")
    with open(path, "rb") as handle:
        data = handle.read()
    last = (-1, -1)
    for at in range(0, len(data) - TIME_ENTRY_SIZE + 1, TIME_ENTRY_SIZE):
        timestamp, relative = _TIME_ENTRY.unpack_from(data, at)
        entry = (timestamp, report.base_offset + relative)
        if at and entry <= last:
            report.problem = f"entry {at // TIME_ENTRY_SIZE} {entry} does not follow {last}"
        out(f"timestamp: {entry[0]} offset: {entry[1]}")
        last = entry
    report.trailing = len(data) % TIME_ENTRY_SIZE
    return report

"""The one message-set entry walker, parameterised by the entry format of a line (0.7 or 0.8).

A message set is a bare concatenation of entries ``[int64 offset] | int32 N | message(N bytes)``. An
``EntryFormat`` says where N and the message header sit and what the line's rules for bad entries are;
the functions here do the shallow walking for both lines: the spans of whole entries, the checked walk
(with its fast path for plain messages), the recovery scan, and the produce-path validation with its size
limit; ``deep_iterator`` reads the messages inside wrappers on top of it. Pure: bytes in, values out. With
the native core built, recovery and validation hand runs of plain entries to it through ``native_runs``.

Wrappers are inflated with a cap (``max_inflated``): everything inflated for one top-level entry (for one
message set on the produce path) may take at most that many bytes, nested wrappers included, and a wrapper
that would take more raises MessageSizeTooLargeError before the rest of it is inflated.

Errors raised for a bad entry carry ``position`` (where the entry starts in the buffer) and ``resume``
(where reading can go on after it, or None when the entry's extent cannot be trusted).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from typing import Any, NamedTuple

from zkafka.errors import InvalidMessageError, InvalidMessageSizeError, KafkaError, MessageSizeTooLargeError
from zkafka.records import native
from zkafka.records.compression import DEFAULT_MAX_INFLATED, decompress
from zkafka.records.native_runs import NativeWalk, scan_run

INT32 = struct.Struct(">i")
UINT32 = struct.Struct(">I")


class ValidatedSet(NamedTuple):
    """What the produce-path check found: bytes of whole top-level entries, messages after decompression."""

    valid_bytes: int
    count: int


def entry_error(cls: type[KafkaError], text: str, position: int, resume: int | None) -> KafkaError:
    """An error about the entry at ``position``; ``resume`` is where reading may go on (None: nowhere)."""
    err = cls(text)
    err.position = position
    err.resume = resume
    return err


class EntryFormat:
    """The layout and rules of one line's message-set entries; subclasses fill in the per-magic details.

    The fast path reads ``fast_header`` at an entry's position: ``(N, magic, attributes, crc)``, or
    ``(N, crc, magic, attributes)`` when ``crc_first``; a message with magic ``fast_magic`` and
    ``N >= fast_min_size`` has its CRC over the bytes from ``fast_crc_from`` (counted from the entry's
    position) to the entry's end.
    """

    name: str
    log_suffix: str
    overhead: int  # bytes before the message: the offset (0.8) and N
    size_at: int  # where N sits in the entry
    magic_at: int  # where the magic byte sits in the entry
    min_size: int  # the smallest N of any message of the line
    codec_mask: int
    codecs: frozenset[int]  # the codec ids the line knows (others: UnknownCodecError)
    fast_header: struct.Struct
    crc_first: bool
    fast_magic: int
    fast_min_size: int
    fast_crc_from: int
    native_line: int  # the line's number for the native core (7 or 8)

    # -- per-line rules (slow path) --------------------------------------------------------------------

    def size_problem(self, size: int, pos: int, base: int, partial: bool) -> KafkaError | None:
        """The error for an entry of N = ``size`` that is too short or (``partial``) runs past the data;
        None to stop reading silently there."""
        raise NotImplementedError

    def header(self, data: Any, pos: int, end: int) -> tuple[int, int, int, int]:
        """``(magic, attributes, crc, crc_from)`` of the entry at ``pos``; ``crc_from`` is absolute."""
        raise NotImplementedError

    def entry_offset(self, data: Any, pos: int, end: int, base: int) -> int:
        """The offset a reader reports with the plain message of the entry at ``pos``."""
        raise NotImplementedError

    def wrapper_offsets(self, pos: int, end: int, base: int, inner: list[int]) -> list[int]:
        """The offsets reported with the messages of the wrapper at ``pos``, given their stored offsets."""
        raise NotImplementedError

    def wrapper_payload(self, data: Any, pos: int, end: int, body: Any) -> Any:
        """The compressed bytes a wrapper entry holds (``body``: the bytes its CRC covers)."""
        raise NotImplementedError

    def make_message(
        self, data: Any, pos: int, end: int, magic: int, attributes: int, crc: int, body: Any
    ) -> Any:
        """The line's message object for a checked entry."""
        raise NotImplementedError

    def entry_limits(self, max_message_size: int) -> dict[int, int]:
        """The largest entry size (overhead included) each magic may have under the size limit."""
        raise NotImplementedError

    def too_large(self, entry_size: int, magic: int, max_message_size: int) -> KafkaError:
        raise NotImplementedError

    def inflate_limit(self, max_message_size: int) -> int:
        """The most bytes the produce path inflates from one message set under the size limit."""
        raise NotImplementedError

    sizes_first = False  # True: every size is checked before any CRC (0.7); else entry by entry (0.8)

    # -- the interface the log and the tools use -------------------------------------------------------

    def spans(self, buf: Any, start: int = 0) -> Iterator[tuple[int, int]]:
        """(position, entry size with overhead) of each whole entry; see ``spans``."""
        return spans(buf, self, start)

    def walk(self, data: Any, start: int = 0, base: int = 0) -> Iterator[tuple[int, int, int, int, int, Any]]:
        """The checked shallow walk; see ``walk``."""
        return walk(data, self, start, base)

    def valid_prefix(self, buf: Any) -> int:
        """Bytes of the longest prefix of whole, CRC-valid entries: where log recovery truncates."""
        return valid_prefix(buf, self)

    def validate(
        self, buf: Any, max_message_size: int | None = None, max_inflated: int | None = None
    ) -> ValidatedSet:
        """The produce-path check of a message set; see ``validate``."""
        return validate(buf, self, max_message_size, max_inflated)

    def __repr__(self) -> str:
        return f"EntryFormat({self.name})"


def spans(
    buf: Any, fmt: EntryFormat, start: int = 0, strict: bool = False, base: int = 0
) -> Iterator[tuple[int, int]]:
    """(position, entry size with overhead) of each whole entry from ``start``, reading only lengths.

    Stops at fewer than ``overhead`` bytes, at an entry that runs past the data, and at N below the line's
    smallest message (``strict``: raises the line's error for that N instead, ``base`` added to positions).
    """
    unpack = INT32.unpack_from
    overhead, size_at, min_size = fmt.overhead, fmt.size_at, fmt.min_size
    end = len(buf)
    pos = start
    while end - pos >= overhead:
        (size,) = unpack(buf, pos + size_at)
        if size < min_size:
            if strict:
                err = fmt.size_problem(size, pos, base, pos + overhead + size > end)
                if err is not None:
                    raise err
            return
        after = pos + overhead + size
        if after > end:
            return
        yield pos, after - pos
        pos = after


def entry_size(buf: Any, fmt: EntryFormat, pos: int = 0) -> int | None:
    """The size of the entry at ``pos`` (overhead included) from its length alone; None when the length is
    not all in ``buf`` or is negative."""
    if len(buf) - pos < fmt.overhead:
        return None
    (size,) = INT32.unpack_from(buf, pos + fmt.size_at)
    return fmt.overhead + size if size >= 0 else None


def walk(
    data: Any, fmt: EntryFormat, start: int = 0, base: int = 0
) -> Iterator[tuple[int, int, int, int, int, Any]]:
    """The checked shallow walk: ``(position, end, magic, attributes, crc, body)`` of each whole entry.

    ``body`` is the slice of ``data`` the CRC covers: a 0.7 message's payload, a 0.8 message from its magic
    byte on.
    Every CRC is verified. Stops silently at fewer than ``overhead`` bytes and where the line says a short or
    partial entry ends the set; raises the line's error otherwise (``base`` is added to positions in texts).
    """
    unpack = fmt.fast_header.unpack_from
    unpack_size = INT32.unpack_from
    crc_first = fmt.crc_first
    fast_magic, fast_min, crc_from_pos = fmt.fast_magic, fmt.fast_min_size, fmt.fast_crc_from
    overhead, size_at, min_size = fmt.overhead, fmt.size_at, fmt.min_size
    head = fmt.fast_header.size
    crc32 = zlib.crc32
    end = len(data)
    last_head = end - head  # an entry starting at or before this has its whole fast header in the data
    pos = start
    while True:
        if pos <= last_head:
            if crc_first:
                size, crc, magic, attributes = unpack(data, pos)
            else:
                size, magic, attributes, crc = unpack(data, pos)
            after = pos + overhead + size
            if magic == fast_magic and size >= fast_min and after <= end:
                body = data[pos + crc_from_pos : after]
                if crc32(body) != crc:
                    raise _crc_error(pos, after, base)
                yield pos, after, magic, attributes, crc, body
                pos = after
                continue
        elif end - pos < overhead:
            return
        (size,) = unpack_size(data, pos + size_at)
        after = pos + overhead + size
        if size < min_size or after > end:
            err = fmt.size_problem(size, pos, base, after > end)
            if err is None:
                return
            raise err
        magic, attributes, crc, crc_from = fmt.header(data, pos, after)
        body = data[crc_from:after]
        if crc32(body) != crc:
            raise _crc_error(pos, after, base)
        yield pos, after, magic, attributes, crc, body
        pos = after


def _crc_error(pos: int, after: int, base: int) -> KafkaError:
    return entry_error(
        InvalidMessageError, f"CRC mismatch for the message at offset {base + pos}", pos, after
    )


def valid_prefix(buf: Any, fmt: EntryFormat) -> int:
    """Bytes of the longest prefix of whole, CRC-valid entries (recovery truncates a segment there)."""
    valid = 0
    lib = native.lib
    entries = walk(buf, fmt) if lib is None else NativeWalk(buf, fmt, 0, 0, scan_run(lib, buf, fmt, -1))
    try:
        for _, valid, _, _, _, _ in entries:  # noqa: B007 - the last end is the answer
            pass
    except KafkaError:
        pass
    return valid if lib is None else max(valid, entries.end)


def validate(
    buf: Any, fmt: EntryFormat, max_message_size: int | None = None, max_inflated: int | None = None
) -> ValidatedSet:
    """The produce-path check: every CRC (wrappers decompressed and checked too), the size limit, a count.

    Returns the bytes of whole top-level entries (a partial trailing entry is left out) and the number of
    messages after decompression. Raises the line's errors for malformed entries, InvalidMessageError for a
    CRC mismatch and MessageSizeTooLargeError for a top-level entry over the limit (0.7 checks every size
    before any CRC, 0.8 entry by entry) or for wrappers inflating to more than ``max_inflated`` bytes in all
    (by default the line's ``inflate_limit`` of the size limit; without one, DEFAULT_MAX_INFLATED): inflating
    stops there. No object is built per message.
    """
    # struct and slicing are about twice as fast on bytes as on a memoryview: one copy of the set pays off.
    data = buf if type(buf) is bytes else bytes(buf)
    if max_inflated is None:
        max_inflated = (
            DEFAULT_MAX_INFLATED if max_message_size is None else fmt.inflate_limit(max_message_size)
        )
    try:
        return _validate(data, fmt, max_message_size, InflateBudget(max_inflated))
    except (InvalidMessageError, InvalidMessageSizeError) as err:
        if max_message_size is not None:
            upto = None if fmt.sizes_first else getattr(err, "position", None)
            check_sizes(data, fmt, max_message_size, upto)
        raise


def _validate(data: bytes, fmt: EntryFormat, max_message_size: int | None, budget: InflateBudget) -> ValidatedSet:
    limits = fmt.entry_limits(max_message_size) if max_message_size is not None else None
    mask = fmt.codec_mask
    valid = count = 0
    lib = native.lib
    if lib is not None:
        limit = -1 if limits is None else limits[fmt.fast_magic]
        entries = NativeWalk(data, fmt, 0, 0, scan_run(lib, data, fmt, limit))
    else:
        entries = walk(data, fmt)
    for pos, valid, magic, attributes, _, body in entries:
        if limits is not None and valid - pos > limits[magic]:
            raise fmt.too_large(valid - pos, magic, max_message_size)
        if attributes & mask:
            inflated = inflate_wrapper(data, fmt, pos, valid, attributes, body, budget)
            count += _validate(inflated, fmt, None, budget).count
        else:
            count += 1
    if lib is not None:
        return ValidatedSet(max(valid, entries.end), count + entries.count)
    return ValidatedSet(valid, count)


def check_sizes(buf: Any, fmt: EntryFormat, max_message_size: int, upto: int | None = None) -> None:
    """MessageSizeTooLargeError if a top-level entry (at or before ``upto``) is over the size limit.

    Reads only lengths and magic bytes; a set no longer than the smallest limit is not walked.
    """
    limits = fmt.entry_limits(max_message_size)
    if len(buf) <= min(limits.values()):
        return
    for pos, size in spans(buf, fmt):
        if upto is not None and pos > upto:
            return
        magic = buf[pos + fmt.magic_at]
        if size > limits.get(magic, size):
            raise fmt.too_large(size, magic, max_message_size)


class InflateBudget:
    """The bytes inflating may still produce under one cap (shared by nested wrappers, and by the top-level
    wrappers of one message set on the produce path)."""

    __slots__ = ("limit", "left")

    def __init__(self, limit: int) -> None:
        self.limit = self.left = limit


def inflate_wrapper(
    data: Any, fmt: EntryFormat, pos: int, end: int, attributes: int, body: Any, budget: InflateBudget
) -> bytes:
    """A wrapper's inner set, refused (MessageSizeTooLargeError) before the budget's cap is passed."""
    payload = fmt.wrapper_payload(data, pos, end, body)
    try:
        inflated = decompress(attributes & fmt.codec_mask, payload, budget.left, fmt.codecs)
    except MessageSizeTooLargeError:
        raise entry_error(
            MessageSizeTooLargeError,
            f"compressed message at position {pos} inflates past the limit of {budget.limit} bytes",
            pos,
            end,
        ) from None
    budget.left -= len(inflated)
    return inflated

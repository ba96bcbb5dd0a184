"""The rows of a fetched message set, as the zkafka source returns them, cut at a range end.

Each row is one message after decompression, with two offsets:

- ``offset``: the position of the top-level entry that holds the message. For an uncompressed message that
  is the message's own position; every message inside a compressed wrapper carries the wrapper's position.
- ``nextOffset``: where a 0.7 consumer resumes after the message (``MessageAndOffset.offset``). For an
  uncompressed message and for the last message of a wrapper it is the position after the entry; for the
  other messages of a wrapper it is the wrapper's own position (resuming there re-reads the whole wrapper).

A range ``[start, end)`` holds the entries whose *start* lies before ``end``; ``end`` is always an entry
boundary (a log end, a stored next offset, or a boundary found by walking the log), so a range never holds
part of a wrapper. Pure: bytes in, columns out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from zkafka.records.compression import NO_COMPRESSION, decompress
from zkafka.records.format07 import iter_messages
from zkafka.records.message import LOG_OVERHEAD


@dataclass
class Columns:
    """Column lists of the rows decoded from one fetch (key is always null in 0.7)."""

    values: list[bytes] = field(default_factory=list)
    offsets: list[int] = field(default_factory=list)
    next_offsets: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.values)

    def append(self, value: bytes, offset: int, next_offset: int) -> None:
        self.values.append(value)
        self.offsets.append(offset)
        self.next_offsets.append(next_offset)


def decode_entries(buf: bytes | memoryview, base: int, end: int) -> tuple[Columns, int]:
    """Decode the complete entries of ``buf`` (fetched at offset ``base``) that start before ``end``.

    Returns the columns and the offset to fetch from next: the position after the last entry taken (``base``
    when none was). CRC and size errors of 0.7's iteration propagate (InvalidMessageError,
    InvalidMessageSizeError for a first entry the buffer cannot hold).
    """
    cols = Columns()
    append = cols.append
    pos = base
    for message, next_offset in iter_messages(buf, base, deep=False):
        entry_start = next_offset - LOG_OVERHEAD - message.size
        if entry_start >= end:
            break
        codec = message.codec
        if codec == NO_COMPRESSION:
            append(message.payload, entry_start, next_offset)
        else:
            inner = [m.payload for m, _ in iter_messages(decompress(codec, message.payload), 0, deep=True)]
            for payload in inner[:-1]:
                append(payload, entry_start, entry_start)
            if inner:
                append(inner[-1], entry_start, next_offset)
        pos = next_offset
    return cols, pos

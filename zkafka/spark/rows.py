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

from zkafka.records.deep_iterator import entry_messages
from zkafka.records.entries import walk
from zkafka.records.format07 import FORMAT07


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
    data = buf if type(buf) is bytes else bytes(buf)
    cols = Columns()
    append = cols.append
    taken = 0
    for pos, after, magic, attributes, crc, payload in walk(data, FORMAT07, 0, base):
        if base + pos >= end:
            break
        for next_offset, message in entry_messages(
            data, FORMAT07, pos, after, magic, attributes, crc, payload, base
        ):
            append(message.payload, base + pos, next_offset)
        taken = after
    return cols, base + taken

"""The zig-zag varints of record batches (magic 2), as Kafka's ``ByteUtils`` reads and writes them.

The codec is ``utils.byte_utils`` (shared with the protocol's flexible versions); here it raises
InvalidMessageError for a varint (int32) longer than 5 bytes, a varlong (int64) longer than 10, or one running
past the end. Bits past 32 (64) in the last byte are dropped, as Java's ``int`` (``long``) shifts do.
"""

from __future__ import annotations

from typing import Any

from zkafka.errors import InvalidMessageError
from zkafka.utils import byte_utils
from zkafka.utils.byte_utils import VARINT_MAX_BYTES, VARLONG_MAX_BYTES, unsigned_varint_bytes

__all__ = [
    "VARINT_MAX_BYTES",
    "VARLONG_MAX_BYTES",
    "read_unsigned_varint",
    "read_varint",
    "read_varlong",
    "unsigned_varint_bytes",
    "write_varint",
    "write_varlong",
]


def read_varint(data: Any, pos: int, end: int) -> tuple[int, int]:
    """``(value, position after it)`` of the varint (int32) at ``pos``, reading no further than ``end``."""
    if pos < end:  # one or two bytes (values -8192..8191), the lengths and deltas of most records
        first = data[pos]
        if first < 0x80:
            return (first >> 1) ^ -(first & 1), pos + 1
        if pos + 1 < end and data[pos + 1] < 0x80:
            raw = (first & 0x7F) | data[pos + 1] << 7
            return (raw >> 1) ^ -(raw & 1), pos + 2
    raw, after = read_unsigned_varint(data, pos, end, 32)
    return byte_utils.unzigzag(raw), after


def read_varlong(data: Any, pos: int, end: int) -> tuple[int, int]:
    """``(value, position after it)`` of the varlong (int64) at ``pos``, reading no further than ``end``."""
    if pos < end and data[pos] < 0x80:
        first = data[pos]
        return (first >> 1) ^ -(first & 1), pos + 1
    raw, after = read_unsigned_varint(data, pos, end, 64)
    return byte_utils.unzigzag(raw), after


def read_unsigned_varint(data: Any, pos: int, end: int, bits: int = 32) -> tuple[int, int]:
    """``(value, position after it)`` of the unsigned varint of ``bits`` bits (32 or 64) at ``pos``."""
    return byte_utils.read_unsigned_varint(data, pos, end, bits, InvalidMessageError, drop_overflow=True)


def write_varint(value: int) -> bytes:
    """The varint (int32) bytes of ``value``."""
    if -_SMALL <= value < _SMALL:
        return _SMALL_VARINTS[value]
    return unsigned_varint_bytes(byte_utils.zigzag(byte_utils.check_signed(value, 32), 32))


def write_varlong(value: int) -> bytes:
    """The varlong (int64) bytes of ``value``."""
    if -_SMALL <= value < _SMALL:
        return _SMALL_VARINTS[value]
    return unsigned_varint_bytes(byte_utils.zigzag(byte_utils.check_signed(value, 64), 64))


# The one- and two-byte encodings (-8192..8191: a record's lengths and deltas, mostly), made once; a negative
# value indexes from the end, as zig-zag interleaves them.
_SMALL = 8192
_SMALL_VARINTS = [unsigned_varint_bytes(byte_utils.zigzag(v, 32)) for v in range(_SMALL)] + [
    unsigned_varint_bytes(byte_utils.zigzag(v, 32)) for v in range(-_SMALL, 0)
]

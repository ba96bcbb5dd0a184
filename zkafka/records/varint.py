"""The zig-zag varints of record batches (magic 2), as Kafka's ``ByteUtils`` reads and writes them.

Protocol Buffers' encoding: a signed value zig-zag mapped to unsigned (0, -1, 1, -2 ... -> 0, 1, 2, 3 ...),
then 7 bits a byte, least significant first, the top bit set on every byte but the last. A varint (int32)
takes at most 5 bytes, a varlong (int64) at most 10; a longer one, or one running past the end, raises
InvalidMessageError. Bits past 32 (64) in the last byte are dropped, as Java's ``int`` (``long``) shifts do.
"""

from __future__ import annotations

from typing import Any

from zkafka.errors import InvalidMessageError

VARINT_MAX_BYTES = 5
VARLONG_MAX_BYTES = 10


def read_varint(data: Any, pos: int, end: int) -> tuple[int, int]:
    """``(value, position after it)`` of the varint (int32) at ``pos``, reading no further than ``end``."""
    raw, after = read_unsigned_varint(data, pos, end, 32)
    return (raw >> 1) ^ -(raw & 1), after


def read_varlong(data: Any, pos: int, end: int) -> tuple[int, int]:
    """``(value, position after it)`` of the varlong (int64) at ``pos``, reading no further than ``end``."""
    raw, after = read_unsigned_varint(data, pos, end, 64)
    return (raw >> 1) ^ -(raw & 1), after


def read_unsigned_varint(data: Any, pos: int, end: int, bits: int = 32) -> tuple[int, int]:
    """``(value, position after it)`` of the unsigned varint of ``bits`` bits (32 or 64) at ``pos``."""
    max_bytes = VARINT_MAX_BYTES if bits == 32 else VARLONG_MAX_BYTES
    raw = shift = 0
    at = pos
    while at < min(end, pos + max_bytes):
        byte = data[at]
        at += 1
        raw |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return raw & ((1 << bits) - 1), at
        shift += 7
    kind = "varint" if bits == 32 else "varlong"
    if at == pos + max_bytes:
        raise InvalidMessageError(f"{kind} at position {pos} is longer than {max_bytes} bytes")
    raise InvalidMessageError(f"{kind} at position {pos} runs past the end")


def write_varint(value: int) -> bytes:
    """The varint (int32) bytes of ``value``."""
    if not -(2**31) <= value < 2**31:
        raise ValueError(f"{value} is out of the int32 range of a varint")
    return unsigned_varint_bytes((value << 1) ^ (value >> 31))


def write_varlong(value: int) -> bytes:
    """The varlong (int64) bytes of ``value``."""
    if not -(2**63) <= value < 2**63:
        raise ValueError(f"{value} is out of the int64 range of a varlong")
    return unsigned_varint_bytes((value << 1) ^ (value >> 63))


def unsigned_varint_bytes(raw: int) -> bytes:
    """The unsigned varint bytes of ``raw`` (>= 0)."""
    out = bytearray()
    while raw > 0x7F:
        out.append(raw & 0x7F | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)

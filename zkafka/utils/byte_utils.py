"""Varints as Kafka's ``ByteUtils`` reads and writes them: the one codec of the protocol's flexible versions
(``protocol.flexible``) and of record batches (``records.varint``).

An unsigned varint is 7 bits a byte, least significant group first, the top bit set on every byte but the
last: at most 5 bytes for 32 bits, 10 for 64. A signed value is zig-zag mapped onto it first (0, -1, 1, -2 ...
-> 0, 1, 2, 3 ...). A reader names the error it raises; it also says what bits past the width in the last
byte mean: dropped, as ByteUtils' Java shifts do (record batches), or refused (requests).
"""

from __future__ import annotations

from typing import Any

VARINT_MAX_BYTES = 5
VARLONG_MAX_BYTES = 10


def read_unsigned_varint(
    data: Any, pos: int, end: int, bits: int, error: type[Exception], *, drop_overflow: bool
) -> tuple[int, int]:
    """``(value, position after it)`` of the unsigned varint of ``bits`` bits (32 or 64) at ``pos``, read no
    further than ``end``. One too long or running past ``end`` raises ``error``; bits past ``bits`` are
    dropped when ``drop_overflow``, else raise ``error``."""
    kind = "varint" if bits == 32 else "varlong"
    max_bytes = VARINT_MAX_BYTES if bits == 32 else VARLONG_MAX_BYTES
    raw = shift = 0
    at = pos
    while at < min(end, pos + max_bytes):
        byte = data[at]
        at += 1
        raw |= (byte & 0x7F) << shift
        if not byte & 0x80:
            if raw >> bits:
                if not drop_overflow:
                    raise error(f"{kind} at byte {pos} overflows {bits} bits")
                raw &= (1 << bits) - 1
            return raw, at
        shift += 7
    if at == pos + max_bytes:
        raise error(f"{kind} at byte {pos} is longer than {max_bytes} bytes")
    raise error(f"truncated {kind} at byte {pos}: it runs past the end")


def unsigned_varint_bytes(value: int) -> bytes:
    """The unsigned varint encoding of ``value`` (>= 0)."""
    if value < 0:
        raise ValueError(f"unsigned varint of negative {value}")
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def unsigned_varint_size(value: int) -> int:
    """Bytes in the unsigned varint encoding of ``value``."""
    return max(1, (value.bit_length() + 6) // 7)


def zigzag(value: int, bits: int) -> int:
    """The zig-zag form of a signed value of ``bits`` bits (no range check: see ``check_signed``)."""
    return (value << 1) ^ (value >> (bits - 1))


def unzigzag(raw: int) -> int:
    """The signed value of a zig-zag form."""
    return (raw >> 1) ^ -(raw & 1)


def check_signed(value: int, bits: int) -> int:
    """``value``, or ValueError when it is out of the signed range of ``bits`` bits."""
    if not -(1 << (bits - 1)) <= value < 1 << (bits - 1):
        raise ValueError(
            f"{value} is out of the int{bits} range of a {'varint' if bits == 32 else 'varlong'}"
        )
    return value

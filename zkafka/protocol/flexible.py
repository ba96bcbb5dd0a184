"""The wire types of flexible versions (KIP-482): varints, compact strings, bytes and arrays, tagged fields.

An unsigned varint is 7 bits a byte, low group first, the top bit set on every byte but the last (at most 5
bytes for 32 bits, 10 for 64; the codec is ``utils.byte_utils``, here refusing bits past the width);
``Varint`` / ``Varlong`` zig-zag a signed value first. A compact string, bytes or array announces its
length + 1 as an unsigned varint, 0 meaning null. A tag buffer is a count, then each
field as ``tag | size | bytes`` in increasing tag order. Reading is bounds-checked like the classic types: a
varint too long, a length past the end, a count the bytes left could not hold, or tags out of order raise
``InvalidRequestError`` before anything is allocated. Pure: bytes in, values out.
"""

from __future__ import annotations

from typing import Any

from zkafka.protocol.errors import InvalidRequestError
from zkafka.protocol.types import Reader, Type
from zkafka.utils import byte_utils
from zkafka.utils.byte_utils import (
    check_signed,
    unsigned_varint_bytes,
    unsigned_varint_size,
    unzigzag,
    zigzag,
)

UINT32_MAX = (1 << 32) - 1


def read_unsigned_varint(reader: Reader, bits: int = 32) -> int:
    """An unsigned varint of ``bits`` bits at most (32: at most 5 bytes; 64: at most 10); more bits are refused."""
    value, reader.pos = byte_utils.read_unsigned_varint(
        reader.buf, reader.pos, len(reader.buf), bits, InvalidRequestError, drop_overflow=False
    )
    return value


class _UnsignedVarint(Type):
    """An unsigned 32-bit integer as a varint (1 to 5 bytes)."""

    min_size = 1

    def write(self, value: int, out: list) -> None:
        if value > UINT32_MAX:
            raise ValueError(f"{value} does not fit an unsigned varint")
        out.append(unsigned_varint_bytes(value))

    def read(self, reader: Reader) -> int:
        return read_unsigned_varint(reader)

    def size(self, value: int) -> int:
        return unsigned_varint_size(value)

    def __repr__(self) -> str:
        return "uvarint"


class _ZigZag(Type):
    """A signed integer of ``bits`` bits, zig-zag encoded into an unsigned varint (``Varint``, ``Varlong``)."""

    min_size = 1

    def __init__(self, name: str, bits: int) -> None:
        self.name = name
        self.bits = bits

    def write(self, value: int, out: list) -> None:
        out.append(unsigned_varint_bytes(zigzag(check_signed(value, self.bits), self.bits)))

    def read(self, reader: Reader) -> int:
        return unzigzag(read_unsigned_varint(reader, self.bits))

    def size(self, value: int) -> int:
        return unsigned_varint_size(zigzag(value, self.bits))

    def __repr__(self) -> str:
        return self.name


UnsignedVarint = _UnsignedVarint()
Varint = _ZigZag("varint", 32)
Varlong = _ZigZag("varlong", 64)


def read_compact_length(reader: Reader, what: str, nullable: bool) -> int | None:
    """A compact field's length (the varint minus one); None for null, an error where null is not allowed."""
    start = reader.pos
    length = read_unsigned_varint(reader) - 1
    if length < 0 and not nullable:
        raise InvalidRequestError(f"null {what} at byte {start} where one is required")
    return None if length < 0 else length


class _CompactBytes(Type):
    """Length + 1 as an unsigned varint, then the bytes (0: null, when ``nullable``). Reads give ``bytes``."""

    min_size = 1

    def __init__(self, nullable: bool) -> None:
        self.nullable = nullable

    def write(self, value: bytes | None, out: list) -> None:
        if value is None:
            self._null(out)
            return
        out.append(unsigned_varint_bytes(len(value) + 1))
        out.append(bytes(value))

    def _null(self, out: list) -> None:
        if not self.nullable:
            raise ValueError(f"{self!r} cannot be null")
        out.append(b"\x00")

    def read(self, reader: Reader) -> bytes | None:
        length = read_compact_length(reader, repr(self), self.nullable)
        return None if length is None else bytes(reader.raw(length))

    def size(self, value: bytes | None) -> int:
        return 1 if value is None else unsigned_varint_size(len(value) + 1) + len(value)

    def __repr__(self) -> str:
        return "compact_nullable_bytes" if self.nullable else "compact_bytes"


class _CompactString(_CompactBytes):
    """A compact bytes field holding UTF-8 text (0: null, when ``nullable``)."""

    def write(self, value: str | None, out: list) -> None:
        if value is None:
            self._null(out)
            return
        data = value.encode("utf-8")
        out.append(unsigned_varint_bytes(len(data) + 1) + data)

    def read(self, reader: Reader) -> str | None:
        data = super().read(reader)
        try:
            return None if data is None else str(data, "utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidRequestError(f"string before byte {reader.pos} is not UTF-8") from exc

    def size(self, value: str | None) -> int:
        return 1 if value is None else super().size(value.encode("utf-8"))

    def __repr__(self) -> str:
        return "compact_nullable_string" if self.nullable else "compact_string"


CompactString = _CompactString(nullable=False)
CompactNullableString = _CompactString(nullable=True)
CompactBytes = _CompactBytes(nullable=False)
CompactNullableBytes = _CompactBytes(nullable=True)


class CompactArray(Type):
    """Count + 1 as an unsigned varint, then that many values (0: null, when ``nullable``).

    A count the bytes left could not hold is an error before anything is allocated.
    """

    min_size = 1

    def __init__(self, item: Type, nullable: bool = False) -> None:
        self.item = item
        self.nullable = nullable

    def write(self, values: Any, out: list) -> None:
        if values is None:
            if not self.nullable:
                raise ValueError(f"{self!r} cannot be null")
            out.append(b"\x00")
            return
        values = values if isinstance(values, list | tuple) else list(values)
        out.append(unsigned_varint_bytes(len(values) + 1))
        write = self.item.write
        for value in values:
            write(value, out)

    def read(self, reader: Reader) -> list | None:
        start = reader.pos
        count = read_compact_length(reader, "array", self.nullable)
        if count is None:
            return None
        if count * max(self.item.min_size, 1) > reader.remaining:
            raise InvalidRequestError(
                f"array of {count} items at byte {start} is longer than the {reader.remaining} bytes left"
            )
        read = self.item.read
        return [read(reader) for _ in range(count)]

    def size(self, values: Any) -> int:
        if values is None:
            return 1
        return unsigned_varint_size(len(values) + 1) + sum(self.item.size(v) for v in values)

    def __repr__(self) -> str:
        return f"compact[{self.item!r}]"


FLEXIBLE_TYPES = (_UnsignedVarint, _ZigZag, _CompactBytes, CompactArray)  # the same in every version


class TaggedField:
    """A field carried in the tag buffer under ``tag``, written only when its value is not ``default``."""

    __slots__ = ("tag", "name", "type", "default")

    def __init__(self, tag: int, name: str, field_type: Type, default: Any = None) -> None:
        self.tag = tag
        self.name = name
        self.type = field_type
        self.default = default

    def __repr__(self) -> str:
        return f"{self.name}: {self.type!r} (tag {self.tag})"


def read_tag_buffer(reader: Reader, known: dict[int, TaggedField]) -> tuple[dict[str, Any], tuple]:
    """A tag buffer: the values of the ``known`` tags by name, and the others as ``(tag, bytes)`` pairs.

    Tags must increase; each known field must fill exactly the size its entry announces."""
    start = reader.pos
    count = read_unsigned_varint(reader)
    if count * 2 > reader.remaining:  # a tag and a size take a byte each at least
        raise InvalidRequestError(f"{count} tagged fields at byte {start} cannot fit the {reader.remaining} left")
    values: dict[str, Any] = {}
    unknown: list[tuple[int, bytes]] = []
    previous = -1
    for _ in range(count):
        at = reader.pos
        tag = read_unsigned_varint(reader)
        if tag <= previous:
            raise InvalidRequestError(f"tag {tag} at byte {at} does not follow tag {previous}")
        previous = tag
        data = reader.raw(read_unsigned_varint(reader))
        field = known.get(tag)
        if field is None:
            unknown.append((tag, bytes(data)))
            continue
        inner = Reader(data)
        values[field.name] = field.type.read(inner)
        inner.expect_end()
    return values, tuple(unknown)


def write_tag_buffer(entries: list[tuple[int, list]], out: list) -> None:
    """A tag buffer of ``(tag, parts)`` entries (sorted here by tag; parts are byte strings)."""
    entries.sort(key=lambda entry: entry[0])
    out.append(unsigned_varint_bytes(len(entries)))
    for tag, parts in entries:
        data = b"".join(parts)
        out.append(unsigned_varint_bytes(tag) + unsigned_varint_bytes(len(data)))
        out.append(data)

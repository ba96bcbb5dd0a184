"""Typed wire fields: the one generic codec every request and response schema (``schema``) is declared with.

Types write into a list of *parts*:
byte strings, and for message-set fields whatever object the caller passed (a file region with a
``length``, sent with sendfile by the network layer). Reading is bounds-checked: running past the end, a
negative length where none is allowed, or an array count larger than the bytes left could hold raises
``InvalidRequestError``. Pure: bytes in, values out.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Any

from zkafka.protocol.errors import InvalidRequestError


class Reader:
    """A bounds-checked big-endian cursor over a buffer."""

    __slots__ = ("buf", "pos")

    def __init__(self, buf: bytes | bytearray | memoryview, pos: int = 0) -> None:
        self.buf = memoryview(buf)
        self.pos = pos

    @property
    def remaining(self) -> int:
        return len(self.buf) - self.pos

    def unpack(self, fmt: struct.Struct) -> Any:
        if self.pos + fmt.size > len(self.buf):
            raise InvalidRequestError(f"request truncated at byte {self.pos}")
        (value,) = fmt.unpack_from(self.buf, self.pos)
        self.pos += fmt.size
        return value

    def raw(self, size: int) -> memoryview:
        if size < 0 or self.pos + size > len(self.buf):
            raise InvalidRequestError(
                f"field of {size} bytes runs past the end of the request at byte {self.pos}"
            )
        view = self.buf[self.pos : self.pos + size]
        self.pos += size
        return view

    def expect_end(self) -> None:
        if self.pos != len(self.buf):
            raise InvalidRequestError(f"{len(self.buf) - self.pos} unexpected bytes after the request body")


class Type:
    """A wire type: ``write`` appends a value's parts, ``read`` takes it back, ``size`` counts its bytes."""

    min_size = 0  # the fewest bytes one value can take: bounds an array count before anything is built

    def write(self, value: Any, out: list) -> None:
        raise NotImplementedError

    def read(self, reader: Reader) -> Any:
        raise NotImplementedError

    def size(self, value: Any) -> int:
        raise NotImplementedError


class Fixed(Type):
    """A fixed-width integer."""

    def __init__(self, name: str, fmt: str) -> None:
        self.name = name
        self.fmt = struct.Struct(fmt)
        self.min_size = self.fmt.size

    def write(self, value: int, out: list) -> None:
        out.append(self.fmt.pack(value))

    def read(self, reader: Reader) -> int:
        return reader.unpack(self.fmt)

    def size(self, value: int) -> int:
        return self.fmt.size

    def __repr__(self) -> str:
        return self.name


Int8 = Fixed("int8", ">b")
Int16 = Fixed("int16", ">h")
Int32 = Fixed("int32", ">i")
Int64 = Fixed("int64", ">q")
UInt32 = Fixed("uint32", ">I")
Boolean = Fixed("bool", ">?")  # one byte; any non-zero reads as True


class _String(Type):
    """``int16 length`` + UTF-8 bytes; length -1 is None. ``nullable`` says what a schema declares (a flexible
    version writes a non-nullable string as ``CompactString``, a nullable one as ``CompactNullableString``)."""

    min_size = 2

    def __init__(self, nullable: bool = False) -> None:
        self.nullable = nullable

    def write(self, value: str | None, out: list) -> None:
        if value is None:
            out.append(b"\xff\xff")
            return
        data = value.encode("utf-8")
        if len(data) > 0x7FFF:
            raise ValueError(f"string of {len(data)} bytes is too long for a short string")
        out.append(Int16.fmt.pack(len(data)) + data)

    def read(self, reader: Reader) -> str | None:
        size = reader.unpack(Int16.fmt)
        if size < 0:
            return None
        data = reader.raw(size)
        try:
            return str(data, "utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidRequestError(f"string at byte {reader.pos - size} is not UTF-8") from exc

    def size(self, value: str | None) -> int:
        return 2 if value is None else 2 + len(value.encode("utf-8"))

    def __repr__(self) -> str:
        return "nullable_string" if self.nullable else "string"


class _Bytes(Type):
    """``int32 length`` + bytes; length -1 is None. Reads give ``bytes``. ``nullable`` as for strings."""

    min_size = 4

    def __init__(self, nullable: bool = False) -> None:
        self.nullable = nullable

    def write(self, value: bytes | None, out: list) -> None:
        if value is None:
            out.append(b"\xff\xff\xff\xff")
            return
        out.append(Int32.fmt.pack(len(value)))
        out.append(value)

    def read(self, reader: Reader) -> bytes | None:
        size = reader.unpack(Int32.fmt)
        if size < 0:
            return None
        return bytes(reader.raw(size))

    def size(self, value: bytes | None) -> int:
        return 4 if value is None else 4 + len(value)

    def __repr__(self) -> str:
        return "nullable_bytes" if self.nullable else "bytes"


class _MessageSet(Type):
    """``int32 size`` + a message set. Reads give a ``memoryview`` into the request (no copy); writes take
    bytes or any object with a ``length`` (a file region the network layer sends with sendfile)."""

    min_size = 4

    def write(self, value: Any, out: list) -> None:
        length = part_length(value)
        out.append(Int32.fmt.pack(length))
        if length:
            out.append(value)

    def read(self, reader: Reader) -> memoryview:
        size = reader.unpack(Int32.fmt)
        if size < 0:
            raise InvalidRequestError(f"negative message set size {size} at byte {reader.pos - 4}")
        return reader.raw(size)

    def size(self, value: Any) -> int:
        return 4 + part_length(value)

    def __repr__(self) -> str:
        return "message_set"


class _Remainder(Type):
    """Raw bytes up to the end of the buffer, with no length (a 0.7 FETCH response's message set). Reads give a
    ``memoryview``; writes take bytes or an object with a ``length`` (a file region)."""

    def write(self, value: Any, out: list) -> None:
        if part_length(value):
            out.append(value)

    def read(self, reader: Reader) -> memoryview:
        return reader.raw(reader.remaining)

    def size(self, value: Any) -> int:
        return part_length(value)

    def __repr__(self) -> str:
        return "remainder"


String = _String()
NullableString = _String(nullable=True)
Bytes = _Bytes()
NullableBytes = _Bytes(nullable=True)
MessageSet = _MessageSet()
Remainder = _Remainder()


class Array(Type):
    """A count followed by that many values (``int32`` count unless told; 0.7 uses ``int16``).

    A count of -1 reads as None when ``nullable``; any other negative count, or one the bytes left could not
    hold, is an error before anything is allocated.
    """

    def __init__(self, item: Type, count: Fixed = Int32, nullable: bool = False) -> None:
        self.item = item
        self.count = count
        self.nullable = nullable
        self.min_size = count.fmt.size

    def write(self, values: Iterable | None, out: list) -> None:
        if values is None:
            self.count.write(-1, out)
            return
        values = values if isinstance(values, list | tuple) else list(values)
        self.count.write(len(values), out)
        write = self.item.write
        for value in values:
            write(value, out)

    def read(self, reader: Reader) -> list | None:
        count = reader.unpack(self.count.fmt)
        if count < 0:
            if count == -1 and self.nullable:
                return None
            raise InvalidRequestError(f"negative array count {count} at byte {reader.pos - self.min_size}")
        if count * max(self.item.min_size, 1) > reader.remaining:
            raise InvalidRequestError(
                f"array of {count} items at byte {reader.pos - self.min_size} is longer than the "
                f"{reader.remaining} bytes left"
            )
        read = self.item.read
        return [read(reader) for _ in range(count)]

    def size(self, values: Iterable | None) -> int:
        if values is None:
            return self.min_size
        return self.min_size + sum(self.item.size(v) for v in values)

    def __repr__(self) -> str:
        return f"[{self.item!r}]"


class Repeated(Type):
    """Values one after another up to the end of the buffer, with no count (0.7's MULTIFETCH response)."""

    def __init__(self, item: Type) -> None:
        self.item = item

    def write(self, values: Iterable, out: list) -> None:
        for value in values:
            self.item.write(value, out)

    def read(self, reader: Reader) -> list:
        values = []
        while reader.remaining > 0:
            values.append(self.item.read(reader))
        return values

    def size(self, values: Iterable) -> int:
        return sum(self.item.size(v) for v in values)


class Sized(Type):
    """``int32 size`` + one value of ``item`` that must fill exactly those bytes (a 0.7 MULTIFETCH part)."""

    def __init__(self, item: Type) -> None:
        self.item = item
        self.min_size = 4 + item.min_size

    def write(self, value: Any, out: list) -> None:
        Int32.write(self.item.size(value), out)
        self.item.write(value, out)

    def read(self, reader: Reader) -> Any:
        size = reader.unpack(Int32.fmt)
        inner = Reader(reader.raw(size))
        value = self.item.read(inner)
        inner.expect_end()
        return value

    def size(self, value: Any) -> int:
        return 4 + self.item.size(value)

    def __repr__(self) -> str:
        return f"sized({self.item!r})"


def part_length(part: Any) -> int:
    """Bytes in one part: a byte string, or an object with a ``length`` (a file region)."""
    return len(part) if isinstance(part, bytes | bytearray | memoryview) else part.length


def parts_size(parts: Iterable) -> int:
    """Bytes in ``parts`` (byte strings and file regions)."""
    return sum(map(part_length, parts))


def join_parts(parts: list) -> list:
    """Adjacent byte strings merged, so a response is a few sends: bytes, region, bytes, ..."""
    merged: list = []
    pending: list = []
    for part in parts:
        if isinstance(part, bytes | bytearray | memoryview):
            pending.append(part)
        else:
            if pending:
                merged.append(b"".join(pending))
                pending = []
            merged.append(part)
    if pending:
        merged.append(b"".join(pending))
    return merged


def frame_parts(parts: list) -> list:
    """``int32 size`` + ``parts``, adjacent byte strings merged: a frame as both protocol lines send it."""
    return join_parts([Int32.fmt.pack(parts_size(parts)), *parts])

"""Schemas: named, typed fields in wire order, and the ``Struct`` classes every request and response is.

``struct_class`` makes a named tuple class from a field list, so a request is plain data plus its schema
(kafka-python's ``protocol/`` style); ``encode`` / ``decode`` read and write any type. Pure: bytes in, values
out.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any, ClassVar

from zkafka.protocol.types import Reader, Type, frame_parts, join_parts


class Schema(Type):
    """Named, typed fields in wire order; values are named tuples of the schema's own ``record`` class."""

    def __init__(self, name: str, *fields: tuple[str, Type]) -> None:
        self.name = name
        self.fields = fields
        self.types = tuple(t for _, t in fields)
        self.record = namedtuple(name, [n for n, _ in fields])
        self.min_size = sum(t.min_size for t in self.types)

    def write(self, value: tuple, out: list) -> None:
        for field_type, field in zip(self.types, value, strict=True):
            field_type.write(field, out)

    def read(self, reader: Reader) -> tuple:
        return self.record._make([t.read(reader) for t in self.types])

    def size(self, value: tuple) -> int:
        return sum(t.size(v) for t, v in zip(self.types, value, strict=True))

    def __repr__(self) -> str:
        return f"{self.name}({', '.join(f'{n}: {t!r}' for n, t in self.fields)})"


def encode(schema: Type, value: Any) -> bytes:
    """The bytes of ``value`` (every field must be bytes-like: no file regions)."""
    out: list = []
    schema.write(value, out)
    return b"".join(out)


def decode(schema: Type, buf: bytes | bytearray | memoryview, exact: bool = True) -> Any:
    """Read one value of ``schema`` from ``buf``; with ``exact``, trailing bytes are an error."""
    reader = Reader(buf)
    value = schema.read(reader)
    if exact:
        reader.expect_end()
    return value


class Struct(tuple):
    """Base of the declared wire structures: ``class X(Struct): SCHEMA = Schema(...)`` gives a named tuple
    with ``encode``/``encode_parts``/``decode``. Subclasses are built with ``struct_class``."""

    __slots__ = ()
    SCHEMA: ClassVar[Schema]

    def encode(self) -> bytes:
        return encode(self.SCHEMA, self)

    def encode_parts(self) -> list:
        out: list = []
        self.SCHEMA.write(self, out)
        return join_parts(out)

    def encode_frame(self) -> list:
        """``int32 size`` + this value's parts (byte strings merged, file regions kept for sendfile)."""
        out: list = []
        self.SCHEMA.write(self, out)
        return frame_parts(out)

    @classmethod
    def read_from(cls, reader: Reader) -> Struct:
        return cls._make(t.read(reader) for t in cls.SCHEMA.types)  # type: ignore[attr-defined]

    @classmethod
    def decode(cls, buf: bytes | bytearray | memoryview, exact: bool = True) -> Struct:
        reader = Reader(buf)
        value = cls.read_from(reader)
        if exact:
            reader.expect_end()
        return value


def struct_class(name: str, *fields: tuple[str, Type], doc: str = "", **class_attrs: Any) -> type:
    """A named tuple class for ``fields`` with the Struct codec methods and ``SCHEMA`` set."""
    schema = Schema(name, *fields)
    base = schema.record
    cls = type(name, (base, Struct), {"__slots__": (), "SCHEMA": schema, "__doc__": doc or repr(schema)})
    for key, value in class_attrs.items():
        setattr(cls, key, value)
    schema.record = cls  # values read through the schema (nested in arrays too) are of this class
    return cls

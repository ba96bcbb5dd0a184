"""Schemas: named, typed fields in wire order, and the ``Struct`` classes every request and response is.

``struct_class`` makes a named tuple class from a field list, so a request is plain data plus its schema
(kafka-python's ``protocol/`` style); ``encode`` / ``decode`` read and write any type.

A schema declared ``flexible`` (KIP-482) is the same declaration read the flexible way: its strings, bytes
and arrays (nested schemas too) become their compact forms, and a tag buffer follows its fields, holding the
declared ``tagged`` fields (each written only when not its default) and any others, kept as
``unknown_tagged_fields`` (``(tag, bytes)`` pairs) and written back. Pure: bytes in, values out.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any, ClassVar

from zkafka.protocol.flexible import (
    FLEXIBLE_TYPES,
    CompactArray,
    CompactBytes,
    CompactNullableBytes,
    CompactNullableString,
    CompactString,
    TaggedField,
    read_tag_buffer,
    write_tag_buffer,
)
from zkafka.protocol.types import Array, Fixed, Reader, Type, _Bytes, _String, frame_parts, join_parts

UNKNOWN_TAGGED_FIELDS = "unknown_tagged_fields"


class Schema(Type):
    """Named, typed fields in wire order; values are named tuples of the schema's own ``record`` class.

    A ``flexible`` schema's record has the ``tagged`` fields after the others (their defaults when absent) and
    ``unknown_tagged_fields`` last (default ``()``); it also writes a value of the plain fields alone (a record
    of the classic declaration), as if every tagged field held its default."""

    def __init__(
        self, name: str, *fields: tuple[str, Type], flexible: bool = False, tagged: tuple[TaggedField, ...] = ()
    ) -> None:
        if tagged and not flexible:
            raise TypeError(f"{name}: tagged fields need a flexible version")
        self.name = name
        self.flexible = flexible
        self.fields = tuple((n, flexible_type(t)) for n, t in fields) if flexible else fields
        self.types = tuple(t for _, t in self.fields)
        self.tagged = tuple(TaggedField(f.tag, f.name, flexible_type(f.type), f.default) for f in tagged)
        self.tags = {f.tag: f for f in self.tagged}
        names = [n for n, _ in fields]
        if flexible:
            names += [f.name for f in tagged] + [UNKNOWN_TAGGED_FIELDS]
        defaults = [f.default for f in tagged] + [()] if flexible else None
        self.record = namedtuple(name, names, defaults=defaults)
        self.min_size = sum(t.min_size for t in self.types) + flexible  # an empty tag buffer is one byte
        self._flexible_version: Schema | None = self if flexible else None

    def write(self, value: tuple, out: list) -> None:
        if not self.flexible:
            for field_type, field in zip(self.types, value, strict=True):
                field_type.write(field, out)
            return
        count = len(self.types)
        for field_type, field in zip(self.types, value[:count], strict=True):
            field_type.write(field, out)
        if len(value) > count:
            self._write_tags(value[count:], out)
        else:  # a value of the plain fields only (a classic record of this struct): every tag its default
            write_tag_buffer([], out)

    def _write_tags(self, tail: tuple, out: list) -> None:
        """The tag buffer: the tagged fields that differ from their defaults, and the unknown ones."""
        *known, unknown = tail
        entries: list[tuple[int, list]] = []
        for field, value in zip(self.tagged, known, strict=True):
            if not _is_default(value, field.default):
                parts: list = []
                field.type.write(value, parts)
                entries.append((field.tag, parts))
        entries.extend((tag, [data]) for tag, data in unknown)
        write_tag_buffer(entries, out)

    def read(self, reader: Reader) -> tuple:
        values = [t.read(reader) for t in self.types]
        if self.flexible:
            tagged, unknown = read_tag_buffer(reader, self.tags)
            values.extend(tagged.get(f.name, f.default) for f in self.tagged)
            values.append(unknown)
        return self.record._make(values)

    def size(self, value: tuple) -> int:
        if not self.flexible:
            return sum(t.size(v) for t, v in zip(self.types, value, strict=True))
        out: list = []
        self.write(value, out)
        return sum(map(len, out))

    def flexible_version(self) -> Schema:
        """This schema read the flexible way (made once; its record is a Struct class of the same name)."""
        if self._flexible_version is None:
            schema = Schema(self.name, *self.fields, flexible=True)
            make_struct_class(schema, f"{self.name} in a flexible version: {schema!r}")
            self._flexible_version = schema
        return self._flexible_version

    def __repr__(self) -> str:
        fields = [f"{n}: {t!r}" for n, t in self.fields] + [repr(f) for f in self.tagged]
        return f"{self.name}({', '.join(fields)}{', tagged fields' if self.flexible else ''})"


def flexible_type(field_type: Type) -> Type:
    """What ``field_type`` is in a flexible version: strings, bytes and arrays compact, schemas flexible."""
    if isinstance(field_type, _String):
        return CompactNullableString if field_type.nullable else CompactString
    if isinstance(field_type, _Bytes):
        return CompactNullableBytes if field_type.nullable else CompactBytes
    if isinstance(field_type, Array):
        return CompactArray(flexible_type(field_type.item), field_type.nullable)
    if isinstance(field_type, Schema):
        return field_type.flexible_version()
    if isinstance(field_type, (Fixed, *FLEXIBLE_TYPES)):
        return field_type  # fixed widths, varints and the compact types themselves
    raise TypeError(f"{field_type!r} has no flexible form")


def _is_default(value: Any, default: Any) -> bool:
    """Whether a tagged field holds its default (an empty list is the empty-tuple default of an array)."""
    if isinstance(default, tuple) and isinstance(value, list | tuple):
        return tuple(value) == default
    return value == default


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
        return cls.SCHEMA.read(reader)  # type: ignore[return-value]

    @classmethod
    def decode(cls, buf: bytes | bytearray | memoryview, exact: bool = True) -> Struct:
        reader = Reader(buf)
        value = cls.read_from(reader)
        if exact:
            reader.expect_end()
        return value


def struct_class(
    name: str,
    *fields: tuple[str, Type],
    doc: str = "",
    flexible: bool = False,
    tagged: tuple[TaggedField, ...] = (),
    **class_attrs: Any,
) -> type:
    """A named tuple class for ``fields`` with the Struct codec methods and ``SCHEMA`` set; ``flexible``: read
    the flexible way, with the ``tagged`` fields in its tag buffer."""
    return make_struct_class(Schema(name, *fields, flexible=flexible, tagged=tagged), doc, **class_attrs)


def make_struct_class(schema: Schema, doc: str = "", **class_attrs: Any) -> type:
    """The Struct class of ``schema``, which from then on reads values as instances of it."""
    base = schema.record
    namespace = {"__slots__": (), "SCHEMA": schema, "__doc__": doc or repr(schema)}
    cls = type(schema.name, (base, Struct), namespace)
    for key, value in class_attrs.items():
        setattr(cls, key, value)
    schema.record = cls  # values read through the schema (nested in arrays too) are of this class
    return cls

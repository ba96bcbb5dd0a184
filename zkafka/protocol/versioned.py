"""One declaration for every version of an API: each field says the versions that carry it, as Kafka's
message JSONs do (``versions``, ``nullableVersions``, ``flexibleVersions``), and ``declare`` makes the struct
class of each version from it. A later version that only adds fields is the same declaration read at a higher
version, not a new code path; ``make`` fills any version's class from one set of values (the fields a version
lacks are left out), so a handler builds every version's answer the same way. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from zkafka.protocol.api_keys import api_struct
from zkafka.protocol.flexible import CompactArray
from zkafka.protocol.schema import UNKNOWN_TAGGED_FIELDS, Schema, struct_class
from zkafka.protocol.types import Array, Bytes, NullableBytes, NullableString, String, Type

LAST = 0x7FFF  # "and every later version" (Kafka's ``N+``)


class Nested(NamedTuple):
    """An array of structs (Kafka's ``[]Name`` with its own ``fields``); ``aliases`` names the struct class of
    the versions where its field list starts (``{5: "JoinGroupMemberV5"}``), else ``name`` + ``V<version>``."""

    name: str
    fields: tuple[Field, ...]
    aliases: dict[int, str] = {}


class Field(NamedTuple):
    """A field carried in versions ``since`` to ``until``; null allowed from ``nullable_since``."""

    name: str
    type: Type | Nested
    since: int = 0
    until: int = LAST
    nullable_since: int | None = None

    def at(self, version: int) -> bool:
        return self.since <= version <= self.until


_NULLABLE = {id(String): NullableString, id(Bytes): NullableBytes}
_nested_classes: dict[tuple, type] = {}


def fields_at(fields: tuple[Field, ...], version: int, since: int = 0) -> list[tuple[str, Type]]:
    """The (name, type) pairs of ``version``, in wire order (classic types: a flexible schema converts them);
    ``since``: the first version of the field that holds these (where nested struct classes are named from)."""
    return [(f.name, _type_at(f, version, max(since, f.since))) for f in fields if f.at(version)]


def _type_at(field: Field, version: int, since: int) -> Type:
    nullable = field.nullable_since is not None and version >= field.nullable_since
    if isinstance(field.type, Nested):
        return Array(nested_class(field.type, version, since).SCHEMA, nullable=nullable)
    if isinstance(field.type, Array):
        return Array(field.type.item, nullable=nullable) if nullable else field.type
    return _NULLABLE.get(id(field.type), field.type) if nullable else field.type


def nested_class(spec: Nested, version: int, since: int = 0) -> type:
    """The struct class of ``spec`` at ``version`` (one class for all versions with the same fields), named
    for the first version from ``since`` with these fields."""
    fields = fields_at(spec.fields, version, since)
    key = (spec.name, _shape(fields))
    cls = _nested_classes.get(key)
    if cls is None:
        first = min(v for v in range(since, version + 1) if _shape(fields_at(spec.fields, v, since)) == key[1])
        name = spec.aliases.get(first, spec.name if first == 0 else f"{spec.name}V{first}")
        cls = _nested_classes[key] = struct_class(name, *fields)
    return cls


def _shape(fields: list[tuple[str, Type]]) -> tuple:
    return tuple((name, repr(t)) for name, t in fields)


def declare(
    name: str, api_key: int, versions: range, fields: tuple[Field, ...], flexible_since: int = LAST
) -> tuple[type, ...]:
    """The body class of every version in ``versions`` (indexed by version; ``None`` below the first), each
    named ``<name>V<version>``, flexible (KIP-482) from ``flexible_since``."""
    classes: list[Any] = [None] * versions.start
    for version in versions:
        classes.append(
            api_struct(
                f"{name}V{version}",
                api_key,
                version,
                *fields_at(fields, version),
                flexible=version >= flexible_since,
            )
        )
    return tuple(classes)


def pairs(requests: tuple[type, ...], responses: tuple[type, ...]) -> tuple[tuple[type, type], ...]:
    """The (request, response) class pairs of every declared version."""
    return tuple((req, resp) for req, resp in zip(requests, responses, strict=True) if req is not None)


def make(cls: type, **values: Any) -> Any:
    """An instance of the struct class ``cls`` from ``values`` by field name: the fields it lacks are ignored;
    an array of structs may be given as a list of dicts (each made the same way)."""
    return _make_record(cls.SCHEMA, values)


def _make_record(schema: Schema, values: dict[str, Any]) -> Any:
    args = {}
    for name, field_type in schema.fields:
        value = values[name]
        item = getattr(field_type, "item", None)
        if isinstance(field_type, Array | CompactArray) and isinstance(item, Schema) and value is not None:
            value = [_make_record(item, v) if isinstance(v, dict) else v for v in value]
        args[name] = value
    if schema.flexible:
        args[UNKNOWN_TAGGED_FIELDS] = ()
    return schema.record(**args)

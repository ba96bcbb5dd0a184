"""Encoders: turn the objects handed to ``send`` into message payloads (0.7's ``kafka.serializer.Encoder``).

An encoder is any object with ``encode(event) -> bytes``, or a plain callable doing the same.
``serializer.class`` names one by import path; the Java names ``kafka.serializer.DefaultEncoder`` and
``kafka.serializer.StringEncoder`` map to :class:`DefaultEncoder` and :class:`StringEncoder`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from zkafka.records.compression import NO_COMPRESSION
from zkafka.records.message07 import Message, build_message_set

JAVA_DEFAULT_ENCODER = "kafka.serializer.DefaultEncoder"
JAVA_STRING_ENCODER = "kafka.serializer.StringEncoder"


class Encoder(Protocol):
    """``encode(event) -> bytes``: the payload of the message that carries ``event``."""

    def encode(self, event: Any) -> bytes: ...


class DefaultEncoder:
    """Bytes as they are (also ``bytearray``/``memoryview``); a :class:`Message` as it is, attributes and all,
    as 0.7's DefaultEncoder (so a mirror forwards compressed wrappers untouched)."""

    def encode(self, event: Any) -> bytes | Message:
        if isinstance(event, bytes | bytearray | memoryview | Message):
            return event
        raise TypeError(
            f"DefaultEncoder sends bytes, not {type(event).__name__}; use StringEncoder "
            f"(serializer.class={JAVA_STRING_ENCODER}) for str messages"
        )


class StringEncoder:
    """A ``str`` as its UTF-8 bytes (0.7 used the platform charset; UTF-8 is what every JVM uses today)."""

    def __init__(self, encoding: str = "utf-8") -> None:
        self.encoding = encoding

    def encode(self, event: Any) -> bytes:
        if isinstance(event, str):
            return event.encode(self.encoding)
        if isinstance(event, bytes | bytearray | memoryview):
            return event
        raise TypeError(f"StringEncoder encodes str, not {type(event).__name__}")


class CallableEncoder:
    """Wraps a function ``event -> bytes`` as an encoder."""

    def __init__(self, func: Callable[[Any], bytes]) -> None:
        self.func = func

    def encode(self, event: Any) -> bytes:
        return self.func(event)


_JAVA_NAMES: dict[str, type] = {JAVA_DEFAULT_ENCODER: DefaultEncoder, JAVA_STRING_ENCODER: StringEncoder}


def load_encoder(spec: str | Encoder | Callable[[Any], bytes] | None) -> Encoder:
    """An encoder from ``serializer.class`` (an import path), an encoder object, or a callable."""
    if spec is None:
        return DefaultEncoder()
    if not isinstance(spec, str):
        if isinstance(spec, type):
            return load_encoder(spec())
        if callable(getattr(spec, "encode", None)):
            return spec  # type: ignore[return-value]
        if callable(spec):
            return CallableEncoder(spec)
        raise TypeError(f"{spec!r} is neither an encoder nor a callable")
    if spec in _JAVA_NAMES:
        return _JAVA_NAMES[spec]()
    return load_encoder(import_object(spec, "serializer.class")())


def encode_message_set(encoder: Encoder, events: Sequence[Any], codec: int = NO_COMPRESSION) -> bytes:
    """One message set of the encoded ``events`` (one compressed wrapper when ``codec`` is not 0).

    Through the DefaultEncoder, bytes-like events go into the set as they are, with no per-event Python
    call; anything else falls back to encoding event by event (and a TypeError names the event's type).
    """
    if type(encoder) is DefaultEncoder:
        try:
            return build_message_set(events, codec)
        except TypeError:
            pass
    encode = encoder.encode
    return build_message_set([encode(e) for e in events], codec)


def import_object(path: str, what: str) -> Any:
    """``package.module.Name`` or ``package.module:Name``; an ImportError names the config key."""
    module_name, sep, name = path.rpartition(":" if ":" in path else ".")
    if not sep or not module_name or not name:
        raise ImportError(f"{what}: {path!r} is not of the form module.Name or module:Name")
    try:
        module = importlib.import_module(module_name)
        return getattr(module, name)
    except (ImportError, AttributeError) as exc:
        raise ImportError(f"{what}: cannot import {path!r}: {exc}") from exc


def codec_for_topic(codec: int, compressed_topics: frozenset[str], topic: str) -> int:
    """``compression.codec`` for a topic in ``compressed.topics`` (every topic when that list is empty), else
    no compression (both lines' rule)."""
    if codec == NO_COMPRESSION or (compressed_topics and topic not in compressed_topics):
        return NO_COMPRESSION
    return codec

"""The 0.7 message: ``magic | [attributes] | crc32(payload) | payload``, and building 0.7 message sets.

A 0.7 message set is a concatenation of entries ``int32 N | message(N bytes)``; reading one (the 0.7
iteration rules) is ``zkafka.records.format07``. Everything here is pure.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable
from typing import NamedTuple

from zkafka.errors import (
    InvalidMessageError,
    UnknownCodecError,
    UnknownMagicByteError,
)
from zkafka.records import native
from zkafka.records.compression import CODECS_07, NO_COMPRESSION, compress

MAGIC_V0 = 0
MAGIC_V1 = 1
CURRENT_MAGIC = MAGIC_V1
LOG_OVERHEAD = 4
CODEC_MASK = 0x03
HEADER_SIZE = {MAGIC_V0: 5, MAGIC_V1: 6}
MIN_HEADER_SIZE = 5

# Public: readers with their own fast loops (the consumer stream) unpack with these.
INT32 = struct.Struct(">i")
_UINT32 = struct.Struct(">I")
ENTRY_V1 = struct.Struct(">iBBI")  # length, magic, attributes, crc
_HEADER_V1 = struct.Struct(">BBI")
_HEADER_V0 = struct.Struct(">BI")


class Message:
    """One message: magic byte, attributes (compression codec in bits 0-1), CRC-32 of the payload, payload."""

    __slots__ = ("magic", "attributes", "checksum", "payload")

    def __init__(self, payload: bytes, codec: int = NO_COMPRESSION, magic: int = CURRENT_MAGIC) -> None:
        if magic not in HEADER_SIZE:
            raise UnknownMagicByteError(f"magic byte {magic} is not 0 or 1")
        if magic == MAGIC_V0 and codec != NO_COMPRESSION:
            raise UnknownCodecError("magic 0 messages cannot be compressed")
        self.magic = magic
        self.attributes = codec & CODEC_MASK
        self.payload = bytes(payload)
        self.checksum = zlib.crc32(self.payload)

    @classmethod
    def from_bytes(cls, data: bytes | memoryview) -> Message:
        """Parse a message (without its length prefix); the CRC is kept as stored, not checked."""
        if len(data) < 1:
            raise InvalidMessageError("empty message")
        magic = data[0]
        header = header_size(magic)
        if len(data) < header:
            raise InvalidMessageError(
                f"message of {len(data)} bytes is shorter than its {header}-byte header"
            )
        msg = cls.__new__(cls)
        msg.magic = magic
        if magic == MAGIC_V1:
            msg.attributes = data[1]
            (msg.checksum,) = _UINT32.unpack_from(data, 2)
        else:
            msg.attributes = 0
            (msg.checksum,) = _UINT32.unpack_from(data, 1)
        msg.payload = bytes(data[header:])
        return msg

    @property
    def codec(self) -> int:
        return self.attributes & CODEC_MASK

    @property
    def size(self) -> int:
        """Bytes of the message itself (the ``N`` of its entry)."""
        return HEADER_SIZE[self.magic] + len(self.payload)

    def is_valid(self) -> bool:
        return zlib.crc32(self.payload) == self.checksum

    def to_bytes(self) -> bytes:
        if self.magic == MAGIC_V1:
            return _HEADER_V1.pack(MAGIC_V1, self.attributes, self.checksum) + self.payload
        return _HEADER_V0.pack(MAGIC_V0, self.checksum) + self.payload

    def to_entry(self) -> bytes:
        """The message with its 4-byte length prefix, as it stands in a message set."""
        return INT32.pack(self.size) + self.to_bytes()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Message):
            return NotImplemented
        return (self.magic, self.attributes, self.checksum, self.payload) == (
            other.magic,
            other.attributes,
            other.checksum,
            other.payload,
        )

    def __hash__(self) -> int:
        return hash((self.magic, self.attributes, self.checksum, self.payload))

    def __repr__(self) -> str:
        return (
            f"Message(magic={self.magic}, codec={self.codec}, crc={self.checksum}, size={len(self.payload)})"
        )


class MessageAndOffset(NamedTuple):
    """A message and the offset a consumer resumes from after it (the next entry's position)."""

    message: Message
    offset: int


def header_size(magic: int) -> int:
    try:
        return HEADER_SIZE[magic]
    except KeyError:
        raise UnknownMagicByteError(f"magic byte {magic} is not 0 or 1") from None


def encode_message(payload: bytes, codec: int = NO_COMPRESSION, magic: int = CURRENT_MAGIC) -> bytes:
    """The bytes of one message (no length prefix)."""
    return Message(payload, codec, magic).to_bytes()


def encode_entries(payloads: Iterable[bytes | Message]) -> bytes:
    """A message set with one entry per item: a payload becomes a magic-1 message, a Message goes as it is
    (so a compressed wrapper is forwarded without being decompressed)."""
    pack = ENTRY_V1.pack
    crc32 = zlib.crc32
    items = payloads if isinstance(payloads, list | tuple) else list(payloads)
    lib = native.lib
    if lib is not None:
        try:
            return lib.build_set07(items)
        except TypeError:
            pass  # not all bytes-like: the pure path below builds or refuses them itself
    try:
        return b"".join([pack(len(p) + 6, MAGIC_V1, 0, crc32(p)) + p for p in items])
    except TypeError:
        if not any(isinstance(p, Message) for p in items):
            raise
    return b"".join([p.to_entry() if isinstance(p, Message) else Message(p).to_entry() for p in items])


def build_message_set(payloads: Iterable[bytes | Message], codec: int = NO_COMPRESSION) -> bytes:
    """A message set of the payloads (or Messages); with a codec, one wrapper message holding the compressed set."""
    inner = encode_entries(payloads)
    if codec == NO_COMPRESSION or not inner:
        return inner
    wrapped = compress(codec, inner, CODECS_07)
    return ENTRY_V1.pack(len(wrapped) + 6, MAGIC_V1, codec & CODEC_MASK, zlib.crc32(wrapped)) + wrapped

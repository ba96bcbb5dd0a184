"""The 0.7 message and message-set format: encoding, validation and the exact 0.7 iteration rules.

A message set is a concatenation of entries ``int32 N | message(N bytes)``; a message is
``magic | [attributes] | crc32(payload) | payload``. Offsets are byte positions: the offset a reader
reports with a message is the position of the entry that follows it. Everything here is pure.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from zkafka.compression import NO_COMPRESSION, compress, decompress
from zkafka.errors import (
    InvalidMessageError,
    InvalidMessageSizeError,
    MessageSizeTooLargeError,
    UnknownCodecError,
    UnknownMagicByteError,
    error_for_code,
)

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
    wrapped = compress(codec, inner)
    return ENTRY_V1.pack(len(wrapped) + 6, MAGIC_V1, codec & CODEC_MASK, zlib.crc32(wrapped)) + wrapped


def validate_message_set(buf: bytes | memoryview, max_message_size: int | None = None) -> tuple[int, int]:
    """The produce-path check: walk the buffer, verify every CRC (decompressing wrappers), count messages.

    Returns ``(valid_bytes, deep_count)``: the bytes of complete top-level entries (a partial trailing entry
    is left out) and the number of messages after decompression. Raises InvalidMessageSizeError for a
    negative length or a partial first entry, InvalidMessageError for a CRC mismatch, and
    MessageSizeTooLargeError when a top-level payload exceeds ``max_message_size``. No object is built per
    message.
    """
    # struct and slicing are about twice as fast on bytes as on a memoryview: one copy of the set pays off.
    data = buf if isinstance(buf, bytes | bytearray) else bytes(buf)
    try:
        return _walk(data, max_message_size)
    except (InvalidMessageError, InvalidMessageSizeError):
        # 0.7.2 checks payload sizes in a pass before the CRC pass: an oversize message wins.
        if max_message_size is not None:
            _check_sizes(memoryview(data), max_message_size)
        raise


def _walk(mv: bytes | bytearray, max_message_size: int | None) -> tuple[int, int]:
    unpack_entry = ENTRY_V1.unpack_from
    unpack_int = INT32.unpack_from
    unpack_uint = _UINT32.unpack_from
    crc32 = zlib.crc32
    limit = max_message_size if max_message_size is not None else 1 << 62
    end = len(mv)
    pos = 0
    count = 0
    while end - pos >= 4:
        if end - pos >= 10:
            # The common case in one unpack: an uncompressed magic-1 message that fits.
            size, magic, attributes, crc = unpack_entry(mv, pos)
            if magic == MAGIC_V1 and attributes & CODEC_MASK == 0 and 6 <= size <= end - pos - 4:
                if size - 6 > limit:
                    raise MessageSizeTooLargeError(
                        f"message payload of {size - 6} bytes exceeds max.message.size {max_message_size}"
                    )
                if crc32(mv[pos + 10 : pos + 4 + size]) != crc:
                    raise InvalidMessageError(f"CRC mismatch for the message at position {pos}")
                count += 1
                pos += 4 + size
                continue
        (size,) = unpack_int(mv, pos)
        if size < 0 or end - pos - 4 < size:
            if size < 0 or pos == 0:
                raise InvalidMessageSizeError(f"invalid message size {size} at position {pos}")
            break
        start = pos + 4
        if size < MIN_HEADER_SIZE:
            raise InvalidMessageError(f"message of {size} bytes at position {pos} is shorter than a header")
        magic = mv[start]
        if magic == MAGIC_V1:
            if size < 6:
                raise InvalidMessageError(
                    f"message of {size} bytes at position {pos} is shorter than a header"
                )
            codec = mv[start + 1] & CODEC_MASK
            (crc,) = unpack_uint(mv, start + 2)
            payload = mv[start + 6 : start + size]
        elif magic == MAGIC_V0:
            codec = NO_COMPRESSION
            (crc,) = unpack_uint(mv, start + 1)
            payload = mv[start + 5 : start + size]
        else:
            raise UnknownMagicByteError(f"magic byte {magic} at position {pos} is not 0 or 1")
        if crc32(payload) != crc:
            raise InvalidMessageError(f"CRC mismatch for the message at position {pos}")
        if max_message_size is not None and len(payload) > max_message_size:
            raise MessageSizeTooLargeError(
                f"message payload of {len(payload)} bytes exceeds max.message.size {max_message_size}"
            )
        if codec == NO_COMPRESSION:
            count += 1
        else:
            count += _walk(decompress(codec, payload), None)[1]
        pos = start + size
    return pos, count


def _check_sizes(mv: memoryview, max_message_size: int) -> None:
    for start, size in _entry_spans(mv):
        magic = mv[start]
        if magic in HEADER_SIZE and size - HEADER_SIZE[magic] > max_message_size:
            raise MessageSizeTooLargeError(
                f"message payload of {size - HEADER_SIZE[magic]} bytes exceeds max.message.size {max_message_size}"
            )


def _entry_spans(mv: memoryview) -> Iterator[tuple[int, int]]:
    """(message start, message size) of each complete entry, ignoring contents."""
    pos, end = 0, len(mv)
    while end - pos >= 4:
        (size,) = INT32.unpack_from(mv, pos)
        if size < 1 or end - pos - 4 < size:
            return
        yield pos + 4, size
        pos += 4 + size


def recover_valid_prefix(buf: bytes | memoryview) -> int:
    """Bytes of the longest prefix of whole, CRC-valid entries: where log recovery truncates a segment.

    Stops at the first entry with fewer than 4 length bytes, ``N < 5``, a short body, an unknown magic
    byte or a CRC mismatch. (0.7.2 throws on an unknown magic here; zkafka truncates instead, as it does for
    any other torn write.)
    """
    mv = memoryview(buf)
    unpack_uint = _UINT32.unpack_from
    crc32 = zlib.crc32
    pos = 0
    for start, size in _entry_spans(mv):
        if size < MIN_HEADER_SIZE:
            break
        magic = mv[start]
        header = HEADER_SIZE.get(magic)
        if header is None or size < header:
            break
        (crc,) = unpack_uint(mv, start + header - 4)
        if crc32(mv[start + header : start + size]) != crc:
            break
        pos = start + size
    return pos


class ByteBufferMessageSet:
    """A message set held in memory, read with the 0.7 rules from a starting offset.

    Iterating it is deep (wrappers are decompressed); ``shallow_iter`` yields wrappers as they are.
    """

    __slots__ = ("buffer", "initial_offset", "error_code", "_valid_bytes")

    def __init__(
        self, buffer: bytes | memoryview = b"", initial_offset: int = 0, error_code: int = 0
    ) -> None:
        self.buffer = buffer
        self.initial_offset = initial_offset
        self.error_code = error_code
        self._valid_bytes: int | None = None

    def check_error(self) -> None:
        """Raise the exception for the broker's error code, if it sent one (as iterating would)."""
        if self.error_code:
            raise error_for_code(self.error_code)(
                f"broker answered error code {self.error_code} for the fetch at offset {self.initial_offset}"
            )

    @classmethod
    def of(cls, payloads: Iterable[bytes], codec: int = NO_COMPRESSION) -> ByteBufferMessageSet:
        """A set built from payloads, compressed into one wrapper when a codec is given."""
        return cls(build_message_set(payloads, codec))

    @property
    def size_in_bytes(self) -> int:
        return len(self.buffer)

    @property
    def valid_bytes(self) -> int:
        """Bytes of complete top-level entries from the start of the set (how far a consumer advances)."""
        if self._valid_bytes is None:
            end = 0
            for start, size in _entry_spans(memoryview(self.buffer)):
                end = start + size
            self._valid_bytes = end
        return self._valid_bytes

    def __iter__(self) -> Iterator[MessageAndOffset]:
        self.check_error()
        return iter_messages(self.buffer, self.initial_offset, deep=True)

    def shallow_iter(self) -> Iterator[MessageAndOffset]:
        self.check_error()
        return iter_messages(self.buffer, self.initial_offset, deep=False)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"ByteBufferMessageSet({len(self.buffer)} bytes from offset {self.initial_offset})"


def iter_messages(
    buf: bytes | memoryview, initial_offset: int = 0, deep: bool = True
) -> Iterator[MessageAndOffset]:
    """Iterate a message set exactly as 0.7's ``ByteBufferMessageSet`` does.

    - fewer than 4 bytes left: stop;
    - a negative length, or a partial first entry: InvalidMessageSizeError; a partial later entry: stop;
    - a CRC mismatch: InvalidMessageError;
    - shallow, or uncompressed: yield (message, offset after the entry);
    - deep and compressed: every inner message but the last carries the wrapper's own offset, the last one
      the offset after the wrapper; a wrapper holding nothing is skipped.
    """
    mv = memoryview(buf)
    end = len(mv)
    pos = 0
    while end - pos >= 4:
        (size,) = INT32.unpack_from(mv, pos)
        if size < 0 or end - pos - 4 < size:
            if size < 0 or pos == 0:
                raise InvalidMessageSizeError(
                    f"invalid message size {size} at offset {initial_offset + pos}: a single message larger "
                    "than the fetch size, or log corruption"
                )
            return
        message = Message.from_bytes(mv[pos + 4 : pos + 4 + size])
        if not message.is_valid():
            raise InvalidMessageError(f"CRC mismatch for the message at offset {initial_offset + pos}")
        next_offset = initial_offset + pos + 4 + size
        if not deep or message.codec == NO_COMPRESSION:
            yield MessageAndOffset(message, next_offset)
        else:
            inner = [m for m, _ in iter_messages(decompress(message.codec, message.payload), 0, True)]
            wrapper_offset = initial_offset + pos
            for m in inner[:-1]:
                yield MessageAndOffset(m, wrapper_offset)
            if inner:
                yield MessageAndOffset(inner[-1], next_offset)
        pos += 4 + size

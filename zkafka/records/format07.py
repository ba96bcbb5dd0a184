"""The 0.7 entry format ``int32 N | message`` and the exact 0.7 iteration rules, as ``FORMAT07``.

Offsets are byte positions: the offset a reader reports with a message is the position of the entry that
follows it. Inside a compressed wrapper every message but the last carries the wrapper's own position and
the last one the position after the wrapper (so resuming anywhere inside re-reads the whole wrapper).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from zkafka.errors import (
    InvalidMessageError,
    InvalidMessageSizeError,
    KafkaError,
    MessageSizeTooLargeError,
    UnknownMagicByteError,
    error_for_code,
)
from zkafka.records import deep_iterator, native
from zkafka.records.compression import CODECS_07, DEFAULT_MAX_INFLATED, NO_COMPRESSION
from zkafka.records.entries import UINT32, EntryFormat, entry_error
from zkafka.records.message07 import (
    CODEC_MASK,
    ENTRY_V1,
    HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC_V0,
    MAGIC_V1,
    MIN_HEADER_SIZE,
    Message,
    MessageAndOffset,
    build_message_set,
)

_unpack_uint = UINT32.unpack_from
_new_message = Message.__new__


class Format07(EntryFormat):
    """0.7 entries: ``int32 N | magic | [attributes] | crc32(payload) | payload``, logs in ``.kafka`` files."""

    name = "0.7"
    log_suffix = ".kafka"
    overhead = LOG_OVERHEAD
    size_at = 0
    magic_at = LOG_OVERHEAD
    min_size = MIN_HEADER_SIZE
    codec_mask = CODEC_MASK
    codecs = CODECS_07
    fast_header = ENTRY_V1
    crc_first = False
    fast_magic = MAGIC_V1
    fast_min_size = HEADER_SIZE[MAGIC_V1]
    fast_crc_from = LOG_OVERHEAD + HEADER_SIZE[MAGIC_V1]
    native_line = 7
    sizes_first = True  # 0.7.2 checks payload sizes in a pass before the CRC pass: an oversize message wins

    def size_problem(self, size: int, pos: int, base: int, partial: bool) -> KafkaError | None:
        if size < 0 or (partial and pos == 0):
            return entry_error(
                InvalidMessageSizeError,
                f"invalid message size {size} at offset {base + pos}: a single message larger than the fetch "
                "size, or log corruption",
                pos,
                None,
            )
        if partial:
            return None
        return entry_error(
            InvalidMessageError,
            f"message of {size} bytes at offset {base + pos} is shorter than a header",
            pos,
            pos + LOG_OVERHEAD + size,
        )

    def header(self, data: Any, pos: int, end: int) -> tuple[int, int, int, int]:
        start = pos + LOG_OVERHEAD
        magic = data[start]
        if magic == MAGIC_V1:
            if end - start < HEADER_SIZE[MAGIC_V1]:
                raise entry_error(
                    InvalidMessageError,
                    f"message of {end - start} bytes at {pos} is shorter than a header",
                    pos,
                    end,
                )
            return MAGIC_V1, data[start + 1], _unpack_uint(data, start + 2)[0], start + 6
        if magic == MAGIC_V0:
            return MAGIC_V0, 0, _unpack_uint(data, start + 1)[0], start + 5
        raise entry_error(
            UnknownMagicByteError, f"magic byte {magic} at position {pos} is not 0 or 1", pos, end
        )

    def entry_offset(self, data: Any, pos: int, end: int, base: int) -> int:
        return base + end

    def wrapper_offsets(self, pos: int, end: int, base: int, inner: list[int]) -> list[int]:
        return [base + pos] * (len(inner) - 1) + [base + end] if inner else []

    def wrapper_payload(self, data: Any, pos: int, end: int, body: Any) -> Any:
        return body

    def make_message(
        self, data: Any, pos: int, end: int, magic: int, attributes: int, crc: int, body: Any
    ) -> Message:
        message = _new_message(Message)
        message.magic = magic
        message.attributes = attributes
        message.checksum = crc
        message.payload = body if type(body) is bytes else bytes(body)
        return message

    def entry_limits(self, max_message_size: int) -> dict[int, int]:
        return {magic: max_message_size + LOG_OVERHEAD + header for magic, header in HEADER_SIZE.items()}

    def too_large(self, entry_size: int, magic: int, max_message_size: int) -> KafkaError:
        payload = entry_size - LOG_OVERHEAD - HEADER_SIZE[magic]
        return MessageSizeTooLargeError(
            f"message payload of {payload} bytes exceeds max.message.size {max_message_size}"
        )

    def inflate_limit(self, max_message_size: int) -> int:
        # 0.7 bounds only top-level payloads: valid sets keep being accepted up to the readers' sane cap.
        return max(max_message_size, DEFAULT_MAX_INFLATED)


FORMAT07 = Format07()


def iter_messages(buf: Any, initial_offset: int = 0, deep: bool = True) -> Iterator[MessageAndOffset]:
    """Iterate a message set exactly as 0.7's ``ByteBufferMessageSet`` does.

    - fewer than 4 bytes left: stop;
    - a negative length, or a partial first entry: InvalidMessageSizeError; a partial later entry: stop;
    - N < 5, or shorter than its magic's header: InvalidMessageError; an unknown magic: UnknownMagicByteError;
    - a CRC mismatch: InvalidMessageError;
    - shallow, or uncompressed: yield (message, offset after the entry);
    - deep and compressed: every inner message but the last carries the wrapper's own offset, the last one
      the offset after the wrapper; a wrapper holding nothing is skipped.
    """
    data = buf if type(buf) is bytes else bytes(buf)
    if native.lib is not None:
        return deep_iterator.decoded_messages(data, FORMAT07, initial_offset, deep, _LAYOUT, _with_offset)
    return (
        MessageAndOffset(message, offset)
        for offset, message in deep_iterator.messages(data, FORMAT07, initial_offset, deep)
    )


def _with_offset(offset: int, message: Message) -> MessageAndOffset:
    return MessageAndOffset(message, offset)


MESSAGE_FIELDS = (
    ("magic", "magic"),
    ("attributes", "attributes"),
    ("checksum", "crc"),
    ("payload", "payload"),
)
_LAYOUT = native.layout(MessageAndOffset, (native.layout(Message, MESSAGE_FIELDS), "offset"))


def valid_bytes(buf: Any) -> int:
    """Bytes of whole top-level entries from the start of a set (how far a consumer advances)."""
    end = 0
    for pos, size in FORMAT07.spans(buf):
        end = pos + size
    return end


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
            self._valid_bytes = valid_bytes(self.buffer)
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


__all__ = ["FORMAT07", "ByteBufferMessageSet", "Format07", "iter_messages", "valid_bytes"]

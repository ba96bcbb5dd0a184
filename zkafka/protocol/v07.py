"""The 0.7 wire protocol: request and response frames, each request a declared layout that encodes itself.

Request frame: ``int32 size | int16 requestType | body`` (size counts type and body).
Response frame: ``int32 size | int16 errorCode | body`` (size counts error code and body).
Pure: bytes in, values out; the sockets live in the broker server and the clients.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import ClassVar

from zkafka.errors import InvalidRequestError

PRODUCE = 0
FETCH = 1
MULTIFETCH = 2
MULTIPRODUCE = 3
OFFSETS = 4
REQUEST_NAMES = {
    PRODUCE: "PRODUCE",
    FETCH: "FETCH",
    MULTIFETCH: "MULTIFETCH",
    MULTIPRODUCE: "MULTIPRODUCE",
    OFFSETS: "OFFSETS",
}

LATEST_TIME = -1
EARLIEST_TIME = -2
RANDOM_PARTITION = -1

INT16 = struct.Struct(">h")
INT32 = struct.Struct(">i")
INT64 = struct.Struct(">q")
REQUEST_HEADER = struct.Struct(">ih")  # size, request type
RESPONSE_HEADER = struct.Struct(">ih")  # size, error code


class BufferReader:
    """Bounds-checked big-endian reads from a request body; running past the end is InvalidRequestError."""

    __slots__ = ("buf", "pos")

    def __init__(self, buf: bytes | memoryview, pos: int = 0) -> None:
        self.buf = memoryview(buf)
        self.pos = pos

    def _take(self, fmt: struct.Struct) -> int:
        if self.pos + fmt.size > len(self.buf):
            raise InvalidRequestError(f"request truncated at byte {self.pos}")
        (value,) = fmt.unpack_from(self.buf, self.pos)
        self.pos += fmt.size
        return value

    def int16(self) -> int:
        return self._take(INT16)

    def int32(self) -> int:
        return self._take(INT32)

    def int64(self) -> int:
        return self._take(INT64)

    def raw(self, size: int) -> memoryview:
        if size < 0 or self.pos + size > len(self.buf):
            raise InvalidRequestError(
                f"field of {size} bytes runs past the end of the request at byte {self.pos}"
            )
        view = self.buf[self.pos : self.pos + size]
        self.pos += size
        return view

    def string16(self) -> str | None:
        size = self.int16()
        if size < 0:
            return None
        try:
            return str(self.raw(size), "utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidRequestError(f"string at byte {self.pos - size} is not UTF-8") from exc

    def expect_end(self) -> None:
        if self.pos != len(self.buf):
            raise InvalidRequestError(f"{len(self.buf) - self.pos} unexpected bytes after the request body")


def string16(value: str) -> bytes:
    """A short string: int16 UTF-8 byte length, then the bytes (0.7's Scala writer used the char count)."""
    data = value.encode("utf-8")
    if len(data) > 0x7FFF:
        raise ValueError(f"string of {len(data)} bytes is too long for a short string")
    return INT16.pack(len(data)) + data


@dataclass(frozen=True, slots=True)
class ProducerRequest:
    """PRODUCE: string16 topic, int32 partition, int32 messageSetSize, message set. No response."""

    topic: str
    partition: int
    messages: bytes

    type_id: ClassVar[int] = PRODUCE

    def encode_body(self) -> bytes:
        return (
            string16(self.topic) + INT32.pack(self.partition) + INT32.pack(len(self.messages)) + self.messages
        )

    @classmethod
    def read_from(cls, reader: BufferReader) -> ProducerRequest:
        topic = reader.string16()
        partition = reader.int32()
        messages = reader.raw(reader.int32())
        return cls(topic, partition, messages)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class MultiProducerRequest:
    """MULTIPRODUCE: int16 count, then count PRODUCE bodies. No response."""

    produces: tuple[ProducerRequest, ...]

    type_id: ClassVar[int] = MULTIPRODUCE

    def encode_body(self) -> bytes:
        return INT16.pack(len(self.produces)) + b"".join(p.encode_body() for p in self.produces)

    @classmethod
    def read_from(cls, reader: BufferReader) -> MultiProducerRequest:
        count = reader.int16()
        return cls(tuple(ProducerRequest.read_from(reader) for _ in range(max(count, 0))))


@dataclass(frozen=True, slots=True)
class FetchRequest:
    """FETCH: string16 topic, int32 partition, int64 offset, int32 maxSize."""

    topic: str
    partition: int
    offset: int
    max_size: int

    type_id: ClassVar[int] = FETCH

    def encode_body(self) -> bytes:
        return string16(self.topic) + struct.pack(">iqi", self.partition, self.offset, self.max_size)

    @classmethod
    def read_from(cls, reader: BufferReader) -> FetchRequest:
        return cls(reader.string16(), reader.int32(), reader.int64(), reader.int32())  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class MultiFetchRequest:
    """MULTIFETCH: int16 count, then count FETCH bodies; answered part by part in request order."""

    fetches: tuple[FetchRequest, ...]

    type_id: ClassVar[int] = MULTIFETCH

    def encode_body(self) -> bytes:
        return INT16.pack(len(self.fetches)) + b"".join(f.encode_body() for f in self.fetches)

    @classmethod
    def read_from(cls, reader: BufferReader) -> MultiFetchRequest:
        count = reader.int16()
        return cls(tuple(FetchRequest.read_from(reader) for _ in range(max(count, 0))))


@dataclass(frozen=True, slots=True)
class OffsetRequest:
    """OFFSETS: string16 topic, int32 partition, int64 time (-1 latest, -2 earliest), int32 maxNumOffsets."""

    topic: str
    partition: int
    time: int
    max_offsets: int

    type_id: ClassVar[int] = OFFSETS

    def encode_body(self) -> bytes:
        return string16(self.topic) + struct.pack(">iqi", self.partition, self.time, self.max_offsets)

    @classmethod
    def read_from(cls, reader: BufferReader) -> OffsetRequest:
        return cls(reader.string16(), reader.int32(), reader.int64(), reader.int32())  # type: ignore[arg-type]


Request = ProducerRequest | MultiProducerRequest | FetchRequest | MultiFetchRequest | OffsetRequest
REQUEST_TYPES: dict[int, type] = {
    PRODUCE: ProducerRequest,
    FETCH: FetchRequest,
    MULTIFETCH: MultiFetchRequest,
    MULTIPRODUCE: MultiProducerRequest,
    OFFSETS: OffsetRequest,
}


def encode_request(request: Request) -> bytes:
    """The whole request frame, size prefix included."""
    body = request.encode_body()
    return REQUEST_HEADER.pack(len(body) + 2, request.type_id) + body


def decode_request(request_type: int, body: bytes | memoryview) -> Request:
    """Parse a request body (the bytes after the int16 type); anything malformed is InvalidRequestError."""
    cls = REQUEST_TYPES.get(request_type)
    if cls is None:
        raise InvalidRequestError(f"unknown request type {request_type}")
    reader = BufferReader(body)
    request = cls.read_from(reader)
    reader.expect_end()
    return request


# -- responses -------------------------------------------------------------------------------------------


def response_header(error_code: int, body_size: int) -> bytes:
    """``int32 size | int16 error`` for a response whose body has ``body_size`` bytes."""
    return RESPONSE_HEADER.pack(body_size + 2, error_code)


def encode_offsets_response(offsets: list[int]) -> bytes:
    body = INT32.pack(len(offsets)) + b"".join(INT64.pack(o) for o in offsets)
    return response_header(0, len(body)) + body


def decode_multifetch_response(body: bytes | memoryview) -> list[tuple[int, memoryview]]:
    """MULTIFETCH response body (after the top-level error): per fetch ``(error, message-set bytes)``."""
    reader = BufferReader(body)
    parts = []
    while reader.pos < len(reader.buf):
        size = reader.int32()
        error = reader.int16()
        parts.append((error, reader.raw(size - 2)))
    return parts


def decode_offsets_response(body: bytes | memoryview) -> list[int]:
    """OFFSETS response body (after the error code): int32 count, count int64 offsets."""
    reader = BufferReader(body)
    return [reader.int64() for _ in range(reader.int32())]

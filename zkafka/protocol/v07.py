"""The 0.7 wire protocol: every request and response declared as a schema of typed fields (``types``).

Request frame: ``int32 size | int16 requestType | body`` (size counts type and body); no correlation id.
Response frame: ``int32 size | int16 errorCode | body`` (size counts error code and body); responses come back in
request order, and PRODUCE / MULTIPRODUCE get none. ``CODEC`` is this framing for the network layer (the
broker's ``SocketServer`` and the clients' ``BlockingChannel``). Pure: bytes in, values out.
"""

from __future__ import annotations

from typing import Any

from zkafka.protocol.errors import InvalidRequestError
from zkafka.protocol.schema import Struct, decode, struct_class
from zkafka.protocol.types import (
    Array,
    Int16,
    Int32,
    Int64,
    MessageSet,
    Remainder,
    Repeated,
    Sized,
    String,
    frame_parts,
)

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

RANDOM_PARTITION = -1  # PRODUCE partition: the broker picks one

ResponseHeader = struct_class("ResponseHeader", ("size", Int32), ("error", Int16))

# -- requests ------------------------------------------------------------------------------------------------

_TOPIC_PARTITION = (("topic", String), ("partition", Int32))

ProducerRequest = struct_class(
    "ProducerRequest",
    *_TOPIC_PARTITION,
    ("messages", MessageSet),
    type_id=PRODUCE,
    doc="PRODUCE: string16 topic, int32 partition, int32 messageSetSize, message set. No response.",
)
MultiProducerRequest = struct_class(
    "MultiProducerRequest",
    ("produces", Array(ProducerRequest.SCHEMA, count=Int16)),
    type_id=MULTIPRODUCE,
    doc="MULTIPRODUCE: int16 count, then count PRODUCE bodies. No response.",
)
FetchRequest = struct_class(
    "FetchRequest",
    *_TOPIC_PARTITION,
    ("offset", Int64),
    ("max_size", Int32),
    type_id=FETCH,
    doc="FETCH: string16 topic, int32 partition, int64 offset, int32 maxSize.",
)
MultiFetchRequest = struct_class(
    "MultiFetchRequest",
    ("fetches", Array(FetchRequest.SCHEMA, count=Int16)),
    type_id=MULTIFETCH,
    doc="MULTIFETCH: int16 count, then count FETCH bodies; answered part by part in request order.",
)
OffsetRequest = struct_class(
    "OffsetRequest",
    *_TOPIC_PARTITION,
    ("time", Int64),
    ("max_offsets", Int32),
    type_id=OFFSETS,
    doc="OFFSETS: string16 topic, int32 partition, int64 time (-1 latest, -2 earliest), int32 maxNumOffsets.",
)

Request = Any  # one of the five request classes above
REQUEST_TYPES: dict[int, type[Struct]] = {
    PRODUCE: ProducerRequest,
    FETCH: FetchRequest,
    MULTIFETCH: MultiFetchRequest,
    MULTIPRODUCE: MultiProducerRequest,
    OFFSETS: OffsetRequest,
}

# -- responses -----------------------------------------------------------------------------------------------

FetchResponse = struct_class(
    "FetchResponse",
    ("error", Int16),
    ("messages", Remainder),
    doc="FETCH response: int16 error, then the message set up to the end of the frame (a file region when sent).",
)
_FETCH_PARTS = Repeated(Sized(FetchResponse.SCHEMA))
MultiFetchResponse = struct_class(
    "MultiFetchResponse",
    ("error", Int16),
    ("parts", _FETCH_PARTS),
    doc="MULTIFETCH response: int16 error (0), then per fetch in request order int32 size + a FETCH response.",
)
_OFFSETS = Array(Int64)
OffsetResponse = struct_class(
    "OffsetResponse",
    ("error", Int16),
    ("offsets", _OFFSETS),
    doc="OFFSETS response: int16 error (always 0), int32 count, count int64 offsets (newest first).",
)
RESPONSE_TYPES: dict[int, type[Struct]] = {
    FETCH: FetchResponse,
    MULTIFETCH: MultiFetchResponse,
    OFFSETS: OffsetResponse,
}


# -- frames --------------------------------------------------------------------------------------------------


def encode_request(request: Request) -> bytes:
    """The whole request frame, size prefix included."""
    out: list = [Int16.fmt.pack(request.type_id)]
    request.SCHEMA.write(request, out)
    (frame,) = frame_parts(out)
    return frame


def decode_request(request_type: int, body: bytes | memoryview) -> Request:
    """Parse a request body (the bytes after the int16 type); anything malformed is InvalidRequestError."""
    cls = REQUEST_TYPES.get(request_type)
    if cls is None:
        raise InvalidRequestError(f"unknown request type {request_type}")
    return cls.decode(body)


def expects_response(request: Request) -> bool:
    """False for PRODUCE and MULTIPRODUCE, which 0.7 never answers."""
    return request.type_id in RESPONSE_TYPES


def decode_response(request_type: int, frame: bytes | memoryview) -> Any:
    """The response to a request of ``request_type`` from its frame (the bytes after the int32 size)."""
    return RESPONSE_TYPES[request_type].decode(frame)


def response_header(error_code: int, body_size: int) -> bytes:
    """``int32 size | int16 error`` for a response whose body has ``body_size`` bytes."""
    return ResponseHeader(body_size + 2, error_code).encode()


def encode_offsets_response(offsets: list[int]) -> bytes:
    """The whole OFFSETS response frame."""
    (frame,) = OffsetResponse(0, offsets).encode_frame()
    return frame


def decode_multifetch_response(body: bytes | memoryview) -> list:
    """MULTIFETCH response body (after the top-level error): per fetch a ``FetchResponse(error, messages)``."""
    return decode(_FETCH_PARTS, body)


def decode_offsets_response(body: bytes | memoryview) -> list[int]:
    """OFFSETS response body (after the error code): int32 count, count int64 offsets."""
    return decode(_OFFSETS, body)


class Codec:
    """The 0.7 framing for the network layer: no correlation ids, so responses are matched by their order."""

    def decode_request(self, frame: memoryview) -> Request:
        """A request from its frame (the bytes after the int32 size: request type and body)."""
        if len(frame) < 2:
            raise InvalidRequestError(f"request of {len(frame)} bytes has no request type")
        return decode_request(Int16.fmt.unpack_from(frame)[0], frame[2:])

    def encode_request(self, request: Request, correlation_id: int = 0) -> bytes:
        return encode_request(request)

    def expects_response(self, request: Request) -> bool:
        return expects_response(request)

    def decode_response(self, request: Request, correlation_id: int, frame: memoryview) -> Any:
        return decode_response(request.type_id, frame)


CODEC = Codec()

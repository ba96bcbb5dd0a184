"""The 0.8/0.9 wire protocol's request/response header codec and its (api key, version) registry.

Request frame: ``int32 size | int16 api_key | int16 api_version | int32 correlation_id | string client_id |
body`` (ControlledShutdown v0 has no client id). Response frame: ``int32 size | int32 correlation_id | body``.
A flexible version's (KIP-482) headers add a tag buffer: after the client id (request header v2) and after
the correlation id (response header v1, never for ApiVersions).
``SCHEMAS`` maps every (api_key, version) a 0.9.0.1 broker answers, plus Produce v2-v8, Fetch v2-v11, ListOffsets v1-v5, ApiVersions v0-v3, Metadata v1-v9,
the group and offset APIs at Kafka 3.4's versions and the topic admin APIs, to its request and response
classes, declared per API family: ``produce``, ``fetch``, ``offsets`` (ListOffsets), ``metadata``,
``offset_commit`` (OffsetCommit, OffsetFetch, FindCoordinator, OffsetDelete), ``api_versions``,
``inter_broker``, ``group_membership``, ``topic_admin`` (CreateTopics, DeleteTopics, CreatePartitions), ``acls`` (DescribeAcls, CreateAcls, DeleteAcls) and
``init_producer_id``.
Pure: bytes in, values out.
"""

from __future__ import annotations

import struct
from functools import cache
from typing import Any, NamedTuple

from zkafka.protocol.acls import ACLS_APIS
from zkafka.protocol.api_keys import API_NAMES, API_VERSIONS, CONTROLLED_SHUTDOWN, FETCH, PRODUCE
from zkafka.protocol.api_versions import API_VERSIONS_APIS, ApiVersionRange, ApiVersionsRequestV0
from zkafka.protocol.configs import CONFIGS_APIS
from zkafka.protocol.delete_records import DELETE_RECORDS_APIS
from zkafka.protocol.errors import InvalidRequestError
from zkafka.protocol.fetch import (
    FETCH_APIS,
    FetchRequestPartition,
    FetchRequestTopic,
    FetchResponsePartition,
    FetchResponseTopic,
)
from zkafka.protocol.fetch_wire import LAST_VERSION as LAST_FETCH_WIRE_VERSION
from zkafka.protocol.fetch_wire import (
    read_fetch_body,
    read_fetch_response,
    write_fetch_body,
    write_fetch_response,
)
from zkafka.protocol.flexible import read_tag_buffer
from zkafka.protocol.group_membership import GROUP_APIS
from zkafka.protocol.init_producer_id import INIT_PRODUCER_ID_APIS
from zkafka.protocol.inter_broker import ADMIN_APIS
from zkafka.protocol.leader_epoch import OFFSET_FOR_LEADER_EPOCH_APIS
from zkafka.protocol.metadata import METADATA_APIS
from zkafka.protocol.offset_commit import OFFSET_APIS
from zkafka.protocol.offsets import LIST_OFFSETS_APIS
from zkafka.protocol.produce import (
    FIRST_BATCH_VERSION,
    PRODUCE_APIS,
    ProduceRequestPartition,
    ProduceRequestTopic,
    response_partition_class,
    response_topic_class,
)
from zkafka.protocol.produce_wire import (
    read_produce_body,
    read_produce_response,
    write_produce_body,
    write_produce_response,
)
from zkafka.protocol.sasl import SASL_APIS
from zkafka.protocol.schema import Struct
from zkafka.protocol.topic_admin import TOPIC_ADMIN_APIS
from zkafka.protocol.types import Int16, Int32, Reader, String, join_parts, parts_size

# -- the registry -----------------------------------------------------------------------------------------

CLIENT_APIS = (
    *PRODUCE_APIS,
    *FETCH_APIS,
    *LIST_OFFSETS_APIS,
    *METADATA_APIS,
    *OFFSET_APIS,
    *API_VERSIONS_APIS,
    *TOPIC_ADMIN_APIS,
    *CONFIGS_APIS,
    *ACLS_APIS,
    *DELETE_RECORDS_APIS,
    *INIT_PRODUCER_ID_APIS,
    *SASL_APIS,
)

SCHEMAS: dict[tuple[int, int], tuple[type, type]] = {
    (request.API_KEY, request.API_VERSION): (request, response)
    for request, response in (*CLIENT_APIS, *ADMIN_APIS, *GROUP_APIS, *OFFSET_FOR_LEADER_EPOCH_APIS)
}
for _request, _response in SCHEMAS.values():
    _request.RESPONSE = _response  # what a client decodes the answer with
# The responses written without the schema walk (produce_wire, fetch_wire): class -> (version, writer).
_FAST_RESPONSES = {
    **{response: (version, write_produce_response) for version, (_, response) in enumerate(PRODUCE_APIS)},
    **{
        response: (version, write_fetch_response)
        for version, (_, response) in enumerate(FETCH_APIS[: LAST_FETCH_WIRE_VERSION + 1])
    },
}


def api_version_ranges(served: Any = None) -> list[Any]:
    """Every API key with its lowest and highest version, in key order (an ApiVersions answer): of the
    ``(api_key, version)`` pairs in ``served``, by default of every schema here."""
    ranges: dict[int, list[int]] = {}
    for key, version in SCHEMAS if served is None else served:
        low, high = ranges.setdefault(key, [version, version])
        ranges[key] = [min(low, version), max(high, version)]
    return [ApiVersionRange(key, low, high) for key, (low, high) in sorted(ranges.items())]


# -- the header codec -------------------------------------------------------------------------------------

REQUEST_HEADER = struct.Struct(">hhi")  # api_key, api_version, correlation_id
SIZE = struct.Struct(">i")
RESPONSE_HEADER = struct.Struct(">ii")  # size, correlation_id
EMPTY_TAG_BUFFER = b"\x00"  # a flexible header's tagged fields: zkafka sends none


class Request(NamedTuple):
    """A decoded request: its header fields and its body (an instance of the registered request class)."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    body: Any

    @property
    def name(self) -> str:
        return type(self.body).__name__


class Response(NamedTuple):
    """A decoded response: the correlation id it answers and its body."""

    correlation_id: int
    body: Any


def has_client_id(api_key: int, api_version: int) -> bool:
    """Whether the request header carries a client id (all but ControlledShutdown v0)."""
    return not (api_key == CONTROLLED_SHUTDOWN and api_version == 0)


@cache
def request_header_version(request_class: Any) -> int:
    """The request header a body class goes with: v0 has no client id (ControlledShutdown v0); v2, a flexible
    request's, adds a tag buffer after the client id (still an ``int16``-length string); v1 otherwise."""
    if not has_client_id(request_class.API_KEY, request_class.API_VERSION):
        return 0
    return 2 if request_class.SCHEMA.flexible else 1


@cache
def response_header_version(response_class: Any) -> int:
    """The response header a body class goes with: v1, a flexible response's, adds a tag buffer after the
    correlation id; v0 otherwise, and for every ApiVersions response (KIP-511: a client reads the answer to
    a version the broker may not know before it knows which versions the broker speaks)."""
    return 1 if response_class.SCHEMA.flexible and response_class.API_KEY != API_VERSIONS else 0


def decode_request(frame: bytes | bytearray | memoryview) -> Request:
    """Parse a request frame (the bytes after the ``int32 size``). An unknown key or version, a truncated or
    malformed body, or bytes after it raise InvalidRequestError: the server closes that connection.

    The one exception is an ApiVersions request newer than v3 (kafka-python 2.3 opens with v4): as later
    brokers do (KIP-511), it is read as a v0 request whose header keeps the version asked for (its flexible
    header and body are skipped), so the answer can be a v0 UNSUPPORTED_VERSION with the ranges."""
    reader = Reader(frame)
    api_key = reader.unpack(Int16.fmt)
    api_version = reader.unpack(Int16.fmt)
    correlation_id = reader.unpack(Int32.fmt)
    entry = SCHEMAS.get((api_key, api_version))
    if entry is None and api_key == API_VERSIONS and api_version > 0:
        return Request(api_key, api_version, correlation_id, _header_client_id(reader), ApiVersionsRequestV0())
    if entry is None:
        name = API_NAMES.get(api_key, "unknown API")
        raise InvalidRequestError(f"{name} (key {api_key}) version {api_version} is not supported")
    request_class = entry[0]
    if api_key == PRODUCE or (api_key == FETCH and api_version <= LAST_FETCH_WIRE_VERSION):
        body = _read_fast(reader, request_class, api_key, api_version)  # the most frequent: no schema walk
        if body is not None:
            return Request(api_key, api_version, correlation_id, body[0], body[1])
    try:
        header_version = request_header_version(request_class)
        client_id = String.read(reader) if header_version else None
        if header_version == 2:
            read_tag_buffer(reader, {})  # no header tag is known to this broker: each is skipped
        body = request_class.read_from(reader)
        reader.expect_end()
    except InvalidRequestError as exc:
        raise InvalidRequestError(
            f"{request_class.__name__} (correlation id {correlation_id}) is malformed: {exc}"
        ) from None
    return Request(api_key, api_version, correlation_id, client_id, body)


def _header_client_id(reader: Reader) -> str | None:
    """The client id every request header from v1 begins with (None when the frame ends first): a request
    of an unknown version still counts against its client's quotas."""
    try:
        return String.read(reader)
    except InvalidRequestError:
        return None


def _read_fast(reader: Reader, request_class: type, api_key: int, version: int) -> tuple[Any, Any] | None:
    """A well-formed produce or fetch (v0-v3) request's client id and body (``produce_wire``, ``fetch_wire``);
    None for any other."""
    start = reader.pos
    try:
        client_id = String.read(reader)
    except InvalidRequestError:
        return None
    buf, pos = reader.buf, reader.pos
    if api_key == PRODUCE:
        transactional = version >= FIRST_BATCH_VERSION
        topic_class, partition_class = ProduceRequestTopic, ProduceRequestPartition
        body = read_produce_body(buf, pos, request_class, topic_class, partition_class, transactional)
    else:
        body = read_fetch_body(buf, pos, version, request_class, FetchRequestTopic, FetchRequestPartition)
    if body is None:
        reader.pos = start
        return None
    return client_id, body


def encode_request(body: Struct, correlation_id: int, client_id: str | None = "") -> bytes:
    """A whole request frame (``int32 size`` included) for a registered request body."""
    out: list = [b"", REQUEST_HEADER.pack(body.API_KEY, body.API_VERSION, correlation_id)]  # type: ignore[attr-defined]
    version = request_header_version(type(body))
    if version > 0:
        String.write(client_id, out)
    if version == 2:
        out.append(EMPTY_TAG_BUFFER)
    api_key, api_version = body.API_KEY, body.API_VERSION  # type: ignore[attr-defined]
    if api_key == PRODUCE:
        fast = write_produce_body(body, out, api_version >= FIRST_BATCH_VERSION)
    else:
        fetch = api_key == FETCH and api_version <= LAST_FETCH_WIRE_VERSION
        fast = fetch and write_fetch_body(body, api_version, out)
    if not fast:
        body.SCHEMA.write(body, out)
    out[0] = SIZE.pack(sum(map(len, out)))  # one join: a produce request's sets are copied once
    return b"".join(out)


def encode_response(correlation_id: int, body: Struct) -> list:
    """A whole response frame as parts: byte strings merged, message-set file regions kept for sendfile."""
    out: list = [b""]
    if response_header_version(type(body)) == 1:
        out.append(EMPTY_TAG_BUFFER)
    fast = _FAST_RESPONSES.get(type(body))
    if fast is None or not fast[1](body, fast[0], out):
        body.SCHEMA.write(body, out)
    size = 4 + parts_size(out)
    out[0] = RESPONSE_HEADER.pack(size, correlation_id)
    return join_parts(out)


def with_correlation_id(frame: bytes, correlation_id: int) -> bytes:
    """A whole response frame encoded once (a fixed answer) carrying ``correlation_id`` instead of its own."""
    return frame[: SIZE.size] + Int32.fmt.pack(correlation_id) + frame[RESPONSE_HEADER.size :]


def decode_response(api_key: int, api_version: int, frame: bytes | bytearray | memoryview) -> Response:
    """Parse a response frame (the bytes after the ``int32 size``) to the request ``(api_key, api_version)``."""
    entry = SCHEMAS.get((api_key, api_version))
    if entry is None:
        raise InvalidRequestError(f"no response schema for API key {api_key} version {api_version}")
    response_class = entry[1]
    reader = Reader(frame)
    try:
        correlation_id = reader.unpack(Int32.fmt)
        if response_header_version(response_class) == 1:
            read_tag_buffer(reader, {})
        body, buf, pos = None, reader.buf, reader.pos
        if api_key == PRODUCE:  # a pipelined producer reads one a request
            topic_class = response_topic_class(api_version)
            partition_class = response_partition_class(api_version)
            body = read_produce_response(buf, pos, api_version, response_class, topic_class, partition_class)
        elif api_key == FETCH and api_version <= LAST_FETCH_WIRE_VERSION:  # a follower reads one a batch
            topic_class, partition_class = FetchResponseTopic, FetchResponsePartition
            body = read_fetch_response(buf, pos, api_version, response_class, topic_class, partition_class)
        if body is not None:
            return Response(correlation_id, body)
        body = response_class.read_from(reader)
        reader.expect_end()
    except InvalidRequestError as exc:
        raise InvalidRequestError(f"{response_class.__name__} is malformed: {exc}") from None
    return Response(correlation_id, body)


class RequestCodec08:
    """The 0.8/0.9 line's codec object for the network layer (``decode_request`` on the server side)."""

    decode_request = staticmethod(decode_request)
    encode_request = staticmethod(encode_request)
    encode_response = staticmethod(encode_response)
    decode_response = staticmethod(decode_response)

    @staticmethod
    def holds_frame(request: Request) -> bool:
        """Whether a decoded request keeps views into its frame (a produce's message sets); a fetch, which
        has no byte fields, does not."""
        return request.api_key != FETCH


CODEC = RequestCodec08()

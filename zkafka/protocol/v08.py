"""The 0.8/0.9 wire protocol: the client APIs as schemas, the request/response header codec and the registry.

Request frame: ``int32 size | int16 api_key | int16 api_version | int32 correlation_id | string client_id |
body`` (ControlledShutdown v0 has no client id). Response frame: ``int32 size | int32 correlation_id | body``.
``SCHEMAS`` maps every (api_key, version) a 0.9.0.1 broker answers, plus ApiVersions v0, to its request and
response classes; the inter-broker schemas live in ``inter_broker``, the group ones in ``group_membership``. Message
sets are ``MessageSet`` fields (reads give a memoryview; writes take bytes or a file region); their entries
are ``zkafka.records``' business. Pure: bytes in, values out.
"""

from __future__ import annotations

import struct
from typing import Any, NamedTuple

from zkafka.errors import InvalidRequestError
from zkafka.protocol import EARLIEST_TIME, LATEST_TIME  # noqa: F401 (the ListOffsets times)
from zkafka.protocol.api_keys import (
    API_NAMES,
    API_VERSIONS,
    CONTROLLED_SHUTDOWN,
    FETCH,
    GROUP_COORDINATOR,
    LIST_OFFSETS,
    METADATA,
    OFFSET_COMMIT,
    OFFSET_FETCH,
    PRODUCE,
    api_struct,
)
from zkafka.protocol.group_membership import GROUP_APIS, UNADVERTISED
from zkafka.protocol.inter_broker import ADMIN_APIS
from zkafka.protocol.produce_wire import (
    read_produce_body,
    read_produce_response,
    write_produce_body,
    write_produce_response,
)
from zkafka.protocol.types import (
    Array,
    Int16,
    Int32,
    Int64,
    MessageSet,
    Reader,
    String,
    Struct,
    join_parts,
    parts_size,
    struct_class,
)

# replica_id values of Fetch and ListOffsets
CONSUMER_REPLICA_ID = -1
DEBUGGING_REPLICA_ID = -2  # may read from a follower, still capped at the high watermark

# -- Produce (0) ------------------------------------------------------------------------------------------

ProduceRequestPartition = struct_class(
    "ProduceRequestPartition", ("partition", Int32), ("message_set", MessageSet)
)
ProduceRequestTopic = struct_class(
    "ProduceRequestTopic", ("topic", String), ("partitions", Array(ProduceRequestPartition.SCHEMA))
)
ProduceResponsePartition = struct_class(
    "ProduceResponsePartition",
    ("partition", Int32),
    ("error", Int16),
    ("offset", Int64),  # base offset
)
ProduceResponseTopic = struct_class(
    "ProduceResponseTopic", ("topic", String), ("partitions", Array(ProduceResponsePartition.SCHEMA))
)
_produce_request = (("acks", Int16), ("timeout_ms", Int32), ("topics", Array(ProduceRequestTopic.SCHEMA)))
ProduceRequestV0 = api_struct("ProduceRequestV0", PRODUCE, 0, *_produce_request)
ProduceRequestV1 = api_struct("ProduceRequestV1", PRODUCE, 1, *_produce_request)
ProduceResponseV0 = api_struct(
    "ProduceResponseV0", PRODUCE, 0, ("topics", Array(ProduceResponseTopic.SCHEMA))
)
ProduceResponseV1 = api_struct(
    "ProduceResponseV1",
    PRODUCE,
    1,
    ("topics", Array(ProduceResponseTopic.SCHEMA)),
    ("throttle_time_ms", Int32),  # last
)

# -- Fetch (1) --------------------------------------------------------------------------------------------

FetchRequestPartition = struct_class(
    "FetchRequestPartition", ("partition", Int32), ("fetch_offset", Int64), ("max_bytes", Int32)
)
FetchRequestTopic = struct_class(
    "FetchRequestTopic", ("topic", String), ("partitions", Array(FetchRequestPartition.SCHEMA))
)
FetchResponsePartition = struct_class(
    "FetchResponsePartition",
    ("partition", Int32),
    ("error", Int16),
    ("high_watermark", Int64),
    ("message_set", MessageSet),
)
FetchResponseTopic = struct_class(
    "FetchResponseTopic", ("topic", String), ("partitions", Array(FetchResponsePartition.SCHEMA))
)
_fetch_request = (
    ("replica_id", Int32),
    ("max_wait_ms", Int32),
    ("min_bytes", Int32),
    ("topics", Array(FetchRequestTopic.SCHEMA)),
)
FetchRequestV0 = api_struct("FetchRequestV0", FETCH, 0, *_fetch_request)
FetchRequestV1 = api_struct("FetchRequestV1", FETCH, 1, *_fetch_request)
FetchResponseV0 = api_struct("FetchResponseV0", FETCH, 0, ("topics", Array(FetchResponseTopic.SCHEMA)))
FetchResponseV1 = api_struct(
    "FetchResponseV1",
    FETCH,
    1,
    ("throttle_time_ms", Int32),  # first
    ("topics", Array(FetchResponseTopic.SCHEMA)),
)

# -- ListOffsets (2) --------------------------------------------------------------------------------------

ListOffsetsRequestPartition = struct_class(
    "ListOffsetsRequestPartition", ("partition", Int32), ("time", Int64), ("max_num_offsets", Int32)
)
ListOffsetsRequestTopic = struct_class(
    "ListOffsetsRequestTopic", ("topic", String), ("partitions", Array(ListOffsetsRequestPartition.SCHEMA))
)
ListOffsetsResponsePartition = struct_class(
    "ListOffsetsResponsePartition", ("partition", Int32), ("error", Int16), ("offsets", Array(Int64))
)
ListOffsetsResponseTopic = struct_class(
    "ListOffsetsResponseTopic", ("topic", String), ("partitions", Array(ListOffsetsResponsePartition.SCHEMA))
)
ListOffsetsRequestV0 = api_struct(
    "ListOffsetsRequestV0",
    LIST_OFFSETS,
    0,
    ("replica_id", Int32),
    ("topics", Array(ListOffsetsRequestTopic.SCHEMA)),
)
ListOffsetsResponseV0 = api_struct(
    "ListOffsetsResponseV0", LIST_OFFSETS, 0, ("topics", Array(ListOffsetsResponseTopic.SCHEMA))
)

# -- Metadata (3) -----------------------------------------------------------------------------------------

MetadataBroker = struct_class("MetadataBroker", ("node_id", Int32), ("host", String), ("port", Int32))
PartitionMetadata = struct_class(
    "PartitionMetadata",
    ("error", Int16),
    ("partition", Int32),
    ("leader", Int32),
    ("replicas", Array(Int32)),
    ("isr", Array(Int32)),
)
TopicMetadata = struct_class(
    "TopicMetadata", ("error", Int16), ("topic", String), ("partitions", Array(PartitionMetadata.SCHEMA))
)
MetadataRequestV0 = api_struct("MetadataRequestV0", METADATA, 0, ("topics", Array(String)))  # [] = all
MetadataResponseV0 = api_struct(
    "MetadataResponseV0",
    METADATA,
    0,
    ("brokers", Array(MetadataBroker.SCHEMA)),
    ("topics", Array(TopicMetadata.SCHEMA)),
)

# -- OffsetCommit (8) -------------------------------------------------------------------------------------

OffsetCommitRequestPartitionV0 = struct_class(
    "OffsetCommitRequestPartitionV0", ("partition", Int32), ("offset", Int64), ("metadata", String)
)
OffsetCommitRequestPartitionV1 = struct_class(
    "OffsetCommitRequestPartitionV1",
    ("partition", Int32),
    ("offset", Int64),
    ("timestamp", Int64),  # -1: now
    ("metadata", String),
)
OffsetCommitRequestTopicV0 = struct_class(
    "OffsetCommitRequestTopicV0",
    ("topic", String),
    ("partitions", Array(OffsetCommitRequestPartitionV0.SCHEMA)),
)
OffsetCommitRequestTopicV1 = struct_class(
    "OffsetCommitRequestTopicV1",
    ("topic", String),
    ("partitions", Array(OffsetCommitRequestPartitionV1.SCHEMA)),
)
OffsetCommitResponsePartition = struct_class(
    "OffsetCommitResponsePartition", ("partition", Int32), ("error", Int16)
)
OffsetCommitResponseTopic = struct_class(
    "OffsetCommitResponseTopic",
    ("topic", String),
    ("partitions", Array(OffsetCommitResponsePartition.SCHEMA)),
)
OffsetCommitRequestV0 = api_struct(
    "OffsetCommitRequestV0",
    OFFSET_COMMIT,
    0,
    ("group_id", String),
    ("topics", Array(OffsetCommitRequestTopicV0.SCHEMA)),
)
OffsetCommitRequestV1 = api_struct(
    "OffsetCommitRequestV1",
    OFFSET_COMMIT,
    1,
    ("group_id", String),
    ("generation_id", Int32),  # -1: no group management
    ("member_id", String),
    ("topics", Array(OffsetCommitRequestTopicV1.SCHEMA)),
)
OffsetCommitRequestV2 = api_struct(
    "OffsetCommitRequestV2",
    OFFSET_COMMIT,
    2,
    ("group_id", String),
    ("generation_id", Int32),
    ("member_id", String),
    ("retention_time_ms", Int64),  # -1: the broker's default
    ("topics", Array(OffsetCommitRequestTopicV0.SCHEMA)),
)
_offset_commit_response = (("topics", Array(OffsetCommitResponseTopic.SCHEMA)),)
OffsetCommitResponseV0 = api_struct("OffsetCommitResponseV0", OFFSET_COMMIT, 0, *_offset_commit_response)
OffsetCommitResponseV1 = api_struct("OffsetCommitResponseV1", OFFSET_COMMIT, 1, *_offset_commit_response)
OffsetCommitResponseV2 = api_struct("OffsetCommitResponseV2", OFFSET_COMMIT, 2, *_offset_commit_response)

# -- OffsetFetch (9) --------------------------------------------------------------------------------------

OffsetFetchRequestTopic = struct_class(
    "OffsetFetchRequestTopic", ("topic", String), ("partitions", Array(Int32))
)
OffsetFetchResponsePartition = struct_class(
    "OffsetFetchResponsePartition",
    ("partition", Int32),
    ("offset", Int64),  # -1: nothing committed
    ("metadata", String),
    ("error", Int16),
)
OffsetFetchResponseTopic = struct_class(
    "OffsetFetchResponseTopic", ("topic", String), ("partitions", Array(OffsetFetchResponsePartition.SCHEMA))
)
_offset_fetch_request = (("group_id", String), ("topics", Array(OffsetFetchRequestTopic.SCHEMA)))
_offset_fetch_response = (("topics", Array(OffsetFetchResponseTopic.SCHEMA)),)
OffsetFetchRequestV0 = api_struct(
    "OffsetFetchRequestV0", OFFSET_FETCH, 0, *_offset_fetch_request
)  # ZooKeeper
OffsetFetchRequestV1 = api_struct("OffsetFetchRequestV1", OFFSET_FETCH, 1, *_offset_fetch_request)  # Kafka
OffsetFetchResponseV0 = api_struct("OffsetFetchResponseV0", OFFSET_FETCH, 0, *_offset_fetch_response)
OffsetFetchResponseV1 = api_struct("OffsetFetchResponseV1", OFFSET_FETCH, 1, *_offset_fetch_response)

# -- GroupCoordinator (10; 0.8.2's ConsumerMetadata) ------------------------------------------------------

GroupCoordinatorRequestV0 = api_struct(
    "GroupCoordinatorRequestV0", GROUP_COORDINATOR, 0, ("group_id", String)
)
GroupCoordinatorResponseV0 = api_struct(
    "GroupCoordinatorResponseV0",
    GROUP_COORDINATOR,
    0,
    ("error", Int16),
    ("node_id", Int32),  # -1, "", -1 when there is none
    ("host", String),
    ("port", Int32),
)
ConsumerMetadataRequest = GroupCoordinatorRequestV0
ConsumerMetadataResponse = GroupCoordinatorResponseV0

# -- ApiVersions (18; 0.10) -------------------------------------------------------------------------------

ApiVersionRange = struct_class(
    "ApiVersionRange", ("api_key", Int16), ("min_version", Int16), ("max_version", Int16)
)
ApiVersionsRequestV0 = api_struct("ApiVersionsRequestV0", API_VERSIONS, 0)
ApiVersionsResponseV0 = api_struct(
    "ApiVersionsResponseV0",
    API_VERSIONS,
    0,
    ("error", Int16),
    ("api_versions", Array(ApiVersionRange.SCHEMA)),
)

# -- the registry -----------------------------------------------------------------------------------------

CLIENT_APIS = (
    (ProduceRequestV0, ProduceResponseV0),
    (ProduceRequestV1, ProduceResponseV1),
    (FetchRequestV0, FetchResponseV0),
    (FetchRequestV1, FetchResponseV1),
    (ListOffsetsRequestV0, ListOffsetsResponseV0),
    (MetadataRequestV0, MetadataResponseV0),
    (OffsetCommitRequestV0, OffsetCommitResponseV0),
    (OffsetCommitRequestV1, OffsetCommitResponseV1),
    (OffsetCommitRequestV2, OffsetCommitResponseV2),
    (OffsetFetchRequestV0, OffsetFetchResponseV0),
    (OffsetFetchRequestV1, OffsetFetchResponseV1),
    (GroupCoordinatorRequestV0, GroupCoordinatorResponseV0),
    (ApiVersionsRequestV0, ApiVersionsResponseV0),
)

SCHEMAS: dict[tuple[int, int], tuple[type, type]] = {
    (request.API_KEY, request.API_VERSION): (request, response)
    for request, response in (*CLIENT_APIS, *ADMIN_APIS, *GROUP_APIS)
}
for _request, _response in SCHEMAS.values():
    _request.RESPONSE = _response  # what a client decodes the answer with


def api_version_ranges(served: Any = None) -> list[Any]:
    """Every API key with its lowest and highest version, in key order (an ApiVersions answer): of the
    ``(api_key, version)`` pairs in ``served``, by default of every schema here; never the static membership
    versions (``group_membership.UNADVERTISED``), which are served to clients that ask for them by number."""
    ranges: dict[int, list[int]] = {}
    for key, version in SCHEMAS if served is None else served:
        if (key, version) in UNADVERTISED:
            continue
        low, high = ranges.setdefault(key, [version, version])
        ranges[key] = [min(low, version), max(high, version)]
    return [ApiVersionRange(key, low, high) for key, (low, high) in sorted(ranges.items())]


# -- the header codec -------------------------------------------------------------------------------------

REQUEST_HEADER = struct.Struct(">hhi")  # api_key, api_version, correlation_id
SIZE = struct.Struct(">i")
RESPONSE_HEADER = struct.Struct(">ii")  # size, correlation_id


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


def decode_request(frame: bytes | bytearray | memoryview) -> Request:
    """Parse a request frame (the bytes after the ``int32 size``). An unknown key or version, a truncated or
    malformed body, or bytes after it raise InvalidRequestError: the server closes that connection.

    The one exception is an ApiVersions request newer than v0 (kafka-python 2.3 opens with v4, librdkafka
    with v3): as later brokers do, it is read as a v0 request whose header keeps the version asked for (its
    flexible header and body are skipped), so the answer can be a v0 UNSUPPORTED_VERSION with the ranges."""
    reader = Reader(frame)
    api_key = reader.unpack(Int16.fmt)
    api_version = reader.unpack(Int16.fmt)
    correlation_id = reader.unpack(Int32.fmt)
    if api_key == API_VERSIONS and api_version > 0:
        return Request(api_key, api_version, correlation_id, None, ApiVersionsRequestV0())
    entry = SCHEMAS.get((api_key, api_version))
    if entry is None:
        name = API_NAMES.get(api_key, "unknown API")
        raise InvalidRequestError(f"{name} (key {api_key}) version {api_version} is not supported")
    request_class = entry[0]
    if api_key == PRODUCE:  # the most frequent request: read without the schema walk when well formed
        body = _read_produce(reader, request_class)
        if body is not None:
            return Request(api_key, api_version, correlation_id, body[0], body[1])
    try:
        client_id = String.read(reader) if has_client_id(api_key, api_version) else None
        body = request_class.read_from(reader)
        reader.expect_end()
    except InvalidRequestError as exc:
        raise InvalidRequestError(
            f"{request_class.__name__} (correlation id {correlation_id}) is malformed: {exc}"
        ) from None
    return Request(api_key, api_version, correlation_id, client_id, body)


def _read_produce(reader: Reader, request_class: type) -> tuple[str | None, Any] | None:
    """A well-formed produce request's client id and body (``produce_wire``); None for any other."""
    start = reader.pos
    try:
        client_id = String.read(reader)
    except InvalidRequestError:
        return None
    body = read_produce_body(
        reader.buf, reader.pos, request_class, ProduceRequestTopic, ProduceRequestPartition
    )
    if body is None:
        reader.pos = start
        return None
    return client_id, body


def encode_request(body: Struct, correlation_id: int, client_id: str | None = "") -> bytes:
    """A whole request frame (``int32 size`` included) for a registered request body."""
    out: list = [b"", REQUEST_HEADER.pack(body.API_KEY, body.API_VERSION, correlation_id)]  # type: ignore[attr-defined]
    if has_client_id(body.API_KEY, body.API_VERSION):  # type: ignore[attr-defined]
        String.write(client_id, out)
    if body.API_KEY != PRODUCE or not write_produce_body(body, out):  # type: ignore[attr-defined]
        body.SCHEMA.write(body, out)
    out[0] = SIZE.pack(sum(map(len, out)))  # one join: a produce request's sets are copied once
    return b"".join(out)


def encode_response(correlation_id: int, body: Struct) -> list:
    """A whole response frame as parts: byte strings merged, message-set file regions kept for sendfile."""
    out: list = [b""]
    if type(body) is not ProduceResponseV0 or not write_produce_response(body.topics, out):
        body.SCHEMA.write(body, out)
    size = 4 + parts_size(out)
    out[0] = RESPONSE_HEADER.pack(size, correlation_id)
    return join_parts(out)


def decode_response(api_key: int, api_version: int, frame: bytes | bytearray | memoryview) -> Response:
    """Parse a response frame (the bytes after the ``int32 size``) to the request ``(api_key, api_version)``."""
    entry = SCHEMAS.get((api_key, api_version))
    if entry is None:
        raise InvalidRequestError(f"no response schema for API key {api_key} version {api_version}")
    response_class = entry[1]
    reader = Reader(frame)
    try:
        correlation_id = reader.unpack(Int32.fmt)
        if response_class is ProduceResponseV0:  # a pipelined producer reads one a request
            body = read_produce_response(
                reader.buf, reader.pos, response_class, ProduceResponseTopic, ProduceResponsePartition
            )
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


CODEC = RequestCodec08()

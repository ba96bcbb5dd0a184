"""The Fetch v0-v3 direct codec (``protocol/fetch_wire.py``) against the schema walk it stands in for, both
ways for the request and the answer: the same parts written (an answer's file region kept as a part), the same
value read from a well-formed body, None (so the schema raises its usual error) from any damaged one."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.protocol.test_produce_wire import damage, schema_bytes
from zkafka.errors import InvalidRequestError
from zkafka.network.send import FileRegion
from zkafka.protocol.fetch import (
    FETCH_APIS,
    FetchRequestPartition,
    FetchRequestTopic,
    FetchResponsePartition,
    FetchResponseTopic,
    fetch_request,
)
from zkafka.protocol.fetch_wire import (
    LAST_VERSION,
    read_fetch_body,
    read_fetch_response,
    write_fetch_body,
    write_fetch_response,
)
from zkafka.protocol.produce import ProduceRequestPartition, ProduceRequestTopic, ProduceRequestV0
from zkafka.protocol.schema import decode
from zkafka.protocol.types import join_parts, parts_size
from zkafka.protocol.v08 import CODEC, decode_request, decode_response, encode_request, encode_response

VERSIONS = range(LAST_VERSION + 1)
int16, int32, int64 = (st.integers(-(2 ** (n - 1)), 2 ** (n - 1) - 1) for n in (16, 32, 64))
names = st.none() | st.text(max_size=6)
partitions = st.lists(st.builds(FetchRequestPartition, int32, int64, int32), max_size=3)
topics = st.lists(st.builds(FetchRequestTopic, names, partitions), max_size=3)


def _request(version: int):
    cls = FETCH_APIS[version][0]
    if version >= 3:
        return st.builds(cls, int32, int32, int32, int32, topics)
    return st.builds(cls, int32, int32, int32, topics)


requests = st.sampled_from(VERSIONS).flatmap(_request)


def read(cls, data: bytes):
    return read_fetch_body(memoryview(data), 0, cls.API_VERSION, cls, FetchRequestTopic, FetchRequestPartition)


@settings(max_examples=300, deadline=None)
@given(requests)
def test_writes_the_schemas_bytes_and_reads_back_its_value(body) -> None:
    data = schema_bytes(body)
    out: list = []
    assert write_fetch_body(body, body.API_VERSION, out) and b"".join(out) == data
    fast = read(type(body), data)
    assert fast == decode(type(body).SCHEMA, data)
    assert type(fast) is type(body)
    assert all(type(t) is FetchRequestTopic for t in fast.topics)
    assert all(type(p) is FetchRequestPartition for t in fast.topics for p in t.partitions)
    assert decode_request(encode_request(body, 7, "cli")[4:]).body == body


@settings(max_examples=500, deadline=None)
@given(requests, st.data())
def test_a_damaged_body_reads_as_the_schema_reads_it_or_not_at_all(body, data) -> None:
    damaged = bytes(damage(schema_bytes(body), data))
    assert_read_as_the_schema_or_not_at_all(read(type(body), damaged), type(body), damaged)


def assert_read_as_the_schema_or_not_at_all(fast, cls, damaged: bytes) -> None:
    try:
        expected = decode(cls.SCHEMA, damaged)
    except InvalidRequestError:
        assert fast is None
    else:
        assert fast is None or fast == expected


def test_decode_request_raises_the_schemas_error_for_a_malformed_fetch() -> None:
    frame = bytes.fromhex("0001 0000 00000007 0003 636c69 ffffffff 000001f4 00000001 00000001 0001".replace(" ", ""))
    with pytest.raises(InvalidRequestError, match=r"FetchRequestV0 \(correlation id 7\) is malformed"):
        decode_request(frame)


answered = st.lists(
    st.builds(FetchResponsePartition, int32, int16, int64, st.binary(max_size=20)), max_size=3
)


def _response(version: int):
    cls = FETCH_APIS[version][1]
    topics = st.lists(st.builds(FetchResponseTopic, names, answered), max_size=3)
    return st.builds(cls, topics) if version == 0 else st.builds(cls, int32, topics)


responses = st.sampled_from(VERSIONS).flatmap(_response)


@settings(max_examples=300, deadline=None)
@given(responses)
def test_an_answer_is_written_as_the_schema_writes_it_and_read_back(body) -> None:
    out: list = []
    assert write_fetch_response(body, body.API_VERSION, out)
    data = b"".join(out)
    assert data == schema_bytes(body)
    fast = read_response(type(body), data)
    assert fast == decode(type(body).SCHEMA, data) and type(fast) is type(body)
    assert all(type(p) is FetchResponsePartition for t in fast.topics for p in t.partitions)
    assert all(type(p.message_set) is memoryview for t in fast.topics for p in t.partitions)
    assert decode_response(1, body.API_VERSION, b"".join(encode_response(7, body))[4:]) == (7, body)


def read_response(cls, data: bytes):
    return read_fetch_response(
        memoryview(data), 0, cls.API_VERSION, cls, FetchResponseTopic, FetchResponsePartition
    )


@settings(max_examples=500, deadline=None)
@given(responses, st.data())
def test_a_damaged_answer_reads_as_the_schema_reads_it_or_not_at_all(body, data) -> None:
    damaged = bytes(damage(schema_bytes(body), data))
    assert_read_as_the_schema_or_not_at_all(read_response(type(body), damaged), type(body), damaged)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_file_region_stays_a_part_of_the_answer(version) -> None:
    region = FileRegion(-1, 10, 25)
    partition = FetchResponsePartition(0, 0, 99, region)
    topics = [FetchResponseTopic("t", [partition, FetchResponsePartition(1, 6, -1, b"")])]
    body = FETCH_APIS[version][1](topics) if version == 0 else FETCH_APIS[version][1](0, topics)
    out: list = []
    assert write_fetch_response(body, version, out)
    expected: list = []
    body.SCHEMA.write(body, expected)
    assert join_parts(out) == join_parts(expected) and out.count(region) == 1
    parts = encode_response(7, body)
    assert region in parts and parts_size(parts) == 4 + int.from_bytes(parts[0][:4], "big")


def test_a_value_out_of_range_or_an_iterable_is_left_to_the_schema() -> None:
    out: list = []
    big = FETCH_APIS[0][1]([FetchResponseTopic("t", [FetchResponsePartition(2**31, 0, 0, b"")])])
    assert not write_fetch_response(big, 0, out)
    assert not write_fetch_response(FETCH_APIS[1][1](0, iter([])), 1, out)
    request = FETCH_APIS[0][0](-1, 0, 0, [FetchRequestTopic("t", [FetchRequestPartition(0, 2**63, 0)])])
    assert not write_fetch_body(request, 0, out)
    assert out == []


@pytest.mark.parametrize("version", [0, 3, 4, 11])
def test_a_decoded_fetch_keeps_no_view_into_its_frame(version) -> None:
    partitions = [("t", 0, 100, 1 << 20), ("u", 2, 5, 1024)]
    body = fetch_request(version, partitions, replica_id=1, max_wait_ms=500, min_bytes=1)
    frame = bytearray(encode_request(body, 7, "cli")[4:])
    request = decode_request(memoryview(frame))
    assert not CODEC.holds_frame(request)  # the server reuses its frame's buffer while it waits
    frame[:] = bytes(len(frame))
    assert request.body == body and request.client_id == "cli"
    produce = ProduceRequestV0(-1, 500, [ProduceRequestTopic("t", [ProduceRequestPartition(0, b"set")])])
    assert CODEC.holds_frame(decode_request(encode_request(produce, 8, "cli")[4:]))

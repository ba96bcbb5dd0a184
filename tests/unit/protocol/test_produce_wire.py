"""The Produce body's direct codec (``protocol/produce_wire.py``) against the schema walk it stands in for:
the same parts written, the same value read from a well-formed body, None (so the schema raises its usual
error) from any damaged one, and ``decode_request``'s errors unchanged."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zkafka.errors import InvalidRequestError
from zkafka.protocol.produce import (
    FIRST_BATCH_VERSION,
    PRODUCE_APIS,
    ProduceRequestPartition,
    ProduceRequestTopic,
    ProduceRequestV0,
    ProduceRequestV1,
    ProduceResponsePartition,
    ProduceResponseTopic,
    ProduceResponseV0,
    RecordError,
    response_partition_class,
    response_topic_class,
)
from zkafka.protocol.produce_wire import (
    read_produce_body,
    read_produce_response,
    write_produce_body,
    write_produce_response,
)
from zkafka.protocol.schema import decode
from zkafka.protocol.types import Reader
from zkafka.protocol.v08 import decode_request, decode_response, encode_request, encode_response

VERSIONS = range(len(PRODUCE_APIS))
int16, int32, int64 = (st.integers(-(2 ** (n - 1)), 2 ** (n - 1) - 1) for n in (16, 32, 64))
partitions = st.lists(st.builds(ProduceRequestPartition, int32, st.binary(max_size=40)), max_size=3)
topics = st.lists(st.builds(ProduceRequestTopic, st.none() | st.text(max_size=6), partitions), max_size=3)


def _body(version: int):
    cls = PRODUCE_APIS[version][0]
    if version >= FIRST_BATCH_VERSION:
        return st.builds(cls, st.none() | st.text(max_size=6), int16, int32, topics)
    return st.builds(cls, int16, int32, topics)


bodies = st.sampled_from(VERSIONS).flatmap(_body)


def schema_bytes(body) -> bytes:
    out: list = []
    body.SCHEMA.write(body, out)
    return b"".join(out)


def read(cls, data: bytes):
    transactional = cls.API_VERSION >= FIRST_BATCH_VERSION
    return read_produce_body(memoryview(data), 0, cls, ProduceRequestTopic, ProduceRequestPartition, transactional)


@settings(max_examples=300, deadline=None)
@given(bodies)
def test_writes_the_schemas_bytes_and_reads_back_its_value(body) -> None:
    out: list = []
    assert write_produce_body(body, out, body.API_VERSION >= FIRST_BATCH_VERSION)
    data = b"".join(out)
    assert data == schema_bytes(body)
    fast = read(type(body), data)
    assert fast == decode(type(body).SCHEMA, data)
    assert type(fast) is type(body)
    assert all(type(t) is ProduceRequestTopic for t in fast.topics)
    assert all(type(p) is ProduceRequestPartition for t in fast.topics for p in t.partitions)


def damage(raw: bytes, data) -> bytearray:
    """``raw`` cut somewhere, random bytes appended, and maybe one byte changed."""
    cut = data.draw(st.integers(0, len(raw)))
    damaged = bytearray(raw[:cut]) + data.draw(st.binary(max_size=6))
    if damaged and data.draw(st.booleans()):
        at = data.draw(st.integers(0, len(damaged) - 1))
        damaged[at] = data.draw(st.integers(0, 255))
    return damaged


@settings(max_examples=500, deadline=None)
@given(bodies, st.data())
def test_a_damaged_body_reads_as_the_schema_reads_it_or_not_at_all(body, data) -> None:
    damaged = damage(schema_bytes(body), data)
    fast = read(type(body), bytes(damaged))
    try:
        expected = decode(type(body).SCHEMA, bytes(damaged))
    except InvalidRequestError:
        assert fast is None
    else:
        assert fast is None or fast == expected


def test_a_file_region_or_an_iterable_is_left_to_the_schema() -> None:
    class Region:
        length = 3

    out: list = []
    region = ProduceRequestV0(1, 100, [ProduceRequestTopic("t", [ProduceRequestPartition(0, Region())])])
    assert not write_produce_body(region, out, False)
    iterable = ProduceRequestV0(1, 100, iter([]))
    assert not write_produce_body(iterable, out, False)
    assert out == []
    assert encode_request(ProduceRequestV0(1, 100, iter([])), 7, "c") == encode_request(
        ProduceRequestV0(1, 100, []), 7, "c"
    )


@pytest.mark.parametrize(
    ("body_hex", "error"),
    [
        ("0001 000003e8 ffffffff", "negative array count -1"),
        ("0001 000003e8 00000001 0001 74 00000001 00000000 fffffffe", "negative message set size -2"),
        ("0001 000003e8 00000001 0001 74 00000001 00000000 00000009 00", "runs past the end"),
        ("0001 000003e8 00000000 00", "1 unexpected bytes after the request body"),
        ("0001 000003e8 00000001 0001 ff 00000000", "is not UTF-8"),
    ],
)
def test_decode_request_raises_the_schemas_error_for_a_malformed_produce(body_hex: str, error: str) -> None:
    frame = bytes.fromhex("0000 0000 00000007 0003 636c69" + body_hex.replace(" ", ""))
    with pytest.raises(
        InvalidRequestError, match=f"ProduceRequestV0 \\(correlation id 7\\) is malformed: .*{error}"
    ):
        decode_request(frame)


def test_decode_request_reads_a_produce_frame_with_views_into_it() -> None:
    body = ProduceRequestV1(-1, 500, [ProduceRequestTopic("t", [ProduceRequestPartition(3, b"set")])])
    frame = encode_request(body, 9, "cli")[4:]
    request = decode_request(frame)
    assert (request.api_key, request.api_version, request.correlation_id, request.client_id) == (
        0,
        1,
        9,
        "cli",
    )
    assert request.body == body
    assert isinstance(request.body.topics[0].partitions[0].message_set, memoryview)
    assert Reader(frame).remaining == len(frame)


record_errors = st.lists(st.builds(RecordError, int32, st.none() | st.text(max_size=4)), max_size=1)


def _response(version: int):
    fields = [int32, int16, int64] + [int64] * ((version >= 2) + (version >= 5))
    if version >= 8:  # mostly none (the answer zkafka gives): the others are the schema's
        fields += [st.just([]) | record_errors, st.just(None) | st.none() | st.text(max_size=4)]
    statuses = st.lists(st.builds(response_partition_class(version), *fields), max_size=3)
    topic = st.builds(response_topic_class(version), st.none() | st.text(max_size=6), statuses)
    cls = PRODUCE_APIS[version][1]
    if version == 0:
        return st.builds(cls, st.lists(topic, max_size=3))
    return st.builds(cls, st.lists(topic, max_size=3), int32)


responses = st.sampled_from(VERSIONS).flatmap(_response)


def read_response(body_class, data: bytes):
    version = body_class.API_VERSION
    return read_produce_response(
        memoryview(data), 0, version, body_class, response_topic_class(version), response_partition_class(version)
    )


def _fast_case(body) -> bool:
    return body.API_VERSION < 8 or all(p[5:] == ([], None) for t in body.topics for p in t.partitions)


@settings(max_examples=400, deadline=None)
@given(responses)
def test_a_response_is_written_as_the_schema_writes_it_and_read_back(body) -> None:
    version = body.API_VERSION
    out: list = []
    written = write_produce_response(body, version, out)
    assert written == _fast_case(body)  # a v8 answer with record errors or a message is the schema's
    data = b"".join(out) if written else schema_bytes(body)
    assert data == schema_bytes(body)
    fast = read_response(type(body), data)
    if not written:
        assert fast is None
        return
    assert fast == decode(type(body).SCHEMA, data)
    assert type(fast) is type(body)
    assert all(type(p) is response_partition_class(version) for t in fast.topics for p in t.partitions)
    frame = b"".join(encode_response(7, body))
    assert decode_response(0, version, frame[4:]) == (7, body)


@settings(max_examples=500, deadline=None)
@given(responses, st.data())
def test_a_damaged_response_reads_as_the_schema_reads_it_or_not_at_all(body, data) -> None:
    damaged = damage(schema_bytes(body), data)
    fast = read_response(type(body), bytes(damaged))
    try:
        expected = decode(type(body).SCHEMA, bytes(damaged))
    except InvalidRequestError:
        assert fast is None
        with pytest.raises(InvalidRequestError, match=f"{type(body).__name__} is malformed"):
            decode_response(0, body.API_VERSION, b"\0\0\0\x07" + bytes(damaged))
    else:
        assert fast is None or fast == expected


def test_a_response_value_out_of_range_is_left_to_the_schema() -> None:
    out: list = []
    too_big = ProduceResponseV0([ProduceResponseTopic("t", [ProduceResponsePartition(0, 0, 2**63)])])
    assert not write_produce_response(too_big, 0, out) and out == []
    assert not write_produce_response(ProduceResponseV0(iter(too_big.topics)), 0, out) and out == []

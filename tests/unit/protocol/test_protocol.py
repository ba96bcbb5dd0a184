"""Request and response frames against the reference's worked examples."""

import pytest

from zkafka.errors import InvalidRequestError
from zkafka.protocol.v07 import (
    FETCH,
    MULTIFETCH,
    MULTIPRODUCE,
    OFFSETS,
    PRODUCE,
    FetchRequest,
    MultiFetchRequest,
    MultiProducerRequest,
    OffsetRequest,
    ProducerRequest,
    decode_multifetch_response,
    decode_offsets_response,
    decode_request,
    encode_offsets_response,
    encode_request,
    response_header,
)
from zkafka.records.message import build_message_set

HELLO_ENTRY = bytes.fromhex("0000000b01003610a68668656c6c6f")
PRODUCE_FRAME = bytes.fromhex("0000001f0000000474657374000000000000000f") + HELLO_ENTRY
FETCH_FRAME = bytes.fromhex("00000018000100047465737400000000000000000000000000100000")
OFFSETS_FRAME = bytes.fromhex("00000018000400047465737400000000ffffffffffffffff00000001")


def test_golden_frames():
    assert encode_request(ProducerRequest("test", 0, build_message_set([b"hello"]))) == PRODUCE_FRAME
    assert encode_request(FetchRequest("test", 0, 0, 1024 * 1024)) == FETCH_FRAME
    assert encode_request(OffsetRequest("test", 0, -1, 1)) == OFFSETS_FRAME


@pytest.mark.parametrize("frame", [PRODUCE_FRAME, FETCH_FRAME, OFFSETS_FRAME])
def test_decode_golden_frames_round_trip(frame):
    request_type = int.from_bytes(frame[4:6], "big")
    request = decode_request(request_type, frame[6:])
    assert encode_request(request) == frame


def test_multi_requests_round_trip():
    produce = MultiProducerRequest(
        (ProducerRequest("a", 0, build_message_set([b"x"])), ProducerRequest("b-c", 3, b""))
    )
    fetch = MultiFetchRequest((FetchRequest("a", 0, 0, 10), FetchRequest("b", 1, 2**40, 300)))
    for request, type_id in ((produce, MULTIPRODUCE), (fetch, MULTIFETCH)):
        frame = encode_request(request)
        assert int.from_bytes(frame[4:6], "big") == type_id
        decoded = decode_request(type_id, frame[6:])
        assert decoded.__class__ is request.__class__
        assert encode_request(decoded) == frame


def test_utf8_topic_uses_byte_length():
    frame = encode_request(FetchRequest("tōpic", 0, 0, 1))
    assert frame[6:8] == (6).to_bytes(2, "big")
    assert decode_request(FETCH, frame[6:]).topic == "tōpic"


@pytest.mark.parametrize(
    "request_type, body",
    [
        (PRODUCE, b"\x00\x04tes"),  # truncated topic
        (PRODUCE, bytes.fromhex("000474657374000000000000ffff")),  # message-set size beyond the body
        (FETCH, bytes.fromhex("00047465737400000000")),  # missing offset and size
        (OFFSETS, OFFSETS_FRAME[6:] + b"\x00"),  # trailing garbage
        (9, b""),  # unknown type
    ],
)
def test_malformed_bodies_raise(request_type, body):
    with pytest.raises(InvalidRequestError):
        decode_request(request_type, body)


def test_responses():
    assert encode_offsets_response([10, 0]) == bytes.fromhex(
        "00000016000000000002000000000000000a0000000000000000"
    )
    assert decode_offsets_response(encode_offsets_response([10, 0])[6:]) == [10, 0]
    body = response_header(0, 3) + b"abc" + response_header(3, 0)
    assert [(e, bytes(b)) for e, b in decode_multifetch_response(body)] == [(0, b"abc"), (3, b"")]

"""Request and response frames against the reference's worked examples and hand-written golden bytes."""

import pytest

from tests.unit.protocol.golden07 import (
    FETCH_FRAME,
    FETCH_RESPONSE,
    HELLO_ENTRY,
    MULTIFETCH_FRAME,
    MULTIFETCH_RESPONSE,
    MULTIPRODUCE_FRAME,
    OFFSETS_FRAME,
    OFFSETS_RESPONSE,
    PRODUCE_FRAME,
)
from zkafka.errors import InvalidRequestError
from zkafka.protocol.v07 import (
    CODEC,
    FETCH,
    MULTIFETCH,
    MULTIPRODUCE,
    OFFSETS,
    PRODUCE,
    FetchRequest,
    FetchResponse,
    MultiFetchRequest,
    MultiFetchResponse,
    MultiProducerRequest,
    OffsetRequest,
    OffsetResponse,
    ProducerRequest,
    decode_multifetch_response,
    decode_offsets_response,
    decode_request,
    decode_response,
    encode_offsets_response,
    encode_request,
    expects_response,
    response_header,
)
from zkafka.records.message07 import build_message_set


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


def test_golden_multi_requests():
    produce = ProducerRequest("test", 0, HELLO_ENTRY)
    assert encode_request(MultiProducerRequest([produce])) == MULTIPRODUCE_FRAME
    assert encode_request(MultiFetchRequest([FetchRequest("test", 0, 0, 1 << 20)])) == MULTIFETCH_FRAME
    decoded = decode_request(MULTIPRODUCE, MULTIPRODUCE_FRAME[6:])
    assert isinstance(decoded.produces[0], ProducerRequest)  # nested values are the declared class
    assert (decoded.produces[0].topic, bytes(decoded.produces[0].messages)) == ("test", HELLO_ENTRY)


@pytest.mark.parametrize(
    "response, frame",
    [
        (FetchResponse(0, HELLO_ENTRY), FETCH_RESPONSE),
        (MultiFetchResponse(0, [FetchResponse(0, HELLO_ENTRY), FetchResponse(3, b"")]), MULTIFETCH_RESPONSE),
        (OffsetResponse(0, [15]), OFFSETS_RESPONSE),
    ],
    ids=["fetch", "multifetch", "offsets"],
)
def test_golden_responses(response, frame):
    assert b"".join(response.encode_frame()) == frame
    request_type = {FetchResponse: FETCH, MultiFetchResponse: MULTIFETCH, OffsetResponse: OFFSETS}[
        type(response)
    ]
    decoded = decode_response(request_type, frame[4:])
    assert b"".join(decoded.encode_frame()) == frame


def test_response_header_and_body_decoders():
    assert response_header(0, 15) == FETCH_RESPONSE[:6]
    assert encode_offsets_response([15]) == OFFSETS_RESPONSE
    assert decode_offsets_response(OFFSETS_RESPONSE[6:]) == [15]
    parts = decode_multifetch_response(MULTIFETCH_RESPONSE[6:])
    assert [(e, bytes(b)) for e, b in parts] == [(0, HELLO_ENTRY), (3, b"")]


class Region:
    """A stand-in for a file region: only its length is read by the encoder."""

    length = 15


def test_a_fetch_response_keeps_the_file_region_as_its_own_part():
    region = Region()
    assert FetchResponse(0, region).encode_frame() == [FETCH_RESPONSE[:6], region]
    parts = MultiFetchResponse(0, [FetchResponse(0, region), FetchResponse(3, b"")]).encode_frame()
    assert parts == [MULTIFETCH_RESPONSE[:12], region, MULTIFETCH_RESPONSE[-6:]]


def test_codec_frames_for_the_network_layer():
    assert CODEC.decode_request(memoryview(FETCH_FRAME)[4:]) == FetchRequest("test", 0, 0, 1 << 20)
    assert (
        CODEC.encode_request(OffsetRequest("test", 0, -1, 1), 99) == OFFSETS_FRAME
    )  # no correlation id in 0.7
    assert not expects_response(ProducerRequest("t", 0, b"")) and not expects_response(
        MultiProducerRequest([])
    )
    assert expects_response(FetchRequest("t", 0, 0, 1)) and expects_response(OffsetRequest("t", 0, -1, 1))
    fetch = FetchRequest("test", 0, 0, 1 << 20)
    assert CODEC.decode_response(fetch, 1, memoryview(FETCH_RESPONSE)[4:]) == (0, HELLO_ENTRY)
    with pytest.raises(InvalidRequestError, match="no request type"):
        CODEC.decode_request(memoryview(b"\x00"))


@pytest.mark.parametrize(
    "request_type, body",
    [
        (MULTIFETCH, b"\xff\xff"),  # negative count
        (MULTIFETCH, b"\x7f\xff" + FETCH_FRAME[6:]),  # a count the bytes left cannot hold
        (MULTIPRODUCE, MULTIPRODUCE_FRAME[6:-1]),  # truncated inside the message set
        (PRODUCE, PRODUCE_FRAME[6:20] + b"\xff\xff\xff\xff"),  # negative message-set size
    ],
)
def test_hostile_multi_requests_raise(request_type, body):
    with pytest.raises(InvalidRequestError):
        decode_request(request_type, body)


@pytest.mark.parametrize(
    "request_type, frame",
    [
        (MULTIFETCH, MULTIFETCH_RESPONSE[4:-1]),  # a part cut short
        (MULTIFETCH, MULTIFETCH_RESPONSE[4:10] + b"\x7f\xff\xff\xff"),  # a part longer than the frame
        (OFFSETS, OFFSETS_RESPONSE[4:-8]),  # fewer offsets than counted
    ],
)
def test_malformed_responses_raise(request_type, frame):
    with pytest.raises(InvalidRequestError):
        decode_response(request_type, frame)

"""The 0.8 clients' shared pieces without sockets: the broker list, the client codec's framing and checks."""

import pytest

from zkafka.client08.channel import ClientCodec08, CorrelationIdMismatchError, check_error
from zkafka.client08.topic_metadata import parse_broker_list
from zkafka.errors import InvalidConfigError, NotLeaderForPartitionError
from zkafka.protocol.metadata import MetadataRequestV0, MetadataResponseV0
from zkafka.protocol.produce import ProduceRequestV0
from zkafka.protocol.v08 import RESPONSE_HEADER, encode_request


def test_broker_list_forms():
    assert parse_broker_list("a:9092, b:9093") == [("a", 9092), ("b", 9093)]
    assert parse_broker_list(["127.0.0.1:1", "[::1]:2"]) == [("127.0.0.1", 1), ("::1", 2)]


@pytest.mark.parametrize("bad", ["a", "a:", ":9092", "a:port", "a:70000", "", " , "])
def test_broker_list_refuses_bad_items(bad):
    with pytest.raises(InvalidConfigError, match="metadata.broker.list"):
        parse_broker_list(bad)


def test_codec_frames_with_client_id_and_correlation_id():
    codec = ClientCodec08("zk-client")
    request = MetadataRequestV0(["t"])
    assert codec.encode_request(request, 7) == encode_request(request, 7, "zk-client")
    frame = codec.encode_request(request, 7)
    # size | key 3 | version 0 | correlation id 7 | client id "zk-client"
    assert frame[4:12] == b"\x00\x03\x00\x00\x00\x00\x00\x07"
    assert frame[12:23] == b"\x00\x09zk-client"


def test_codec_answers_only_acknowledged_produce():
    codec = ClientCodec08()
    assert codec.expects_response(MetadataRequestV0([]))
    assert codec.expects_response(ProduceRequestV0(1, 1000, []))
    assert codec.expects_response(ProduceRequestV0(-1, 1000, []))
    assert not codec.expects_response(ProduceRequestV0(0, 1000, []))


def test_codec_checks_the_correlation_id():
    codec = ClientCodec08()
    body = MetadataResponseV0([], []).encode()
    frame = memoryview(RESPONSE_HEADER.pack(0, 41)[4:] + body)
    assert codec.decode_response(MetadataRequestV0([]), 41, frame) == MetadataResponseV0([], [])
    with pytest.raises(CorrelationIdMismatchError, match="correlation id 41 .* sent with 42"):
        codec.decode_response(MetadataRequestV0([]), 42, frame)


def test_check_error_names_what_failed():
    check_error(0, "nothing")
    with pytest.raises(NotLeaderForPartitionError, match="fetch of t-0: NOT_LEADER_FOR_PARTITION"):
        check_error(6, "fetch of t-0")

"""Encoders and message-set building for the producer (zkafka.producer.encoders)."""

from __future__ import annotations

import pytest

from zkafka.producer.encoders import (
    CallableEncoder,
    DefaultEncoder,
    StringEncoder,
    encode_message_set,
    import_object,
    load_encoder,
)
from zkafka.records.compression import GZIP, NO_COMPRESSION, SNAPPY
from zkafka.records.format07 import ByteBufferMessageSet
from zkafka.records.message07 import Message, build_message_set


def payloads_of(message_set: bytes) -> list[bytes]:
    return [m.payload for m, _ in ByteBufferMessageSet(message_set)]


def test_java_encoder_names_map_to_ours():
    assert type(load_encoder("kafka.serializer.DefaultEncoder")) is DefaultEncoder
    assert type(load_encoder("kafka.serializer.StringEncoder")) is StringEncoder
    assert type(load_encoder(None)) is DefaultEncoder
    assert type(load_encoder("zkafka.producer.encoders.StringEncoder")) is StringEncoder
    assert type(load_encoder("zkafka.producer.encoders:StringEncoder")) is StringEncoder


def test_callables_and_objects_are_encoders():
    encoder = load_encoder(lambda event: str(event * 2).encode())
    assert isinstance(encoder, CallableEncoder)
    assert encoder.encode(21) == b"42"
    string = StringEncoder()
    assert load_encoder(string) is string
    assert type(load_encoder(StringEncoder)) is StringEncoder


def test_bad_encoder_paths_name_the_key():
    with pytest.raises(ImportError, match="serializer.class"):
        load_encoder("no.such.module.Encoder")
    with pytest.raises(ImportError, match="serializer.class"):
        load_encoder("NoDots")
    with pytest.raises(ImportError, match="partitioner.class"):
        import_object("zkafka.producer.encoders.Missing", "partitioner.class")


def test_default_encoder_passes_bytes_and_messages_as_they_are():
    encoder = DefaultEncoder()
    assert encoder.encode(b"abc") == b"abc"
    wrapper = Message(b"compressed bytes", codec=1)
    assert encoder.encode(wrapper) is wrapper
    assert encode_message_set(encoder, [wrapper, b"x"]) == wrapper.to_entry() + Message(b"x").to_entry()
    with pytest.raises(TypeError, match="StringEncoder"):
        encoder.encode("text")


def test_string_encoder_is_utf8():
    assert StringEncoder().encode("h\u00e9") == b"h\xc3\xa9"
    assert StringEncoder("latin-1").encode("h\u00e9") == b"h\xe9"
    with pytest.raises(TypeError):
        StringEncoder().encode(42)


@pytest.mark.parametrize("codec", [NO_COMPRESSION, GZIP, SNAPPY])
def test_encode_message_set_matches_the_codec(codec):
    events = [b"a", b"bb", bytearray(b"ccc"), memoryview(b"dddd")]
    message_set = encode_message_set(DefaultEncoder(), events, codec)
    assert message_set == build_message_set([bytes(e) for e in events], codec)
    assert payloads_of(message_set) == [b"a", b"bb", b"ccc", b"dddd"]
    wrappers = list(ByteBufferMessageSet(message_set).shallow_iter())
    assert len(wrappers) == (4 if codec == NO_COMPRESSION else 1)
    assert {m.codec for m, _ in wrappers} == {codec}


def test_default_encoder_falls_back_per_event_for_messages():
    message_set = encode_message_set(DefaultEncoder(), [b"x", Message(b"y")])
    assert payloads_of(message_set) == [b"x", b"y"]


def test_default_encoder_rejects_str_with_a_helpful_error():
    with pytest.raises(TypeError, match="StringEncoder"):
        encode_message_set(DefaultEncoder(), [b"ok", "not bytes"])


def test_string_encoder_builds_sets_of_utf8():
    assert payloads_of(encode_message_set(StringEncoder(), ["x", "\u00fc"], GZIP)) == [b"x", b"\xc3\xbc"]


def test_empty_event_list_gives_an_empty_set():
    assert encode_message_set(DefaultEncoder(), [], GZIP) == b""

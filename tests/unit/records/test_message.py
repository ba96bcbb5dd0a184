"""The 0.7 message format: golden bytes, CRC, compression wrappers and the iteration rules."""

import gzip
import struct
import zlib

import crcmod.predefined
import pytest
import snappy

from tests.unit.protocol.golden07 import HELLO_ENTRY
from zkafka.errors import (
    InvalidMessageError,
    InvalidMessageSizeError,
    MessageSizeTooLargeError,
    UnknownCodecError,
    UnknownMagicByteError,
)
from zkafka.records.compression import (
    GZIP,
    NO_COMPRESSION,
    SNAPPY,
    compress,
    decompress,
    gzip_compress,
    snappy_compress,
)
from zkafka.records.format07 import FORMAT07, ByteBufferMessageSet, iter_messages
from zkafka.records.message07 import Message, build_message_set, encode_entries


def payloads(ms):
    return [m.payload for m, _ in ms]


def test_worked_example_bytes():
    assert Message(b"hello").to_entry() == HELLO_ENTRY
    assert build_message_set([b"hello"]) == HELLO_ENTRY


def test_crc_matches_crcmod_cross_check():
    crc32 = crcmod.predefined.mkCrcFun("crc-32")
    for payload in (b"", b"hello", bytes(range(256)) * 7):
        assert Message(payload).checksum == crc32(payload)


def test_magic_zero_layout_and_read():
    entry = struct.pack(">iBI", 5 + 5, 0, zlib.crc32(b"hello")) + b"hello"
    [(message, offset)] = list(iter_messages(entry))
    assert message.magic == 0 and message.codec == NO_COMPRESSION and message.payload == b"hello"
    assert offset == len(entry)
    assert Message(b"hello", magic=0).to_entry() == entry


def test_unknown_magic_and_codec():
    bad_magic = struct.pack(">iBBI", 6, 2, 0, 0)
    with pytest.raises(UnknownMagicByteError):
        list(iter_messages(bad_magic))
    msg = bytearray(Message(b"x").to_entry())
    msg[5] = 3  # attributes: codec 3
    with pytest.raises(UnknownCodecError):
        list(iter_messages(bytes(msg)))


def test_attributes_bits_beyond_codec_are_ignored():
    entry = bytearray(Message(b"x").to_entry())
    entry[5] = 0xF0
    [(message, _)] = list(iter_messages(bytes(entry)))
    assert message.codec == NO_COMPRESSION and message.payload == b"x"


def test_shallow_offsets_are_next_entry_positions():
    data = build_message_set([b"a", b"bb", b"ccc"])
    offsets = [o for _, o in iter_messages(data, initial_offset=100)]
    assert offsets == [100 + 11, 100 + 11 + 12, 100 + 11 + 12 + 13]


@pytest.mark.parametrize("codec", [GZIP, SNAPPY])
def test_compressed_wrapper_deep_and_shallow(codec):
    inner = [b"one", b"two", b"three"]
    data = build_message_set(inner, codec)
    shallow = list(iter_messages(data, 1000, deep=False))
    assert len(shallow) == 1 and shallow[0].message.codec == codec
    assert decompress(codec, shallow[0].message.payload) == encode_entries(inner)
    deep = list(iter_messages(data, 1000, deep=True))
    assert payloads(deep) == inner
    # every inner message but the last reports the wrapper start; the last the position after it
    assert [o for _, o in deep] == [1000, 1000, 1000 + len(data)]


def test_empty_wrapper_is_skipped_and_empty_codec_set_is_empty():
    assert build_message_set([], GZIP) == b""
    wrapper = Message(gzip_compress(b""), GZIP).to_entry()
    data = wrapper + build_message_set([b"after"])
    assert [(m.payload, o) for m, o in iter_messages(data)] == [(b"after", len(data))]


def test_nested_wrappers_expand_recursively():
    inner = build_message_set([b"x", b"y"], SNAPPY)
    outer = Message(compress(GZIP, inner), GZIP).to_entry()
    assert payloads(iter_messages(outer)) == [b"x", b"y"]


def test_gzip_matches_old_jdk_framing():
    data = gzip_compress(b"hello")
    assert data[:10] == bytes.fromhex("1f8b0800000000000000")
    assert data[10:-8] == bytes.fromhex("cb48cdc9c90700")
    assert gzip.decompress(data) == b"hello"


def test_gzip_reader_accepts_any_member_and_concatenation():
    data = gzip.compress(b"abc", mtime=123) + gzip.compress(b"def")
    assert decompress(GZIP, data) == b"abcdef"


def test_snappy_xerial_framing_and_32k_blocks():
    raw = bytes(range(256)) * 300  # 76800 bytes -> 3 blocks
    framed = snappy_compress(raw)
    assert framed[:16] == b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
    pos, blocks = 16, []
    while pos < len(framed):
        (n,) = struct.unpack_from(">i", framed, pos)
        blocks.append(snappy.uncompress(framed[pos + 4 : pos + 4 + n]))
        pos += 4 + n
    assert [len(b) for b in blocks] == [32768, 32768, 11264]
    assert decompress(SNAPPY, framed) == raw


def test_snappy_reader_accepts_raw_block():
    assert decompress(SNAPPY, snappy.compress(b"raw block")) == b"raw block"


def test_partial_trailing_entry_is_dropped():
    data = build_message_set([b"a", b"b"])
    cut = data[:-3]
    assert payloads(iter_messages(cut)) == [b"a"]
    assert ByteBufferMessageSet(cut).valid_bytes == 11


def test_fewer_than_four_bytes_ends_iteration_even_first():
    assert list(iter_messages(b"\x00\x00")) == []


def test_partial_or_negative_first_entry_is_an_error():
    data = build_message_set([b"abcdef"])
    with pytest.raises(InvalidMessageSizeError):
        list(iter_messages(data[:-1]))
    with pytest.raises(InvalidMessageSizeError):
        list(iter_messages(build_message_set([b"a"]) + struct.pack(">i", -5) + b"xxxxxx"))


def test_crc_mismatch_raises():
    data = bytearray(build_message_set([b"hello"]))
    data[-1] ^= 0xFF
    with pytest.raises(InvalidMessageError):
        list(iter_messages(bytes(data)))


def test_validate_walks_a_megabyte_and_counts_deep():
    messages = [bytes([i % 256]) * 100 for i in range(9000)]
    data = build_message_set(messages)
    assert FORMAT07.validate(data, 1000000) == (len(data), 9000)
    mixed = data + build_message_set(messages[:10], GZIP) + build_message_set(messages[:5], SNAPPY)
    assert FORMAT07.validate(mixed)[1] == 9015


def test_validate_trims_partial_tail_and_rejects_bad_sets():
    data = build_message_set([b"a", b"b"])
    assert FORMAT07.validate(data + b"\x00\x00\x00\x20abc") == (len(data), 2)
    with pytest.raises(InvalidMessageSizeError):
        FORMAT07.validate(b"\x00\x00\x10\x00" + b"x" * 10)
    corrupt = bytearray(data)
    corrupt[-1] ^= 1
    with pytest.raises(InvalidMessageError):
        FORMAT07.validate(bytes(corrupt))
    inner_corrupt = bytearray(encode_entries([b"inner"]))
    inner_corrupt[-1] ^= 1
    with pytest.raises(InvalidMessageError):
        FORMAT07.validate(Message(compress(GZIP, bytes(inner_corrupt)), GZIP).to_entry())


def test_validate_size_limit_applies_to_top_level_payloads():
    big = build_message_set([b"x" * 101])
    with pytest.raises(MessageSizeTooLargeError):
        FORMAT07.validate(big, 100)
    # a compressed wrapper is measured by its compressed payload, not the inner messages
    assert FORMAT07.validate(build_message_set([b"x" * 1000], GZIP), 100)[1] == 1


def test_oversize_wins_over_a_later_crc_error():
    corrupt = bytearray(build_message_set([b"y"]))
    corrupt[-1] ^= 1
    with pytest.raises(MessageSizeTooLargeError):
        FORMAT07.validate(bytes(corrupt) + build_message_set([b"x" * 200]), 100)


def test_recover_valid_prefix():
    data = build_message_set([b"a", b"bb", b"ccc"])
    assert FORMAT07.valid_prefix(data) == len(data)
    assert FORMAT07.valid_prefix(data + b"\x00\x00") == len(data)
    assert FORMAT07.valid_prefix(data[:-1]) == 23
    corrupt = bytearray(data)
    corrupt[15] ^= 1  # payload of the second message
    assert FORMAT07.valid_prefix(bytes(corrupt)) == 11
    assert FORMAT07.valid_prefix(data + b"\x00\x00\x00\x03abc") == len(data)
    assert FORMAT07.valid_prefix(data + b"\x00\x00\x00\x06\x07\x00\x00\x00\x00\x00") == len(data)


def test_message_equality_and_round_trip():
    m = Message(b"payload", GZIP)
    assert Message.from_bytes(m.to_bytes()) == m
    assert m != Message(b"payload")
    assert ByteBufferMessageSet.of([b"a", b"b"], SNAPPY).size_in_bytes > 0
    assert len(ByteBufferMessageSet.of([b"a", b"b"], SNAPPY)) == 2


def test_messages_go_into_a_set_as_they_are():
    wrapper = Message(compress(GZIP, encode_entries([b"a", b"b"])), GZIP)
    data = build_message_set([wrapper, b"plain"])
    assert data == wrapper.to_entry() + Message(b"plain").to_entry()
    assert payloads(iter_messages(data)) == [b"a", b"b", b"plain"]

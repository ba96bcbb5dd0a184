"""Bounded inflation: a wrapper that inflates past its cap is refused before the rest of it is inflated,
on the produce path of both lines and in the readers; valid sets read exactly as before."""

import struct
import tracemalloc

import pytest
import snappy

from tests.support.bombs import bomb_set07, bomb_set08
from zkafka.consumer.stream08 import decode_chunk08
from zkafka.errors import InvalidMessageError, MessageSizeTooLargeError
from zkafka.records import format07, format08
from zkafka.records.compression import (
    DEFAULT_MAX_INFLATED,
    GZIP,
    LZ4,
    SNAPPY,
    compress,
    decompress,
    snappy_inflated_length,
)
from zkafka.records.format08 import FORMAT08, assign_offsets, build_message_set, iter_messages

CODECS = pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4], ids=["gzip", "snappy", "lz4"])
CODECS07 = pytest.mark.parametrize("codec", [GZIP, SNAPPY], ids=["gzip", "snappy"])
MAX = 100_000


def peak_bytes(call) -> tuple[int, Exception | None]:
    """The peak of Python allocations during ``call`` and what it raised."""
    tracemalloc.start()
    try:
        call()
        error = None
    except Exception as exc:  # the caller asserts on it
        error = exc
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak, error


@CODECS
def test_decompress_stops_one_byte_past_the_limit(codec):
    data = bytes(range(256)) * 400
    packed = compress(codec, data)
    assert decompress(codec, packed, len(data)) == data
    with pytest.raises(MessageSizeTooLargeError, match=f"inflates past the limit of {len(data) - 1} bytes"):
        decompress(codec, packed, len(data) - 1)


# Deflate inflates up to ~1000x, snappy up to ~21x, lz4 up to ~255x: bombs under MAX that inflate far.
@pytest.mark.parametrize(
    "codec, ratio", [(GZIP, 500), (SNAPPY, 20), (LZ4, 200)], ids=["gzip", "snappy", "lz4"]
)
def test_a_bomb_is_refused_with_memory_bounded_by_the_limit(codec, ratio):
    bomb = bomb_set08(ratio * MAX, codec)
    assert len(bomb) < MAX
    peak, error = peak_bytes(lambda: FORMAT08.validate(bomb, MAX))
    assert isinstance(error, MessageSizeTooLargeError)
    assert "compressed message at position 0 inflates past the limit of 100000 bytes" in str(error)
    assert peak < 2 * len(bomb) + 3 * MAX  # inflating all of it would take ratio * MAX


def test_a_snappy_block_declaring_more_than_snappy_can_hold_is_corrupt():
    forged = b"\xff\xff\xff\xff\x0f" + b"\x00abc"  # claims 4 GiB from 4 bytes
    with pytest.raises(InvalidMessageError, match="a block of 9 bytes declares 4294967295 inflated"):
        decompress(SNAPPY, forged)
    assert snappy_inflated_length(snappy.compress(bytes(5000))) == 5000


def test_a_snappy_block_over_the_room_left_is_refused_from_its_header():
    block = snappy.compress(bytes(30_000))
    framed = compress(SNAPPY, bytes(30_000))
    assert decompress(SNAPPY, block, 30_000) == bytes(30_000)
    with pytest.raises(MessageSizeTooLargeError):
        decompress(SNAPPY, framed + framed[16:], 50_000)  # two blocks: the second does not fit


@CODECS
def test_nested_wrappers_share_one_budget(codec):
    inner_wrapper = bomb_set08(60_000, codec)  # fits alone
    outer = build_message_set([(None, b"x")], codec)  # one wrapper ...
    nested = format08.encode_entry(
        0, format08.encode_message(None, compress(codec, inner_wrapper + inner_wrapper), codec)
    )
    assert list(iter_messages(outer, max_inflated=MAX))
    with pytest.raises(MessageSizeTooLargeError):
        FORMAT08.validate(nested, MAX)
    with pytest.raises(MessageSizeTooLargeError):
        list(iter_messages(nested, max_inflated=MAX))
    assert len(list(iter_messages(nested, max_inflated=3 * MAX))) == 2


@CODECS
def test_the_leader_refuses_a_set_whose_messages_inflate_past_the_limit_together(codec):
    plain = build_message_set([(None, bytes(30_000))])
    wrapper = build_message_set([(None, bytes(30_000))], codec)
    assert FORMAT08.validate(plain + wrapper, 50_000).count == 2
    assert assign_offsets(plain + wrapper, 0, 70_000).count == 2
    with pytest.raises(MessageSizeTooLargeError, match="over the limit of 50000"):
        assign_offsets(plain + wrapper, 0, 50_000)  # the one wrapper the leader would write holds both


@CODECS07
def test_the_07_line_keeps_accepting_what_inflates_past_max_message_size(codec):
    payloads = [bytes(1000)] * 100
    data = format07.build_message_set(payloads, codec)
    assert format07.FORMAT07.validate(data, 10_000).count == 100  # 0.7 bounds top-level payloads only
    bomb = bomb_set07(DEFAULT_MAX_INFLATED + 1, codec) if codec == GZIP else None
    if bomb is not None:
        with pytest.raises(MessageSizeTooLargeError):
            format07.FORMAT07.validate(bomb, 1_000_000)


@CODECS
def test_readers_stop_at_the_bomb_and_keep_what_came_before(codec):
    good = build_message_set([(None, b"a"), (None, b"b")])
    bomb = bomb_set08(50 * MAX, codec, offset=2)
    after = format08.encode_entry(3, format08.encode_message(None, b"c"))
    items, error, resume, next_offset = decode_chunk08(good + bomb + after, 0, "t", 0, 0, MAX)
    assert [m.value for m in items] == [b"a", b"b"]
    assert isinstance(error, MessageSizeTooLargeError) and str(error).startswith("t:0: compressed message")
    assert (resume, next_offset) == (len(good) + len(bomb), 3)
    items, error, _, _ = decode_chunk08(good + bomb + after, 0, "t", 0, resume, MAX)
    assert [m.value for m in items] == [b"c"] and error is None
    with pytest.raises(MessageSizeTooLargeError):
        list(format07.iter_messages(bomb_set07(DEFAULT_MAX_INFLATED + 1)))


def test_a_bomb_of_a_gigabyte_is_refused_without_inflating_it():
    import resource

    bomb = bomb_set08(1 << 30)
    assert len(bomb) < 1_100_000  # it fits under the default message.max.bytes
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(MessageSizeTooLargeError):
        FORMAT08.validate(bomb, 1_000_012)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_kib < 256 << 10  # far below a GiB
    assert struct.unpack_from(">q", bomb)[0] == 0

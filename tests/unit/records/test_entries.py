"""The entry walker's own contract, the same for both lines: spans, where a bad entry is and where to go on."""

import struct

import pytest

from zkafka.errors import InvalidMessageError, InvalidMessageSizeError, MessageSizeTooLargeError
from zkafka.records import format08
from zkafka.records.entries import check_sizes, entry_size, spans, walk
from zkafka.records.format07 import FORMAT07
from zkafka.records.format08 import FORMAT08
from zkafka.records.message07 import build_message_set


def corrupt_last_byte(data: bytes) -> bytes:
    return data[:-1] + bytes([data[-1] ^ 0xFF])


@pytest.mark.parametrize(
    "fmt, build",
    [
        (FORMAT07, lambda ps: build_message_set(ps)),
        (FORMAT08, lambda ps: format08.build_message_set([(None, p) for p in ps])),
    ],
)
def test_a_crc_error_says_where_the_entry_is_and_where_reading_goes_on(fmt, build):
    good, bad, after = build([b"one"]), corrupt_last_byte(build([b"two"])), build([b"three"])
    data = good + bad + after
    assert [(pos, end) for pos, end, *_ in walk(data, fmt, len(good) + len(bad))] == [
        (len(good) + len(bad), len(data))
    ]
    with pytest.raises(InvalidMessageError) as caught:
        list(walk(data, fmt))
    assert caught.value.position == len(good) and caught.value.resume == len(good) + len(bad)
    assert fmt.valid_prefix(data) == len(good)
    assert list(fmt.spans(data)) == [
        (0, len(good)),
        (len(good), len(bad)),
        (len(good) + len(bad), len(after)),
    ]


def test_the_body_is_what_the_crc_covers():
    [(_, _, _, _, _, body07)] = walk(build_message_set([b"payload"]), FORMAT07)
    assert body07 == b"payload"
    [(_, _, _, _, _, body08)] = walk(format08.build_message_set([(b"k", b"v")]), FORMAT08)
    assert body08 == b"\x00\x00" + struct.pack(">i", 1) + b"k" + struct.pack(">i", 1) + b"v"


def test_a_bad_length_cannot_be_resumed_after():
    data = build_message_set([b"a"]) + b"\xff\xff\xff\xff"
    with pytest.raises(InvalidMessageSizeError) as caught:
        list(walk(data, FORMAT07, base=1000))
    assert caught.value.position == 11 and caught.value.resume is None and "offset 1011" in str(caught.value)
    with pytest.raises(InvalidMessageSizeError):
        list(spans(data, FORMAT07, strict=True))
    assert list(spans(data, FORMAT07)) == [(0, 11)]


def test_entry_size_reads_only_the_length():
    data = build_message_set([b"p" * 100])
    assert entry_size(data[:4], FORMAT07) == 110 and entry_size(data[:3], FORMAT07) is None
    data08 = format08.build_message_set([(None, b"p")])
    assert entry_size(data08[:12], FORMAT08) == len(data08) and entry_size(data08[:11], FORMAT08) is None


def test_size_limits_are_the_lines_own():
    # 0.7 limits the payload, 0.8 the whole entry with its offset and size
    check_sizes(build_message_set([b"x" * 100]), FORMAT07, 100)
    with pytest.raises(MessageSizeTooLargeError, match="payload of 101 bytes"):
        check_sizes(build_message_set([b"x"] + [b"x" * 101]), FORMAT07, 100)
    data08 = format08.build_message_set([(None, b"x" * 100)])
    check_sizes(data08, FORMAT08, len(data08))
    with pytest.raises(MessageSizeTooLargeError, match=f"{len(data08)} bytes"):
        check_sizes(data08, FORMAT08, len(data08) - 1)

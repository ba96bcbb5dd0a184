"""Zstandard (codec 4, KIP-110: record batches of magic 2 only) in the standard zstd frame format.

Kafka 2.1+ writes one frame with zstd-jni's ``ZstdOutputStream`` and reads the stream with its
``ZstdInputStream``, frames back to back. The codec is the reference zstd library through python-zstandard;
the checks of the frame structure (to tell a payload cut short from a whole one, which the binding's
streaming reader does not) are here.

Inflating is bounded: with ``limit`` it stops as soon as the output would pass that many bytes and raises
MessageSizeTooLargeError, whatever content size a frame announces (the binding's one-shot ``decompress``
would allocate that size first). The decoder's window is capped as well (``max_window``): a frame whose
header asks for a larger one (a single-segment frame's window is its content size) raises
MessageSizeTooLargeError before anything is allocated for it.
"""

from __future__ import annotations

import io
import struct
from typing import Any

import zstandard

from zkafka.errors import InvalidMessageError, MessageSizeTooLargeError

ZSTD_MAGIC = 0xFD2FB528
SKIPPABLE_MAGIC = 0x184D2A50  # ...5F: the low four bits are free
LEVEL = 3  # zstd-jni's and librdkafka's default level
_UINT32_LE = struct.Struct("<I")
_READ_SIZE = 64 * 1024
_MIN_WINDOW = 8 * 1024 * 1024  # level 19 streaming writes 8 MiB windows; cap no real producer's frame
_MAX_WINDOW = 128 * 1024 * 1024  # zstd's and zstd-jni's default limit (window log 27)
_FCS_SIZES = (0, 2, 4, 8)  # Frame_Content_Size bytes by the descriptor's top two bits (0: 1 if single segment)
_DICT_ID_SIZES = (0, 1, 2, 4)


def zstd_compress(data: Any, level: int = LEVEL) -> bytes:
    """One zstd frame of ``data`` (content size in its header, no checksum)."""
    return zstandard.ZstdCompressor(level=level).compress(bytes(data))


def max_window(limit: int | None) -> int:
    """The largest window a decoder accepts for output capped at ``limit`` bytes."""
    if limit is None:
        return _MAX_WINDOW
    return min(_MAX_WINDOW, max(_MIN_WINDOW, 1 << max(limit - 1, 1).bit_length()))


def zstd_decompress(data: Any, limit: int | None = None) -> bytes:
    """Every frame of ``data`` inflated; with ``limit``, no more than that many bytes of output
    (MessageSizeTooLargeError once it would pass them). A payload that is not whole frames raises
    InvalidMessageError."""
    data = bytes(data)
    window = max_window(limit)
    check_frames(data, window)
    decoder = zstandard.ZstdDecompressor(max_window_size=window)
    reader = decoder.stream_reader(io.BytesIO(data), read_size=_READ_SIZE, read_across_frames=True)
    out: list[bytes] = []
    total = 0
    try:
        while True:
            # One byte more than the room left tells "over the limit" from "exactly at it".
            want = _READ_SIZE if limit is None else min(_READ_SIZE, limit - total + 1)
            piece = reader.read(want)
            if not piece:
                return b"".join(out)
            total += len(piece)
            if limit is not None and total > limit:
                raise MessageSizeTooLargeError(f"zstd payload inflates past the limit of {limit} bytes")
            out.append(piece)
    except zstandard.ZstdError as exc:
        raise InvalidMessageError(f"corrupt zstd payload: {exc}") from None


def check_frames(data: bytes, window: int = _MAX_WINDOW) -> None:
    """InvalidMessageError unless ``data`` is one or more whole zstd (or skippable) frames, reading only
    the frame and block headers; MessageSizeTooLargeError for a frame whose window is over ``window``."""
    if not data:
        raise _corrupt("no frame")
    pos = 0
    while pos < len(data):
        pos = _frame_end(data, pos, window)


def _frame_end(data: bytes, pos: int, window: int) -> int:
    magic = _uint32(data, pos)
    if magic & 0xFFFFFFF0 == SKIPPABLE_MAGIC:
        end = pos + 8 + _uint32(data, pos + 4)
        if end > len(data):
            raise _corrupt(f"skippable frame at {pos} runs past the end")
        return end
    if magic != ZSTD_MAGIC:
        raise _corrupt(f"bad magic {magic:#010x} at {pos}")
    descriptor = _byte(data, pos + 4)
    single_segment = bool(descriptor & 0x20)
    fcs = _FCS_SIZES[descriptor >> 6] or int(single_segment)
    at = pos + 5 + (not single_segment) + _DICT_ID_SIZES[descriptor & 0x03] + fcs
    needed = _window(data, pos + 5, at - fcs, fcs, single_segment)
    if needed > window:
        raise MessageSizeTooLargeError(f"zstd frame at {pos} needs a window of {needed} bytes, over {window}")
    while True:
        header = _byte(data, at) | _byte(data, at + 1) << 8 | _byte(data, at + 2) << 16
        kind, size = (header >> 1) & 0x03, header >> 3
        if kind == 3:
            raise _corrupt(f"reserved block type at {at}")
        at += 3 + (1 if kind == 1 else size)
        if header & 1:
            end = at + 4 * bool(descriptor & 0x04)  # the content checksum
            if end > len(data):
                raise _corrupt("truncated frame")
            return end


def _window(data: bytes, descriptor_end: int, fcs_at: int, fcs: int, single_segment: bool) -> int:
    """The window a frame header asks for: its Window_Descriptor's, or a single segment's content size."""
    if not single_segment:
        exponent_mantissa = _byte(data, descriptor_end)
        base = 1 << (10 + (exponent_mantissa >> 3))
        return base + (base >> 3) * (exponent_mantissa & 0x07)
    if fcs_at + fcs > len(data):
        raise _corrupt("truncated frame")
    size = int.from_bytes(data[fcs_at : fcs_at + fcs], "little")
    return size + 256 if fcs == 2 else size


def _uint32(data: bytes, pos: int) -> int:
    if pos + 4 > len(data):
        raise _corrupt("truncated frame")
    return _UINT32_LE.unpack_from(data, pos)[0]


def _byte(data: bytes, pos: int) -> int:
    if pos >= len(data):
        raise _corrupt("truncated frame")
    return data[pos]


def _corrupt(text: str) -> InvalidMessageError:
    return InvalidMessageError(f"corrupt zstd payload: {text}")

"""LZ4 (codec 3) in the framing of 0.8.2/0.9's ``KafkaLZ4BlockOutputStream``/``KafkaLZ4BlockInputStream``.

The frame is a subset of the LZ4 frame format: magic ``04 22 4d 18``, FLG, BD, a header checksum byte HC,
then blocks ``uint32 LE size`` (bit 31 set: stored uncompressed) + data (+ an xxh32 when FLG asks for block
checksums), then the end mark ``00 00 00 00``. Kafka computes HC over magic+FLG+BD, where the LZ4 spec says
FLG+BD only; a magic-0 message needs Kafka's value and 0.8.2/0.9 refuse the spec's. Only magic-1 messages
(0.10, KIP-57) and magic-2 record batches (0.11+; Kafka 2.2's ``CompressionType.LZ4`` still uses these
streams, with the spec's HC for every magic but 0) carry the spec's value: ``spec_checksum=True`` reads and
writes those, and reads as 0.10's reader does: a content size in the header is skipped (the HC covers it)
and a content checksum after the end mark is skipped unchecked.

The block codec is the reference LZ4 library through python-lz4 (``lz4.block``); the framing and xxh32 are
here. Reading a magic-0 frame follows 0.8.2's reader: version 1, independent blocks, no preset dictionary, no
content size, no content checksum, block maximum size 64 KiB to 4 MiB (BD 4-7), block checksums verified; any
other descriptor is refused. Block checksums use the pure-Python xxh32 here (~2-3 MB/s): no Kafka client
writes them, so only a foreign frame pays for it.
"""

from __future__ import annotations

import struct
from typing import Any

import lz4.block

from zkafka.errors import InvalidMessageError, MessageSizeTooLargeError

LZ4_MAGIC = b"\x04\x22\x4d\x18"
FLG_VERSION_1 = 0x40
FLG_BLOCK_INDEPENDENCE = 0x20
FLG_BLOCK_CHECKSUM = 0x10
FLG_CONTENT_SIZE = 0x08
FLG_CONTENT_CHECKSUM = 0x04
BD_64KB = 0x40  # block maximum size id 4: 64 KiB, the only one Kafka writes
INCOMPRESSIBLE = 0x80000000  # a block size's bit 31: the block is stored as is
END_MARK = b"\x00\x00\x00\x00"
HEADER_SIZE = 7

_UINT32_LE = struct.Struct("<I")
_MASK32 = 0xFFFFFFFF
_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393


def _rotl(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (32 - bits))) & _MASK32


def _lane(value: int, words: tuple[int, ...]) -> int:
    for word in words:
        value = (value + word * _P2) & _MASK32
        value = (((value << 13) | (value >> 19)) * _P1) & _MASK32
    return value


def xxh32(data: Any, seed: int = 0) -> int:
    """XXH32 of ``data`` (the hash of the LZ4 frame format's header and block checksums)."""
    data = memoryview(data).cast("B")
    size = len(data)
    pos = 0
    if size >= 16:
        pos = size // 16 * 16
        words = struct.unpack(f"<{pos // 4}I", data[:pos])
        starts = (
            (seed + _P1 + _P2) & _MASK32,
            (seed + _P2) & _MASK32,
            seed & _MASK32,
            (seed - _P1) & _MASK32,
        )
        lanes = [
            _lane(start, words[i::4]) for i, start in enumerate(starts)
        ]  # stripes of 4 words, 1 per lane
        acc = _rotl(lanes[0], 1) + _rotl(lanes[1], 7) + _rotl(lanes[2], 12) + _rotl(lanes[3], 18)
    else:
        acc = seed + _P5
    acc = (acc + size) & _MASK32
    while pos + 4 <= size:
        (word,) = _UINT32_LE.unpack_from(data, pos)
        acc = (_rotl((acc + word * _P3) & _MASK32, 17) * _P4) & _MASK32
        pos += 4
    for byte in data[pos:]:
        acc = (_rotl((acc + byte * _P5) & _MASK32, 11) * _P1) & _MASK32
    acc = ((acc ^ (acc >> 15)) * _P2) & _MASK32
    acc = ((acc ^ (acc >> 13)) * _P3) & _MASK32
    return acc ^ (acc >> 16)


def header_checksum(descriptor: bytes, spec_checksum: bool = False) -> int:
    """HC of a frame whose first six bytes are ``descriptor`` (magic, FLG, BD): Kafka's (over all six) or,
    with ``spec_checksum``, the LZ4 spec's (over FLG and BD)."""
    return (xxh32(descriptor if not spec_checksum else descriptor[4:]) >> 8) & 0xFF


def _frame_header(spec_checksum: bool) -> bytes:
    descriptor = LZ4_MAGIC + bytes([FLG_VERSION_1 | FLG_BLOCK_INDEPENDENCE, BD_64KB])
    return descriptor + bytes([header_checksum(descriptor, spec_checksum)])


_KAFKA_HEADER = _frame_header(False)
_SPEC_HEADER = _frame_header(True)
BLOCK_SIZE = 64 * 1024


def lz4_compress(data: Any, spec_checksum: bool = False) -> bytes:
    """``data`` framed as ``KafkaLZ4BlockOutputStream`` writes it: 64 KiB independent blocks, each stored as
    is when compressing does not make it smaller, no checksums but HC (Kafka's, or the spec's with
    ``spec_checksum``)."""
    view = memoryview(data).cast("B")
    parts = [_SPEC_HEADER if spec_checksum else _KAFKA_HEADER]
    for start in range(0, len(view), BLOCK_SIZE):
        chunk = view[start : start + BLOCK_SIZE]
        block = lz4.block.compress(chunk, mode="default", store_size=False)
        if len(block) >= len(chunk):
            parts += [_UINT32_LE.pack(len(chunk) | INCOMPRESSIBLE), bytes(chunk)]
        else:
            parts += [_UINT32_LE.pack(len(block)), block]
    parts.append(END_MARK)
    return b"".join(parts)


def _corrupt(text: str) -> InvalidMessageError:
    return InvalidMessageError(f"corrupt lz4 payload: {text}")


def _read_header(data: memoryview, spec_checksum: bool) -> tuple[int, int, int]:
    """``(header size, block maximum size, FLG)`` of a checked frame header."""
    if len(data) < HEADER_SIZE:
        raise _corrupt(f"truncated frame header ({len(data)} bytes)")
    if bytes(data[:4]) != LZ4_MAGIC:
        raise _corrupt(f"bad magic {bytes(data[:4]).hex()} (expected {LZ4_MAGIC.hex()})")
    flg, bd = data[4], data[5]
    if flg >> 6 != 1:
        raise _corrupt(f"frame version {flg >> 6} is unsupported")
    if not flg & FLG_BLOCK_INDEPENDENCE:
        raise _corrupt("dependent blocks are unsupported")
    unsupported = 0x03 if spec_checksum else 0x0F  # 0.10's reader skips a content size and checksum
    if flg & unsupported:
        raise _corrupt(
            f"FLG {flg:#04x}: content size, content checksum and preset dictionary are unsupported"
        )
    if bd & 0x8F or not 4 <= bd >> 4 <= 7:
        raise _corrupt(f"bad block descriptor BD {bd:#04x}")
    size = HEADER_SIZE + 8 * bool(flg & FLG_CONTENT_SIZE)
    if len(data) < size:
        raise _corrupt(f"truncated frame header ({len(data)} bytes)")
    expected = header_checksum(bytes(data[: size - 1]), spec_checksum)
    if data[size - 1] != expected:
        kind = "the LZ4 spec's" if spec_checksum else "Kafka's"
        raise _corrupt(f"frame descriptor checksum {data[size - 1]:#04x} is not {kind} {expected:#04x}")
    return size, 1 << (2 * (bd >> 4) + 8), flg


def lz4_decompress(data: Any, limit: int | None = None, spec_checksum: bool = False) -> bytes:
    """Read a frame as ``KafkaLZ4BlockInputStream`` does (see the module docstring); with ``limit``, refuse
    (MessageSizeTooLargeError) to produce more than that many bytes: blocks are inflated one at a time, each
    at most the block maximum size, and reading stops at the first that passes the limit."""
    view = memoryview(data).cast("B")
    pos, max_block, flg = _read_header(view, spec_checksum)
    block_checksums = bool(flg & FLG_BLOCK_CHECKSUM)
    out: list[bytes] = []
    total = 0
    while True:
        if len(view) - pos < 4:
            raise _corrupt("truncated block size (no end mark)")
        (size,) = _UINT32_LE.unpack_from(view, pos)
        pos += 4
        if size == 0:
            if flg & FLG_CONTENT_CHECKSUM and len(view) - pos < 4:
                raise _corrupt("truncated content checksum")
            return b"".join(out)
        stored = bool(size & INCOMPRESSIBLE)
        size &= ~INCOMPRESSIBLE
        if size > max_block:
            raise _corrupt(f"block of {size} bytes exceeds the maximum of {max_block}")
        if len(view) - pos < size + 4 * block_checksums:
            raise _corrupt(f"truncated block at position {pos - 4}")
        block = view[pos : pos + size]
        pos += size
        if block_checksums:
            (checksum,) = _UINT32_LE.unpack_from(view, pos)
            pos += 4
            if xxh32(block) != checksum:
                raise _corrupt(f"block checksum mismatch at position {pos - size - 8}")
        if stored:
            piece = bytes(block)
        else:
            try:
                piece = lz4.block.decompress(block, uncompressed_size=max_block)
            except lz4.block.LZ4BlockError as exc:
                raise _corrupt(
                    f"bad block at position {pos - size - 4 - 4 * block_checksums}: {exc}"
                ) from None
        total += len(piece)
        if limit is not None and total > limit:
            raise MessageSizeTooLargeError(f"lz4 payload inflates past the limit of {limit} bytes")
        out.append(piece)

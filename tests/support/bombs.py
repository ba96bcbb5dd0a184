"""Compression bombs: valid message sets whose one wrapper inflates to far more than it takes on the wire.

The inner set is one message whose value is ``size`` zero bytes; it is compressed a chunk at a time, so
building a bomb of hundreds of megabytes never holds them in memory. The results are valid by every rule but
size: CRCs, framing and lengths are right, so a reader that inflates everything accepts them.
"""

from __future__ import annotations

import struct
import zlib

import lz4.block
import snappy
from crc32c import crc32c

from zkafka.records import format08
from zkafka.records.compression import _GZIP_HEADER, _SNAPPY_HEADER, GZIP, LZ4, SNAPPY, SNAPPY_BLOCK_SIZE
from zkafka.records.kafka_lz4 import BLOCK_SIZE as LZ4_BLOCK_SIZE
from zkafka.records.kafka_lz4 import END_MARK, lz4_compress
from zkafka.records.message07 import Message

_CHUNK = 1 << 20
_ZEROS = bytes(_CHUNK)


def _zeros(count: int):
    while count > 0:
        step = min(count, _CHUNK)
        yield memoryview(_ZEROS)[:step]
        count -= step


def crc32_with_zeros(prefix: bytes, count: int) -> int:
    """``zlib.crc32(prefix + bytes(count))`` without building it."""
    crc = zlib.crc32(prefix)
    for chunk in _zeros(count):
        crc = zlib.crc32(chunk, crc)
    return crc


def compressed_zeros(codec: int, prefix: bytes, count: int) -> bytes:
    """``compress(codec, prefix + bytes(count))`` in the lines' framings, built a chunk at a time."""
    if codec == GZIP:
        # After a full flush deflate starts afresh, so every whole chunk of zeros compresses the same.
        deflater = zlib.compressobj(9, zlib.DEFLATED, -15, 9, 0)
        parts = [_GZIP_HEADER, deflater.compress(prefix), deflater.flush(zlib.Z_FULL_FLUSH)]
        whole, tail = divmod(count, _CHUNK)
        if whole:
            chunk = deflater.compress(_ZEROS) + deflater.flush(zlib.Z_FULL_FLUSH)
            parts.append(chunk * whole)
        parts.append(deflater.compress(_ZEROS[:tail]) + deflater.flush())
        crc = crc32_with_zeros(prefix, count)
        parts.append(struct.pack("<II", crc, (len(prefix) + count) & 0xFFFFFFFF))
        return b"".join(parts)
    if codec == SNAPPY:
        head = prefix + bytes(min(count, -len(prefix) % SNAPPY_BLOCK_SIZE))
        parts = [_SNAPPY_HEADER]
        for start in range(0, len(head), SNAPPY_BLOCK_SIZE):
            block = snappy.compress(head[start : start + SNAPPY_BLOCK_SIZE])
            parts += [struct.pack(">i", len(block)), block]
        rest = count - (len(head) - len(prefix))
        full = snappy.compress(bytes(SNAPPY_BLOCK_SIZE))
        parts += [struct.pack(">i", len(full)), full] * (rest // SNAPPY_BLOCK_SIZE)
        if rest % SNAPPY_BLOCK_SIZE:
            block = snappy.compress(bytes(rest % SNAPPY_BLOCK_SIZE))
            parts += [struct.pack(">i", len(block)), block]
        return b"".join(parts)
    if codec == LZ4:
        head = prefix + bytes(min(count, -len(prefix) % LZ4_BLOCK_SIZE))
        parts = [lz4_compress(head)[: -len(END_MARK)]]  # the header and the blocks of the head
        rest = count - (len(head) - len(prefix))
        for size, times in ((LZ4_BLOCK_SIZE, rest // LZ4_BLOCK_SIZE), (rest % LZ4_BLOCK_SIZE, 1)):
            if size and times:
                block = lz4.block.compress(bytes(size), store_size=False)
                parts += [struct.pack("<I", len(block)), block] * times
        parts.append(END_MARK)
        return b"".join(parts)
    raise ValueError(f"no bomb for codec {codec}")


def bomb_set08(inflated: int, codec: int = GZIP, offset: int = 0) -> bytes:
    """A 0.8 message set of one wrapper whose inner set (one message of zeros) takes ``inflated`` bytes."""
    value_size = inflated - format08.LOG_OVERHEAD - format08.MIN_MESSAGE_SIZE
    body = struct.pack(">BBii", format08.MAGIC, 0, -1, value_size)
    crc = crc32_with_zeros(body, value_size)
    prefix = struct.pack(">qiI", offset, 4 + len(body) + value_size, crc) + body
    payload = compressed_zeros(codec, prefix, value_size)
    return format08.encode_entry(offset, format08.encode_message(None, payload, codec))


def bomb_set07(inflated: int, codec: int = GZIP) -> bytes:
    """A 0.7 message set of one wrapper whose inner set (one message of zeros) takes ``inflated`` bytes."""
    payload_size = inflated - 4 - 6
    prefix = struct.pack(">iBBI", 6 + payload_size, 1, 0, crc32_with_zeros(b"", payload_size))
    return Message(compressed_zeros(codec, prefix, payload_size), codec).to_entry()


def bomb_batch(inflated: int, codec: int = GZIP) -> bytes:
    """A record batch (magic 2) declaring one record whose compressed records are ``inflated`` zero bytes;
    its CRC-32C is right, so only the inflation cap refuses it."""
    after_crc = struct.pack(">hiqqqhii", codec, 0, 0, 0, -1, -1, -1, 1) + compressed_zeros(codec, b"", inflated)
    prefix = struct.pack(">qiib", 0, 4 + 1 + 4 + len(after_crc), -1, 2)
    return prefix + struct.pack(">I", crc32c(after_crc)) + after_crc

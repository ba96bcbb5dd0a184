"""Hostile 0.8 request frames, generated deterministically from a seed: pure, no sockets.

``base_frames`` builds one well-formed request of every (api_key, version) in ``v08.SCHEMAS`` from a sample
value per field name (produces carry message sets the broker must refuse: a CRC that cannot be repaired by a
few bit flips, gzip and snappy bombs; from Produce v2 record batches magic 0 cannot hold or a client may not
write, each with a right CRC-32C, and a batch bomb). ``fuzz_frames`` mutates them: truncations at every field boundary,
array counts set huge or negative, length fields negative or past the end, integer fields set to extremes,
random bit flips, size prefixes that lie; plus unknown keys and versions and random bytes. Each frame says
what the broker must do with it: ``CLOSE`` (the frame cannot be a request), ``ANSWER`` (with these error
codes per partition), or ``ANY`` (a mutation that may still be a request: answered, closed or parked).
"""

from __future__ import annotations

import random
import struct
from collections.abc import Iterator
from typing import Any, NamedTuple

from crc32c import crc32c

from tests.support.bombs import bomb_batch, bomb_set08
from zkafka.protocol import v08
from zkafka.protocol.api_keys import API_VERSIONS
from zkafka.protocol.flexible import CompactArray, _CompactBytes, _CompactString, unsigned_varint_size
from zkafka.protocol.schema import Schema
from zkafka.protocol.types import Array, Fixed, _Bytes, _MessageSet, _String
from zkafka.records import format08
from zkafka.records.compression import GZIP, LZ4, SNAPPY, ZSTD
from zkafka.records.default_record import Header, Record
from zkafka.records.record_batch import build_batch

CLOSE, ANSWER, ANY = "close", "answer", "any"
VICTIM = "victim"  # the topic every produce frame aims at: nothing may ever be appended to it
ABSENT = "fuzz-absent"  # the topic of controller requests: a forged epoch may make the broker obey them
CONTROLLER_APIS = (4, 5, 6, 7)  # LeaderAndIsr, StopReplica, UpdateMetadata, ControlledShutdown
TOPIC_CHANGING_APIS = (21, 33)  # DeleteRecords, AlterConfigs: a mutated offset or key could take effect

# Sample values by field name; broker ids name a broker that does not exist, epochs are stale.
_INTS = {
    "acks": 1,
    "timeout_ms": 1000,
    "replica_id": -1,
    "max_wait_ms": 0,
    "min_bytes": 0,
    "max_bytes": 4096,
    "time": -1,
    "max_num_offsets": 2,
    "offset": 1,
    "generation_id": 5,
    "session_timeout": 6000,
    "rebalance_timeout": 6000,
    "timestamp": -1,
    "retention_time_ms": -1,
    "controller_id": 77,
    "broker_id": 77,
    "leader": 77,
    "node_id": 77,
    "isr": 77,
    "replicas": 77,
    "port": 1,
    "allow_auto_topic_creation": 0,  # Metadata v4+: the victim topic is asked for, never made by it
    "num_partitions": 0,  # CreateTopics / CreatePartitions: counts refused (37) unless a mutation makes them
    "count": 0,  # legal; a huge one is refused before any assignment is built (admin.assignment)
}
_STRINGS = {
    "group_id": "fuzz-group",
    "group_ids": "fuzz-group",
    "member_id": "fuzz-member",  # unknown to the coordinator: no join ever waits for a rebalance
    "group_instance_id": "fuzz-instance",  # JoinGroup v5 etc.: a static member no group knows
    "coordinator_keys": "fuzz-group",  # FindCoordinator v4
    "host": "127.0.0.1",
    "protocol_type": "consumer",
    "protocol_name": "range",
}


class Frame(NamedTuple):
    """One frame to send on its own connection: bytes, what must happen, and how it was made."""

    data: bytes
    expect: str
    name: str
    errors: frozenset = frozenset()  # ANSWER: the produce error codes every partition must carry
    half_close: bool = False  # shut the write side after sending (a frame shorter than its size prefix)


class Field(NamedTuple):
    pos: int  # in the frame, size prefix included
    size: int
    kind: str  # "int", "count", "string", "bytes", "set", "varint" (a flexible length or tag count)


def corrupt_set() -> bytes:
    """A set whose one message has every CRC bit inverted: no few bit flips make it valid."""
    data = bytearray(format08.build_message_set([(b"k", b"hostile")]))
    struct.pack_into(">I", data, 12, struct.unpack_from(">I", data, 12)[0] ^ 0xFFFFFFFF)
    return bytes(data)


def refused_batches() -> list[tuple[str, bytes, int]]:
    """``(label, batch, error)``: record batches a v0 log refuses, each valid but for what it is refused for."""
    records = [Record(0, 1, b"k", b"hostile"), Record(1, 2, None, b"hostile")]
    producer = {"producer_id": 9, "producer_epoch": 0, "base_sequence": 0}
    crc = bytearray(build_batch(records))
    struct.pack_into(">I", crc, 17, struct.unpack_from(">I", crc, 17)[0] ^ 0xFFFFFFFF)
    miscount = bytearray(build_batch(records))
    struct.pack_into(">i", miscount, 57, 3)  # count 3 over offsets 0..1 (the CRC-32C made right again)
    struct.pack_into(">I", miscount, 17, crc32c(bytes(miscount[21:])))
    return [
        ("batch corrupt crc", bytes(crc), 2),
        ("batch headers", build_batch([records[0]._replace(headers=(Header("h", b"v"),))]), 43),
        ("batch idempotent", build_batch(records, **producer), 43),
        ("batch transactional", build_batch(records, transactional=True, **producer), 43),
        ("batch control", build_batch(records, control=True), 87),
        ("batch miscount", bytes(miscount), 87),
        ("batch zstd", build_batch(records, compression=ZSTD), 76),
    ]


def sample(schema: Schema, message_set: bytes, topic: str = VICTIM) -> Any:
    """A value of ``schema`` with every array holding one item and fields set from the sample tables."""
    values = []
    for field, kind in schema.fields:
        values.append(_sample_field(field, kind, message_set, topic))
    return schema.record(*values)  # a flexible schema's tagged fields keep their defaults


def _sample_field(field: str, kind: Any, message_set: bytes, topic: str) -> Any:
    if isinstance(kind, Array | CompactArray):
        return [_sample_field(field, kind.item, message_set, topic)]
    if isinstance(kind, Schema):
        return sample(kind, message_set, topic)
    if isinstance(kind, _MessageSet):
        return message_set
    if isinstance(kind, _String | _CompactString):
        return topic if field in ("topic", "topics") else _STRINGS.get(field, "fuzz")
    if isinstance(kind, _Bytes | _CompactBytes):
        return b"fuzz"
    if isinstance(kind, Fixed):
        return _INTS.get(field, 0)
    raise TypeError(f"no sample for {field}: {kind!r}")


def layout(frame: bytes, api_key: int, api_version: int, body: Any) -> list[Field]:
    """Where each primitive field of ``frame`` (built by ``v08.encode_request``) sits."""
    fields = [Field(4, 2, "int"), Field(6, 2, "int"), Field(8, 4, "int")]
    pos = 12
    if v08.has_client_id(api_key, api_version):
        fields.append(Field(pos, 2, "string"))
        pos += 2 + struct.unpack_from(">h", frame, pos)[0]
    if v08.request_header_version(type(body)) == 2:
        fields.append(Field(pos, 1, "varint"))  # the header's empty tag buffer
        pos += 1
    _walk(body.SCHEMA, body, pos, fields)
    return fields


def _walk(kind: Any, value: Any, pos: int, out: list[Field]) -> int:
    if isinstance(kind, Schema):
        for field_type, item in zip(kind.types, value[: len(kind.types)], strict=True):
            pos = _walk(field_type, item, pos, out)
        if kind.flexible:  # an empty tag buffer
            out.append(Field(pos, 1, "varint"))
            pos += 1
        return pos
    if isinstance(kind, CompactArray):
        out.append(Field(pos, unsigned_varint_size(len(value) + 1), "varint"))
        pos += out[-1].size
        for item in value:
            pos = _walk(kind.item, item, pos, out)
        return pos
    if isinstance(kind, _CompactBytes):  # strings too: the length + 1, then the bytes
        data = value.encode("utf-8") if isinstance(value, str) else value
        out.append(Field(pos, unsigned_varint_size(len(data) + 1), "varint"))
        return pos + kind.size(value)
    if isinstance(kind, Array):
        out.append(Field(pos, kind.count.fmt.size, "count"))
        pos += kind.count.fmt.size
        for item in value:
            pos = _walk(kind.item, item, pos, out)
        return pos
    if isinstance(kind, Fixed):
        out.append(Field(pos, kind.fmt.size, "int"))
    elif isinstance(kind, _String):
        out.append(Field(pos, 2, "string"))
    elif isinstance(kind, _Bytes):
        out.append(Field(pos, 4, "bytes"))
    elif isinstance(kind, _MessageSet):
        out.append(Field(pos, 4, "set"))
    return pos + kind.size(value)


def base_frames(message_max_bytes: int) -> list[tuple[str, bytes, int, int, Any, str, frozenset]]:
    """``(name, frame, api_key, api_version, body, expect, errors)``: one request of every registered API and
    version; produces once with a corrupt set, (v0) with a gzip, a snappy and an lz4 bomb, (v2+) with each
    refused record batch and (v8) a batch bomb."""
    out = []
    bad = corrupt_set()
    batches = refused_batches()
    bombs = {
        "gzip bomb": bomb_set08(100 * message_max_bytes, GZIP),  # 100x message.max.bytes inflated
        "snappy bomb": bomb_set08(message_max_bytes * 9 // 10 * 20, SNAPPY),  # snappy's best is ~21x
        "lz4 bomb": bomb_set08(100 * message_max_bytes, LZ4),  # lz4's best is ~255x
    }
    for (api_key, api_version), (request_class, _) in sorted(v08.SCHEMAS.items()):
        variants = [("", bad, ANY, frozenset())]
        if request_class.__name__.startswith("Produce"):
            variants = [("corrupt crc", bad, ANSWER, frozenset({2}))]
            if api_version == 0:
                variants += [(name, bomb, ANSWER, frozenset({10})) for name, bomb in bombs.items()]
            if api_version >= 2:
                variants += [(name, batch, ANSWER, frozenset({code})) for name, batch, code in batches]
            if api_version == 8:
                variants.append(("batch bomb", bomb_batch(100 * message_max_bytes), ANSWER, frozenset({10})))
        for label, message_set, expect, errors in variants:
            topic = ABSENT if api_key in CONTROLLER_APIS + TOPIC_CHANGING_APIS else VICTIM
            body = sample(request_class.SCHEMA, message_set, topic)
            frame = v08.encode_request(body, 7, "fuzz")
            name = f"{request_class.__name__}{' ' + label if label else ''}"
            out.append((name, frame, api_key, api_version, body, expect, errors))
    return out


def _with_size(body: bytes) -> bytes:
    return struct.pack(">i", len(body)) + body


def _put(frame: bytes, field: Field, value: int) -> bytes:
    data = bytearray(frame)
    fmt = {1: ">b", 2: ">h", 4: ">i", 8: ">q"}[field.size]
    struct.pack_into(fmt, data, field.pos, value)
    return bytes(data)


def _extremes(size: int) -> tuple[int, ...]:
    bits = 8 * size - 1
    return (-1, -(1 << bits), (1 << bits) - 1)


def mutations(name: str, frame: bytes, fields: list[Field], rng: random.Random) -> Iterator[Frame]:
    """Every systematic mutation of one well-formed frame."""
    body = frame[4:]
    boundaries = sorted({f.pos for f in fields} | {f.pos + f.size for f in fields})
    for cut in boundaries:
        if 4 < cut < len(frame):
            yield Frame(_with_size(frame[4:cut]), CLOSE, f"{name} truncated at byte {cut}")
    for cut in rng.sample(boundaries, min(3, len(boundaries))):
        if 4 <= cut < len(frame):
            yield Frame(frame[:cut], CLOSE, f"{name} cut at byte {cut}, then EOF", half_close=True)
    for index, field in enumerate(fields):
        where = f"{name} field {index} ({field.kind} at byte {field.pos})"
        if field.kind == "count":
            yield Frame(_put(frame, field, 0x7FFFFFFF), CLOSE, f"{where} = 2^31-1")
            yield Frame(_put(frame, field, 1 << 30), CLOSE, f"{where} = 2^30")
            yield Frame(_put(frame, field, -2), CLOSE, f"{where} = -2")
            yield Frame(_put(frame, field, -(1 << 31)), CLOSE, f"{where} = -2^31")
            yield Frame(_put(frame, field, -1), ANY, f"{where} = -1")
        elif field.kind == "string":
            past = field.pos + 2 + 0x7FFF > len(frame)
            yield Frame(_put(frame, field, 0x7FFF), CLOSE if past else ANY, f"{where} = 32767")
            yield Frame(_put(frame, field, -2), ANY, f"{where} = -2")
            yield Frame(_put(frame, field, -1), ANY, f"{where} = -1 (null)")
        elif field.kind in ("bytes", "set"):
            yield Frame(_put(frame, field, 0x7FFFFFFF), CLOSE, f"{where} = 2^31-1")
            yield Frame(_put(frame, field, -2), CLOSE if field.kind == "set" else ANY, f"{where} = -2")
            yield Frame(
                _put(frame, field, -(1 << 31)), CLOSE if field.kind == "set" else ANY, f"{where} = -2^31"
            )
        elif index >= 3:  # the body's integers (the header's key and version come below)
            for value in _extremes(field.size):
                yield Frame(_put(frame, field, value), ANY, f"{where} = {value}")
    yield Frame(struct.pack(">i", len(body) + 1) + body, CLOSE, f"{name} one byte short", half_close=True)
    yield Frame(struct.pack(">i", len(body) - 1) + body, ANY, f"{name} size prefix one short")
    for bad in (0, -1, -(1 << 31), 0x7FFFFFFF, 100 * 1024 * 1024 + 1):
        yield Frame(struct.pack(">i", bad) + body, CLOSE, f"{name} size prefix {bad}")
    api_key = struct.unpack_from(">h", frame, 4)[0]
    for version in (-1, 3, 99):
        if (api_key, version) not in v08.SCHEMAS:
            # an ApiVersions of any version is answered (v0-shaped, UNSUPPORTED_VERSION) so clients step down
            expect = ANY if api_key == API_VERSIONS else CLOSE
            yield Frame(_put(frame, fields[1], version), expect, f"{name} version {version}")


def bit_flips(name: str, frame: bytes, rng: random.Random) -> Frame:
    """The frame with one to four random bits flipped (its size prefix kept)."""
    data = bytearray(frame)
    for _ in range(rng.randint(1, 4)):
        bit = rng.randrange(32, 8 * len(data))
        data[bit // 8] ^= 1 << (bit % 8)
    return Frame(bytes(data), ANY, f"{name} bit flips")


def fuzz_frames(count: int, seed: int, message_max_bytes: int) -> list[Frame]:
    """At least ``count`` frames: the systematic mutations of every base frame, unknown APIs, random bytes,
    and bit-flipped variants spread over the bases until ``count`` is reached."""
    rng = random.Random(seed)
    frames: list[Frame] = []
    bases = base_frames(message_max_bytes)
    for name, frame, api_key, api_version, body, expect, errors in bases:
        frames.append(Frame(frame, expect, name, errors))
        frames.extend(mutations(name, frame, layout(frame, api_key, api_version, body), rng))
    for api_key in (17, 19, 20, 42, 99, 1000, -1, 0x7FFF):
        frames.append(Frame(_with_size(struct.pack(">hhih", api_key, 0, 1, -1)), CLOSE, f"API key {api_key}"))
    for i in range(max(50, count // 20)):
        junk = rng.randbytes(rng.randint(1, 300))
        frames.append(Frame(_with_size(junk), CLOSE, f"random bytes {i}"))
    small = [b for b in bases if len(b[1]) < 4096]  # bit flips of the bombs would mostly resend megabytes
    while len(frames) < count:
        name, frame = rng.choice(small)[:2]
        frames.append(bit_flips(name, frame, rng))
    rng.shuffle(frames)
    return frames

"""The leader's validation of produced record batches (``log_validator``): the native core's one pass and the
pure path give the same bytes, offsets and errors, for logs of magic 0 and 2, plain batches and every
batch the native pass leaves to the pure path (headers, producer ids, codecs, damage, partial tails)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.codec import agreed
from zkafka.errors import KafkaError
from zkafka.log.log_config import LogConfig
from zkafka.log.log_validator import validate_and_assign
from zkafka.records.compression import GZIP, NO_COMPRESSION
from zkafka.records.default_record import Header, Record
from zkafka.records.format08 import build_message_set, iter_messages
from zkafka.records.record_batch import build_batch, build_plain_batch, read_batches

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
fields = st.one_of(st.none(), st.binary(max_size=40))
headers = st.lists(st.tuples(st.text(max_size=4), fields), max_size=2).map(
    lambda found: tuple(Header(k, v) for k, v in found)
)
records = st.lists(
    st.tuples(fields, fields, st.integers(0, 5000), st.one_of(st.just(()), headers)), min_size=1, max_size=8
)


@st.composite
def batch(draw) -> bytes:
    found = draw(records)
    if not draw(st.booleans()):
        found = [(k, v, t, ()) for k, v, t, _ in found]  # mostly the producers' plain records
    base = 10**12
    return build_batch(
        [Record(i, base + t, k, v, h) for i, (k, v, t, h) in enumerate(found)],
        compression=draw(st.sampled_from([NO_COMPRESSION] * 4 + [GZIP])),
        log_append_time=draw(st.sampled_from([None, None, None, base + 7])),
        producer_id=draw(st.sampled_from([-1, -1, -1, 42])),
        producer_epoch=0,
        base_sequence=draw(st.sampled_from([-1, 0])),
        transactional=draw(st.sampled_from([False] * 8 + [True])),
    )


@st.composite
def message_set(draw) -> bytes:
    data = b"".join(draw(st.lists(batch(), min_size=1, max_size=3)))
    damage = draw(st.sampled_from(["none"] * 4 + ["flip", "cut", "tail"]))
    if damage == "flip":  # a byte anywhere: a CRC-32C, a length, a count, a varint
        at = draw(st.integers(0, len(data) - 1))
        data = data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :]
    elif damage == "cut":
        data = data[: draw(st.integers(0, len(data) - 1))]
    elif damage == "tail":
        data += build_message_set([(None, b"v0")])
    return data


@SETTINGS
@given(
    message_set(),
    st.sampled_from([0, 2]),
    st.booleans(),
    st.sampled_from([1000012, 90]),
    st.integers(0, 2**40),
    st.integers(-1, 9),
)
def test_native_and_pure_paths_agree(data, magic, log_append_time, limit, next_offset, epoch):
    config = LogConfig(message_format_magic=magic, log_append_time=log_append_time, max_message_size=limit)
    kind, found = agreed(lambda: validate_and_assign(data, next_offset, config, 1234567, epoch))
    if kind == "error":
        assert issubclass(found[0], KafkaError), found  # the damage named, nothing stray
    else:
        assert (found.first_offset, found.last_offset) == (next_offset, next_offset + found.count - 1)


def test_plain_batches_into_a_magic_0_log_become_its_messages_numbered_from_the_log_end():
    pairs = [(None, b"a" * 100), (b"k", b""), (b"", None)]
    data = build_plain_batch(pairs, 5000) + build_plain_batch([(b"x", b"y")], 6000)
    config = LogConfig(message_format_magic=0)
    kind, assigned = agreed(lambda: validate_and_assign(data, 77, config, 0))
    expected = build_message_set(pairs + [(b"x", b"y")])
    offsets = [(m.offset, m.key, m.value) for m in iter_messages(assigned.data)]
    assert offsets == [(77 + i, k, v) for i, (k, v) in enumerate(pairs + [(b"x", b"y")])]
    assert kind == "value" and assigned.count == 4 and assigned.last_offset == 80
    assert len(assigned.data) == len(expected)


def test_plain_batches_into_a_magic_2_log_keep_their_records_with_offsets_epoch_and_append_time():
    data = build_plain_batch([(None, b"a"), (b"k", b"b")], 5000) + build_plain_batch([(b"x", b"y")], 6000)
    for log_append_time, stamp in ((False, 6000), (True, 99999)):
        config = LogConfig(message_format_magic=2, log_append_time=log_append_time)
        kind, assigned = agreed(lambda config=config: validate_and_assign(data, 10, config, 99999, 3))
        assert kind == "value"
        batches = list(read_batches(assigned.data))
        assert [b.header.base_offset for b in batches] == [10, 12]
        assert {b.header.partition_leader_epoch for b in batches} == {3}
        assert batches[-1].header.max_timestamp == stamp
        assert [r.offset for b in batches for r in b.records] == [10, 11, 12]


def test_compression_type_recompresses_a_batch_keeping_its_producer_fields():
    from zkafka.records.compression import SNAPPY

    plain = build_batch(
        [Record(i, 1000 + i, b"k", b"v%d" % i) for i in range(5)],
        producer_id=42,
        producer_epoch=3,
        base_sequence=7,
    )
    assigned = validate_and_assign(plain, 100, LogConfig(message_format_magic=2, compression=GZIP), 0, 9)
    (stored,) = read_batches(assigned.data)
    assert (stored.header.compression, stored.header.base_offset, stored.header.partition_leader_epoch) == (
        GZIP,
        100,
        9,
    )
    assert (stored.header.producer_id, stored.header.producer_epoch, stored.header.base_sequence) == (
        42,
        3,
        7,
    )
    assert [(r.offset, r.value) for r in stored.records] == [(100 + i, b"v%d" % i) for i in range(5)]
    # the codec it has already: kept as the producer sent it (only the offsets and epoch written in)
    again = validate_and_assign(assigned.data, 200, LogConfig(message_format_magic=2, compression=GZIP), 0, 9)
    assert again.data[8:] == assigned.data[8:]  # all but the base offset
    # uncompressed undoes a producer's codec; a magic-0 log gets one wrapper of the topic's codec
    (undone,) = read_batches(
        validate_and_assign(
            assigned.data, 0, LogConfig(message_format_magic=2, compression=NO_COMPRESSION), 0
        ).data
    )
    assert undone.header.compression == NO_COMPRESSION and len(undone.records) == 5
    v0 = validate_and_assign(
        build_message_set([(None, b"a"), (None, b"b")]),
        5,
        LogConfig(message_format_magic=0, compression=SNAPPY),
        0,
    )
    assert v0.data[8 + 4 + 4 + 1] & 7 == SNAPPY  # one wrapper (offset, size, crc, magic, attributes)
    assert [(m.offset, m.value) for m in iter_messages(v0.data)] == [(5, b"a"), (6, b"b")]

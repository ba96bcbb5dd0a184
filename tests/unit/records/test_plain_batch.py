"""The producer's record batch (``build_plain_batch``): the native core and the pure path write the same
bytes, and they are the bytes ``build_batch`` writes for the same records; a batch of a v2 fetch answer reads
back with its timestamps and headers beside magic-0 messages (``records.fetched``)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.codec import agreed
from zkafka.consumer.fetched_partition08 import FetchedPartition
from zkafka.errors import KafkaError
from zkafka.records.compression import GZIP, NO_COMPRESSION
from zkafka.records.default_record import Header, Record, decode_records
from zkafka.records.format08 import build_message_set
from zkafka.records.record_batch import RECORD_BATCH_OVERHEAD, build_batch, build_plain_batch, read_batch

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
fields = st.one_of(st.none(), st.binary(max_size=300))


@SETTINGS
@given(st.lists(st.tuples(fields, fields), min_size=1, max_size=30), st.integers(-1, 2**41))
def test_both_paths_write_what_build_batch_writes(pairs, timestamp):
    expected = build_batch([Record(i, timestamp, k, v) for i, (k, v) in enumerate(pairs)])
    assert agreed(lambda: build_plain_batch(pairs, timestamp)) == ("value", expected)
    values = [v for _, v in pairs]
    key = pairs[0][0]
    kind, compressed = agreed(lambda: build_plain_batch(None, timestamp, GZIP, values=values, key=key))
    assert kind == "value"
    records = read_batch(compressed).records
    assert [(r.offset, r.timestamp, r.key, r.value) for r in records] == [
        (i, timestamp, key, v) for i, v in enumerate(values)
    ]


def test_a_fetch_answer_of_messages_then_a_batch_reads_in_order_from_the_fetch_offset():
    messages = build_message_set([(b"k", b"v0"), (None, b"v1")])
    batch = build_batch(
        [Record(2, 100, None, b"v2", (Header("h", b"1"),)), Record(3, 105, b"k", b"v3")],
        compression=NO_COMPRESSION,
    )

    def read():
        fetched = FetchedPartition("t", 0, 1, 0, 4, messages + batch)
        found = [(m.offset, m.value, m.timestamp, m.timestamp_type, tuple(m.headers)) for m in fetched]
        return found, fetched.next_offset

    expected = [(1, b"v1", -1, -1, ()), (2, b"v2", 100, 0, (("h", b"1"),)), (3, b"v3", 105, 0, ())]
    assert agreed(read) == ("value", (expected, 4))


@SETTINGS
@given(
    st.lists(st.tuples(fields, fields, st.integers(-(2**40), 2**40)), min_size=1, max_size=20),
    st.data(),
)
def test_both_paths_read_the_same_records_and_the_same_damage(rows, data):
    records = [Record(i, stamp, k, v) for i, (k, v, stamp) in enumerate(rows)]
    body = bytearray(build_batch(records))
    assert agreed(lambda: read_batch(bytes(body)).records) == ("value", records)
    at = data.draw(st.integers(RECORD_BATCH_OVERHEAD, len(body) - 1))
    body[at] = data.draw(st.integers(0, 255))
    payload = bytes(body[RECORD_BATCH_OVERHEAD:])
    kind, found = agreed(lambda: decode_records(payload, 0, len(payload), len(records), 7, 100, None))
    assert kind == "value" or issubclass(found[0], KafkaError), found  # the damage named, nothing stray


def test_a_log_append_time_and_headers_read_alike():
    records = [Record(0, 5, b"k", b"v", (Header("a", b"1"),)), Record(1, 7, None, b"")]
    read = agreed(lambda: read_batch(build_batch(records, log_append_time=9)).records)
    assert read == ("value", [r._replace(timestamp=9) for r in records])

"""Reading one 0.8 offset range on a Spark executor: fetches from the partition's leader turned into Arrow
record batches with the columns of Spark's Kafka source.

One fetch becomes one record batch. The fetch is at the newest version both sides know: message sets (magic
0) are decoded in place by the native core as before; a log that holds record batches (message format v2)
gives its records' timestamps, timestamp types and (``includeHeaders``) headers, as Spark's Kafka source.
A message without a timestamp (magic 0) has timestamp -1 ms (1969-12-31 23:59:59.999 UTC) and ``timestampType`` -1,
as Spark's Kafka source makes of Kafka's NO_TIMESTAMP.

Offsets are logical: a fetch at an offset inside a compressed wrapper gets the wrapper's earlier messages too
(skipped), and messages at or past the range end are left for the next range. The read never goes past the
high watermark (the broker serves consumers nothing above it). A leader that moves or goes away is looked up
again through the brokers of the task (``Cluster08``); a log that stays shorter than the range for
``kafka.default.api.timeout.ms`` is data loss.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from functools import partial
from typing import Any

import pyarrow as pa

from zkafka.consumer.fetched_partition08 import FetchedPartition
from zkafka.consumer.simple08 import SimpleConsumer08
from zkafka.consumer.stream08 import MessageAndMetadata08, decode_chunk08
from zkafka.errors import KafkaError, OffsetOutOfRangeError
from zkafka.records.entries import entry_size
from zkafka.records.format08 import FORMAT08
from zkafka.spark.cluster08 import Cluster08
from zkafka.spark.errors import report_data_loss
from zkafka.spark.offsets import TopicPartition08
from zkafka.spark.reader import ReadTask, after_out_of_range

log = logging.getLogger(__name__)

# Spark's Kafka source schema; a message of magic 0 has timestamp -1 ms and Kafka's NO_TIMESTAMP_TYPE.
SCHEMA_DDL08 = "key binary, value binary, topic string, partition int, offset long, timestamp timestamp, timestampType int"
HEADERS_DDL = "headers array<struct<key: string, value: binary>>"
NO_TIMESTAMP_TYPE = -1
NO_TIMESTAMP = -1  # Kafka's RecordBatch.NO_TIMESTAMP: Spark's source turns it into 1969-12-31 23:59:59.999 UTC
TIMESTAMP = pa.timestamp("us", tz="UTC")
HEADERS = pa.list_(pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())]))

ARROW_SCHEMA08 = pa.schema(
    [
        pa.field("key", pa.binary()),
        pa.field("value", pa.binary()),
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("offset", pa.int64()),
        pa.field("timestamp", TIMESTAMP),
        pa.field("timestampType", pa.int32()),
    ]
)
ARROW_SCHEMA08_HEADERS = ARROW_SCHEMA08.append(pa.field("headers", HEADERS))


def schema_ddl08(include_headers: bool) -> str:
    """The source's schema on the 0.8 line: Spark's Kafka source's, ``headers`` last with ``includeHeaders``."""
    return f"{SCHEMA_DDL08}, {HEADERS_DDL}" if include_headers else SCHEMA_DDL08


# How long a fetch waits at the high watermark for it to reach the range end (a new leader's lags a moment).
WAIT_AT_HIGH_WATERMARK_MS = 500


def read_range08(
    task: ReadTask,
    fetch_size: int,
    fail_on_data_loss: bool = True,
    socket_timeout_ms: int = 30000,
    api_timeout_ms: int = 60000,
    include_headers: bool = False,
) -> Iterator[pa.RecordBatch]:
    """Fetch and decode ``task.range`` (an ``OffsetRange08``) from its leader, one record batch per fetch."""
    rng = task.range
    tp, pos, end, size = rng.key, rng.start, rng.end, fetch_size
    wait_ms = min(WAIT_AT_HIGH_WATERMARK_MS, socket_timeout_ms // 2)
    short_since: float | None = None  # when the log was first seen ending before the range end
    with Cluster08(
        task.bootstrap, socket_timeout_ms=socket_timeout_ms, api_timeout_ms=api_timeout_ms
    ) as cluster:
        cluster.assume_leader(tp, task.host, task.port)
        while pos < end:
            fetch = partial(_fetch, tp, pos, size, wait_ms if short_since is not None else 0)
            try:
                fetched = cluster.with_leader(tp, fetch)
            except OffsetOutOfRangeError:
                earliest, latest = cluster.earliest(tp), cluster.latest(tp)
                pos = after_out_of_range(rng, pos, earliest, latest, fail_on_data_loss)
                continue
            items, error, next_offset = _decode(fetched, pos)
            if items and items[-1].offset >= end:
                items = [m for m in items if m.offset < end]
            if items:
                yield to_record_batch08(tp.topic, tp.partition, items, include_headers)
            if error is not None:
                raise error
            if next_offset > pos:
                pos, size, short_since = next_offset, fetch_size, None
                continue
            if fetched.data:  # a message bigger than the fetch size
                needed = entry_size(fetched.data, FORMAT08) or 2 * size
                log.warning("%s: a %d-byte message at offset %d is bigger than fetchSize", tp, needed, pos)
                size = max(needed, size + 1)
                continue
            now = time.monotonic()
            short_since = short_since or now
            if now - short_since >= api_timeout_ms / 1000.0:
                report_data_loss(
                    f"{tp}: the log ends at offset {fetched.high_watermark}, before the range end {end} (a "
                    "leader lost messages, or the log was replaced)",
                    fail_on_data_loss,
                )
                return


def _fetch(tp: TopicPartition08, offset: int, size: int, wait_ms: int, consumer: SimpleConsumer08) -> Any:
    return consumer.fetch(tp.topic, tp.partition, offset, size, max_wait_ms=wait_ms, min_bytes=1)


def _decode(fetched: FetchedPartition, pos: int) -> tuple[list, KafkaError | None, int]:
    """The fetched messages (from ``pos``), the error of a bad entry (None if none) and the next offset: message
    sets by the native walker in place, data holding record batches as ``FetchedPartition`` reads it (its
    errors raise)."""
    if not fetched.has_batches:
        items, error, _, next_offset = decode_chunk08(fetched.data, pos, fetched.topic, fetched.partition)
        return items, error, next_offset
    return fetched.messages(), None, fetched.next_offset


def to_record_batch08(
    topic: str, partition: int, items: list[Any], include_headers: bool = False
) -> pa.RecordBatch:
    """Rows of ``MessageAndMetadata08`` (magic 0: no timestamp) or of records read from batches
    (``MessageAndOffset08``/``FetchedRecord``: timestamps, types and headers)."""
    n = len(items)
    if items and type(items[0]) is MessageAndMetadata08:
        values = [m.message for m in items]
        millis = pa.repeat(pa.scalar(NO_TIMESTAMP, pa.int64()), n)
        types = pa.repeat(pa.scalar(NO_TIMESTAMP_TYPE, pa.int32()), n)
    else:
        values = [m.value for m in items]
        millis = pa.array([m.timestamp for m in items], pa.int64())
        types = pa.array([m.timestamp_type for m in items], pa.int32())
    timestamps = millis.cast(pa.timestamp("ms", tz="UTC")).cast(TIMESTAMP)
    columns = [
        pa.array([m.key for m in items], pa.binary()),
        pa.array(values, pa.binary()),
        pa.repeat(pa.scalar(topic, pa.string()), n),
        pa.repeat(pa.scalar(partition, pa.int32()), n),
        pa.array([m.offset for m in items], pa.int64()),
        timestamps,
        types,
    ]
    if not include_headers:
        return pa.RecordBatch.from_arrays(columns, schema=ARROW_SCHEMA08)
    headers = [[(h.key, h.value) for h in getattr(m, "headers", ())] for m in items]
    columns.append(pa.array(headers, HEADERS))
    return pa.RecordBatch.from_arrays(columns, schema=ARROW_SCHEMA08_HEADERS)

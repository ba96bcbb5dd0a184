"""Reading one 0.7 offset range on a Spark executor: SimpleConsumer fetches turned into Arrow record batches.

One fetch becomes one record batch. The read stops exactly at the range end: entries starting at or after
it are left for the next range (see ``zkafka.spark.rows``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pyarrow as pa

from zkafka.consumer.simple07 import SimpleConsumer
from zkafka.errors import InvalidMessageSizeError, OffsetOutOfRangeError
from zkafka.protocol import EARLIEST_TIME, LATEST_TIME
from zkafka.spark.errors import report_data_loss
from zkafka.spark.offsets import OffsetRange, first_entry_size
from zkafka.spark.reader import ReadTask, after_out_of_range
from zkafka.spark.rows import Columns, decode_entries

log = logging.getLogger(__name__)

SCHEMA_DDL = "key binary, value binary, topic string, broker int, partition int, offset long, nextOffset long"

ARROW_SCHEMA = pa.schema(
    [
        pa.field("key", pa.binary()),
        pa.field("value", pa.binary()),
        pa.field("topic", pa.string()),
        pa.field("broker", pa.int32()),
        pa.field("partition", pa.int32()),
        pa.field("offset", pa.int64()),
        pa.field("nextOffset", pa.int64()),
    ]
)


def read_range(
    task: ReadTask, fetch_size: int, fail_on_data_loss: bool = True, socket_timeout_ms: int = 30000
) -> Iterator[pa.RecordBatch]:
    """Fetch and decode ``task.range``, one record batch per fetch."""
    rng = task.range
    pos, end, size = rng.start, rng.end, fetch_size
    with SimpleConsumer(task.host, task.port, socket_timeout_ms=socket_timeout_ms) as consumer:
        while pos < end:
            try:
                data = consumer.fetch(rng.topic, rng.partition, pos, size).buffer
            except OffsetOutOfRangeError:
                pos = _after_out_of_range(consumer, rng, pos, fail_on_data_loss)
                continue
            if not data:
                report_data_loss(
                    f"{rng.key}: the log ends at offset {pos}, before the range end {end}", fail_on_data_loss
                )
                return
            try:
                cols, pos_after = decode_entries(data, pos, end)
            except InvalidMessageSizeError:
                needed = first_entry_size(data)
                if needed is None or needed <= len(data):
                    raise
                log.warning(
                    "%s: a %d-byte message at offset %d is bigger than fetchSize", rng.key, needed, pos
                )
                size = needed
                continue
            if pos_after == pos:
                raise InvalidMessageSizeError(
                    f"{rng.key}: no whole message at offset {pos} ({len(data)} bytes)"
                )
            if cols:
                yield to_record_batch(rng.topic, rng.broker, rng.partition, cols)
            pos, size = pos_after, fetch_size


def to_record_batch(topic: str, broker: int, partition: int, cols: Columns) -> pa.RecordBatch:
    n = len(cols)
    return pa.RecordBatch.from_arrays(
        [
            pa.nulls(n, pa.binary()),
            pa.array(cols.values, pa.binary()),
            pa.repeat(pa.scalar(topic, pa.string()), n),
            pa.repeat(pa.scalar(broker, pa.int32()), n),
            pa.repeat(pa.scalar(partition, pa.int32()), n),
            pa.array(cols.offsets, pa.int64()),
            pa.array(cols.next_offsets, pa.int64()),
        ],
        schema=ARROW_SCHEMA,
    )


def _after_out_of_range(consumer: SimpleConsumer, rng: OffsetRange, pos: int, fail: bool) -> int:
    earliest = _first(consumer.get_offsets_before(rng.topic, rng.partition, EARLIEST_TIME, 1))
    latest = _first(consumer.get_offsets_before(rng.topic, rng.partition, LATEST_TIME, 1))
    return after_out_of_range(rng, pos, earliest, latest, fail)


def _first(offsets: list[int]) -> int:
    return offsets[0] if offsets else 0

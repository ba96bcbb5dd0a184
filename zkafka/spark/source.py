"""The ``zkafka`` data source for Spark's Python Data Source API: batch reads and Structured Streaming.

    from zkafka.spark import register
    register(spark)
    df = spark.read.format("zkafka").option("zookeeper.connect", "zk:2181").option("subscribe", "t").load()

Planning (``partitions``, ``initialOffset``, ``latestOffset``) runs on the driver and talks to ZooKeeper and
the brokers; ``read`` runs on the executors and talks to the brokers only. The line (``connect``) decides
the schema: 0.7 rows carry broker and byte offsets; 0.8 rows are those of Spark's Kafka source.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Sequence

from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.types import StructType

from zkafka.config import LINE_08
from zkafka.spark.connect import open_cluster, source_line
from zkafka.spark.offsets import Offsets, offsets_from_json, offsets_to_json_obj
from zkafka.spark.options import SourceOptions, include_headers, parse_options
from zkafka.spark.planner import initial_offsets, latest_offsets, plan_batch, plan_micro_batch
from zkafka.spark.reader import ReadTask
from zkafka.spark.reader07 import SCHEMA_DDL, read_range
from zkafka.spark.reader08 import read_range08, schema_ddl08

try:  # Spark 4.2+: admission control and Trigger.AvailableNow for Python stream readers
    from pyspark.sql.streaming.datasource import (
        ReadAllAvailable,
        ReadLimit,
        ReadMaxBytes,
        ReadMaxRows,
        SupportsTriggerAvailableNow,
    )
except ImportError:  # Spark 4.0 and 4.1
    ReadAllAvailable = ReadLimit = ReadMaxBytes = ReadMaxRows = None  # type: ignore[assignment,misc]

    class SupportsTriggerAvailableNow:  # type: ignore[no-redef]
        """Stand-in: Spark before 4.2 never calls prepareForTriggerAvailableNow."""


log = logging.getLogger(__name__)

SOURCE_NAME = "zkafka"


class ZKafkaDataSource(DataSource):
    """Messages of zkafka topics: one row per message, one input partition per partition range."""

    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def line(self) -> str:
        """The cluster's line, found once (Spark pickles this object after ``schema``, keeping it)."""
        if "_line" not in self.__dict__:
            self._line = source_line(self.options)
        return self._line

    def schema(self) -> str:
        return schema_ddl08(include_headers(self.options)) if self.line() == LINE_08 else SCHEMA_DDL

    def reader(self, schema: StructType) -> DataSourceReader:
        _check_schema(schema, self.schema())
        return ZKafkaBatchReader(parse_options(self.options, streaming=False, line=self.line()))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        _check_schema(schema, self.schema())
        return ZKafkaStreamReader(parse_options(self.options, streaming=True, line=self.line()))


class ZKafkaBatchReader(DataSourceReader):
    """A batch read: ranges from startingOffsets to endingOffsets."""

    def __init__(self, options: SourceOptions) -> None:
        self.options = options

    def partitions(self) -> Sequence[InputPartition]:
        with open_cluster(self.options) as cluster:
            return [InputPartition(task) for task in plan_batch(cluster, self.options)]

    def read(self, partition: InputPartition) -> Iterator:
        return _read(partition, self.options)


class ZKafkaStreamReader(SupportsTriggerAvailableNow, DataSourceStreamReader):
    """A streaming read: offsets are ``{"topic": {"<brokerId>-<partId>": offset}}`` (0.7) or Spark's Kafka
    source's ``{"topic": {"<partition>": offset}}`` (0.8) maps kept in the checkpoint."""

    def __init__(self, options: SourceOptions) -> None:
        self.options = options
        self._available_now: Offsets | None = None
        self._last_end: Offsets | None = None  # Spark < 4.2 passes no start: carry offsets on from here
        if options.max_bytes_per_trigger and ReadMaxBytes is None:
            log.warning(
                "maxBytesPerTrigger needs Spark 4.2 or later (read limits for Python sources); ignored"
            )
        if options.max_offsets_per_trigger and ReadMaxRows is None:
            log.warning(
                "maxOffsetsPerTrigger needs Spark 4.2 or later (read limits for Python sources); ignored"
            )

    def _offsets(self, obj: dict) -> Offsets:
        return offsets_from_json(obj, kind=self.options.key_kind)

    def initialOffset(self) -> dict:
        with open_cluster(self.options) as cluster:
            return offsets_to_json_obj(initial_offsets(cluster, self.options))

    def getDefaultReadLimit(self):
        if self.options.max_bytes_per_trigger:
            return ReadMaxBytes(self.options.max_bytes_per_trigger)
        if self.options.max_offsets_per_trigger:
            return ReadMaxRows(self.options.max_offsets_per_trigger)
        return ReadAllAvailable()

    def latestOffset(self, start: dict | None = None, limit: ReadLimit | None = None) -> dict:
        """The next end offsets; Spark 4.2+ passes the start and the read limit, older Spark neither."""
        begin = self._offsets(start) if start is not None else self._last_end
        max_bytes = limit.max_bytes if ReadMaxBytes is not None and isinstance(limit, ReadMaxBytes) else None
        max_rows = limit.max_rows if ReadMaxRows is not None and isinstance(limit, ReadMaxRows) else None
        with open_cluster(self.options) as cluster:
            end = latest_offsets(cluster, self.options, begin, max_bytes, max_offsets=max_rows)
        if self._available_now is not None:
            end = _within(end, self._available_now, begin or {})
        return offsets_to_json_obj(end)

    def prepareForTriggerAvailableNow(self) -> None:
        with open_cluster(self.options) as cluster:
            self._available_now = latest_offsets(cluster, self.options, None, None)

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        self._last_end = self._offsets(end)
        with open_cluster(self.options) as cluster:
            tasks = plan_micro_batch(cluster, self.options, self._offsets(start), self._last_end)
        return [InputPartition(task) for task in tasks]

    def read(self, partition: InputPartition) -> Iterator:
        return _read(partition, self.options)

    def commit(self, end: dict) -> None:
        log.debug("micro-batch up to %s committed", end)


def _read(partition: InputPartition, options: SourceOptions) -> Iterator:
    task: ReadTask = partition.value
    if options.line == LINE_08:
        return read_range08(
            task,
            options.fetch_size,
            options.fail_on_data_loss,
            options.socket_timeout_ms,
            options.api_timeout_ms,
            options.include_headers,
        )
    return read_range(task, options.fetch_size, options.fail_on_data_loss, options.socket_timeout_ms)


def _within(end: Offsets, target: Offsets, begin: Offsets) -> Offsets:
    """``end`` held back to the Trigger.AvailableNow target; partitions new since then are left for later."""
    held = {}
    for tp, offset in end.items():
        if tp in target:
            held[tp] = max(min(offset, target[tp]), begin.get(tp, 0))
        elif tp in begin:
            held[tp] = begin[tp]
    return held


def _check_schema(schema: StructType | None, ddl: str) -> None:
    expected = re.findall(r"(?:^|, )(\w+) ", ddl)  # top-level names (a struct's fields are "name: type")
    if schema is not None and [f.name for f in schema.fields] != expected:
        raise ValueError(f"the zkafka source has a fixed schema ({ddl}); do not set one")

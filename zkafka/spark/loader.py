"""The batch loader (the 0.7 Hadoop consumer's job on Spark): topics into Parquet, offsets stored with the data.

Each run reads every partition of the topics from the offsets the last committed run stored (new ones from
their earliest offset) up to the brokers' current ends, one Spark task per range, writes the rows
partitioned by topic into a staging directory, and commits by publishing its offsets file; only then are its
files moved into the table (see ``zkafka.spark.store``). A run that dies before the commit is as if it never
ran; the next one reads the same ranges again, so nothing is lost or loaded twice. On the 0.7 line the
offsets are per broker-partition byte positions; on the 0.8 line per partition message numbers, read up to
the high watermark from each partition's leader (the cluster named by ``bootstrap_servers`` or found in
ZooKeeper).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from zkafka.config import LINE_07, LINE_08
from zkafka.spark.connect import open_cluster, source_line
from zkafka.spark.errors import BrokerGoneError
from zkafka.spark.offsets import Offsets, offsets_to_json
from zkafka.spark.options import SourceOptions, parse_options
from zkafka.spark.source import SOURCE_NAME
from zkafka.spark.store import OffsetStore, RunRecord

if TYPE_CHECKING:
    from pathlib import Path

    from pyspark.sql import DataFrameReader, SparkSession

log = logging.getLogger(__name__)

# Test hook: "before-publish" or "after-publish" makes the loader os._exit(EXIT_HOOK_STATUS) at that point.
EXIT_HOOK_ENV = "ZKAFKA_SPARK_LOAD_EXIT"
EXIT_HOOK_STATUS = 75


@dataclass
class LoadResult:
    """What one run of the loader did (``run`` is None when there was nothing new)."""

    run: int | None
    rows: int = 0
    payload_bytes: int = 0
    log_bytes: int = 0
    ranges: int = 0
    seconds: float = 0.0
    offsets: Offsets = field(default_factory=dict)
    line: str = LINE_07
    readers: dict[str, list[str]] = field(default_factory=dict)  # "topic-[broker-]partition" -> executors

    def summary(self) -> str:
        secs = max(self.seconds, 1e-9)
        mb = self.log_bytes / 1e6
        head = f"run {self.run}" if self.run is not None else "nothing new"
        if self.line == LINE_08:  # logical offsets: no log bytes to count
            return (
                f"{head}: {self.rows} rows ({self.payload_bytes / 1e6:.1f} MB payload) from {self.ranges} "
                f"partition(s) in {self.seconds:.1f}s: {self.rows / secs:.0f} rows/s, "
                f"{self.payload_bytes / 1e6 / secs:.1f} MB/s"
            )
        return (
            f"{head}: {self.rows} rows, {mb:.1f} MB of log ({self.payload_bytes / 1e6:.1f} MB payload) from "
            f"{self.ranges} broker-partition(s) in {self.seconds:.1f}s: {self.rows / secs:.0f} rows/s, "
            f"{mb / secs:.1f} MB/s"
        )


def load(
    spark: SparkSession,
    zookeeper: str | None,
    topics: Iterable[str],
    output: str | os.PathLike,
    *,
    bootstrap_servers: str | None = None,
    fmt: str = "parquet",
    fail_on_data_loss: bool = True,
    fetch_size: int | None = None,
    min_partitions: int | None = None,
    progress: Callable[[str], None] | None = None,
    progress_interval: float = 5.0,
) -> LoadResult:
    """Load what is new in ``topics`` since the last committed run into ``output``; see the module doc.

    The cluster is ``zookeeper`` (either line) or ``bootstrap_servers`` (``host:port,...`` of 0.8 brokers).
    """
    say = progress or log.info
    began = time.monotonic()
    topics = list(dict.fromkeys(topics))
    connection, line, options = _source(zookeeper, bootstrap_servers, topics)
    store = OffsetStore(output)
    with store.lock():
        stored, run = _resume(store, output, line, say)
        starts, ends, backlog = _plan(options, topics, stored, say)
        if not ends:
            say(f"nothing new in {','.join(topics)} since run {run - 1}")
            return LoadResult(None, seconds=time.monotonic() - began, offsets=stored, line=line)
        if line == LINE_08:
            say(f"run {run}: reading {len(ends)} partition(s), {backlog} offsets")
        else:
            say(f"run {run}: reading {len(ends)} broker-partition(s), {backlog / 1e6:.1f} MB of log")
        log_bytes = 0 if line == LINE_08 else backlog
        reader = _reader(
            spark, connection, topics, starts, ends, fail_on_data_loss, fetch_size, min_partitions
        )
        rows, payload, readers = _write(
            spark, reader, store.staging_dir(run), fmt, say, progress_interval, f"run {run}"
        )
        record = _commit(
            store,
            run,
            {**stored, **ends},
            line,
            say,
            topics=topics,
            format=fmt,
            rows=rows,
            payload_bytes=payload,
            log_bytes=log_bytes,
        )
    result = LoadResult(
        run, rows, payload, log_bytes, len(ends), time.monotonic() - began, record.offsets, line, readers
    )
    say(result.summary())
    return result


def _source(
    zookeeper: str | None, bootstrap_servers: str | None, topics: list[str]
) -> tuple[dict[str, str | None], str, SourceOptions]:
    """The source's connection option, the line of the cluster behind it, and the checked options of the read."""
    connection = (
        {"kafka.bootstrap.servers": bootstrap_servers}
        if bootstrap_servers
        else {"zookeeper.connect": zookeeper}
    )
    line = source_line(connection)
    options = parse_options({**connection, "subscribe": ",".join(topics)}, streaming=False, line=line)
    return connection, line, options


def _resume(
    store: OffsetStore, output: str | os.PathLike, line: str, say: Callable[[str], None]
) -> tuple[Offsets, int]:
    """Finish or drop what a dead run left; the offsets the last committed run stored, and this run's number."""
    for done in store.recover():
        say(done)
    previous = store.current()
    if previous is not None and previous.line != line:
        raise ValueError(
            f"{output} holds offsets of the {previous.line} line; the topics are on the {line} line"
        )
    stored = previous.offsets if previous else {}
    return stored, (previous.run if previous else 0) + 1


def _reader(
    spark: SparkSession,
    connection: dict[str, str | None],
    topics: list[str],
    starts: Offsets,
    ends: Offsets,
    fail_on_data_loss: bool,
    fetch_size: int | None,
    min_partitions: int | None,
) -> DataFrameReader:
    """The batch read of the source over the planned ranges."""
    reader = (
        spark.read.format(SOURCE_NAME)
        .options(**connection)
        .option("subscribe", ",".join(topics))
        .option("startingOffsets", offsets_to_json(starts))
        .option("endingOffsets", offsets_to_json(ends))
        .option("failOnDataLoss", str(fail_on_data_loss).lower())
    )
    if fetch_size:
        reader = reader.option("fetchSize", str(fetch_size))
    if min_partitions:
        reader = reader.option("minPartitions", str(min_partitions))
    return reader


def _write(
    spark: SparkSession,
    reader: DataFrameReader,
    staging: Path,
    fmt: str,
    say: Callable[[str], None],
    progress_interval: float,
    label: str,
) -> tuple[int, int, dict[str, list[str]]]:
    """Write the rows partitioned by topic into ``staging``; how many rows, their payload bytes, and which
    executor read each partition (of the task attempts that succeeded: a retried range names where it was
    read again)."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    from zkafka.spark.session import EXECUTOR_EXPR, executor_name

    stats = Observation("zkafka_load")
    df = reader.load()
    keys = [c for c in ("topic", "broker", "partition") if c in df.columns]
    df = (
        df.withColumn("_executor", F.expr(EXECUTOR_EXPR))
        .observe(
            stats,
            F.count(F.lit(1)).alias("rows"),
            F.sum(F.length("value")).alias("bytes"),
            F.collect_set(F.struct(*keys, "_executor")).alias("readers"),
        )
        .drop("_executor")
    )
    with _ProgressReporter(spark, say, progress_interval, label):
        df.write.partitionBy("topic").format(fmt).save(str(staging))
    metrics = stats.get
    readers: dict[str, list[str]] = {}
    for row in metrics.get("readers") or []:
        name = "-".join(str(row[k]) for k in keys)
        readers.setdefault(name, []).append(executor_name(row["_executor"]))
    for name, executors in sorted(readers.items()):
        executors.sort()
        say(f"{label}: {name} read by {', '.join(executors)}")
    return int(metrics.get("rows") or 0), int(metrics.get("bytes") or 0), readers


def _commit(
    store: OffsetStore, run: int, offsets: Offsets, line: str, say: Callable[[str], None], **counts: Any
) -> RunRecord:
    """Publish the run's offsets file (the commit; ``counts`` and the time are its stats), then move its staged
    files into the table."""
    _exit_hook("before-publish")
    stats = {**counts, "committed_at": datetime.now(UTC).isoformat(timespec="seconds")}
    record = RunRecord(run, offsets, stats, line)
    path = store.publish(record)
    _exit_hook("after-publish")
    moved = store.finish(run)
    say(f"run {run}: committed {path.name}, {moved} file(s) moved into {store.root}")
    return record


def _plan(
    options: SourceOptions, topics: list[str], stored: Offsets, say: Callable[[str], None]
) -> tuple[Offsets, Offsets, int]:
    """(start, end) offsets of the partitions with new data, and the offsets between them (bytes on 0.7)."""
    starts, ends, backlog = {}, {}, 0
    with open_cluster(options) as cluster:
        partitions = cluster.partitions(topics)
        for tp in sorted(set(stored) - set(partitions)):
            if tp.topic in topics:
                say(f"{tp}: not in the cluster now; it resumes from offset {stored[tp]} when it is back")
        for tp in partitions:
            try:
                earliest, latest = cluster.earliest(tp), cluster.latest(tp)
            except BrokerGoneError:
                say(f"{tp}: {cluster.unavailable(tp)}; it is left for a later run")
                continue
            start = stored.get(tp, earliest)
            if start != latest:
                starts[tp], ends[tp] = start, latest
                backlog += max(0, latest - max(start, earliest))
    return starts, ends, backlog


def _exit_hook(point: str) -> None:
    if os.environ.get(EXIT_HOOK_ENV) == point:
        log.warning("%s=%s: exiting now", EXIT_HOOK_ENV, point)
        os._exit(EXIT_HOOK_STATUS)


class _ProgressReporter:
    """Reports the tasks done of the running Spark jobs every few seconds while a write runs."""

    def __init__(self, spark: SparkSession, say: Callable[[str], None], interval: float, label: str) -> None:
        self._tracker = spark.sparkContext.statusTracker()
        self._say, self._interval, self._label = say, interval, label
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="zkafka-load-progress", daemon=True)
        self._began = time.monotonic()

    def __enter__(self) -> _ProgressReporter:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            done = total = 0
            for stage_id in self._tracker.getActiveStageIds():
                info = self._tracker.getStageInfo(stage_id)
                if info is not None:
                    done += info.numCompletedTasks
                    total += info.numTasks
            if total:
                elapsed = time.monotonic() - self._began
                self._say(f"{self._label}: {done}/{total} tasks done after {elapsed:.0f}s")

"""The batch loader (the 0.7 Hadoop consumer's job on Spark): topics into Parquet, offsets stored with the data.

Each run reads every broker-partition of the topics from the offsets the last committed run stored (new
ones from their earliest offset) up to the brokers' current ends, one Spark task per range, writes the rows
partitioned by topic into a staging directory, and commits by publishing its offsets file; only then are its
files moved into the table (see ``zkafka.spark.store``). A run that dies before the commit is as if it never
ran; the next one reads the same ranges again, so nothing is lost or loaded twice.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from zkafka.spark.cluster import Cluster
from zkafka.spark.errors import BrokerGoneError
from zkafka.spark.offsets import Offsets, offsets_to_json
from zkafka.spark.source import SOURCE_NAME
from zkafka.spark.store import OffsetStore, RunRecord

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

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

    def summary(self) -> str:
        secs = max(self.seconds, 1e-9)
        mb = self.log_bytes / 1e6
        head = f"run {self.run}" if self.run is not None else "nothing new"
        return (
            f"{head}: {self.rows} rows, {mb:.1f} MB of log ({self.payload_bytes / 1e6:.1f} MB payload) from "
            f"{self.ranges} broker-partition(s) in {self.seconds:.1f}s: {self.rows / secs:.0f} rows/s, "
            f"{mb / secs:.1f} MB/s"
        )


def load(
    spark: SparkSession,
    zookeeper: str,
    topics: Iterable[str],
    output: str | os.PathLike,
    *,
    fmt: str = "parquet",
    fail_on_data_loss: bool = True,
    fetch_size: int | None = None,
    min_partitions: int | None = None,
    progress: Callable[[str], None] | None = None,
    progress_interval: float = 5.0,
) -> LoadResult:
    """Load what is new in ``topics`` since the last committed run into ``output``; see the module doc."""
    say = progress or log.info
    began = time.monotonic()
    topics = list(dict.fromkeys(topics))
    store = OffsetStore(output)
    with store.lock():
        for done in store.recover():
            say(done)
        previous = store.current()
        stored = previous.offsets if previous else {}
        run = (previous.run if previous else 0) + 1
        starts, ends, log_bytes = _plan(zookeeper, topics, stored, say)
        if not ends:
            say(f"nothing new in {','.join(topics)} since run {run - 1}")
            return LoadResult(None, seconds=time.monotonic() - began, offsets=stored)
        say(f"run {run}: reading {len(ends)} broker-partition(s), {log_bytes / 1e6:.1f} MB of log")

        from pyspark.sql import Observation
        from pyspark.sql import functions as F

        reader = (
            spark.read.format(SOURCE_NAME)
            .option("zookeeper.connect", zookeeper)
            .option("subscribe", ",".join(topics))
            .option("startingOffsets", offsets_to_json(starts))
            .option("endingOffsets", offsets_to_json(ends))
            .option("failOnDataLoss", str(fail_on_data_loss).lower())
        )
        if fetch_size:
            reader = reader.option("fetchSize", str(fetch_size))
        if min_partitions:
            reader = reader.option("minPartitions", str(min_partitions))
        stats = Observation("zkafka_load")
        df = reader.load().observe(
            stats, F.count(F.lit(1)).alias("rows"), F.sum(F.length("value")).alias("bytes")
        )
        staging = store.staging_dir(run)
        with _ProgressReporter(spark, say, progress_interval, f"run {run}"):
            df.write.partitionBy("topic").format(fmt).save(str(staging))
        metrics = stats.get
        rows, payload = int(metrics.get("rows") or 0), int(metrics.get("bytes") or 0)

        _exit_hook("before-publish")
        record = RunRecord(
            run,
            {**stored, **ends},
            {
                "topics": topics,
                "format": fmt,
                "rows": rows,
                "payload_bytes": payload,
                "log_bytes": log_bytes,
                "committed_at": datetime.now(UTC).isoformat(timespec="seconds"),
            },
        )
        path = store.publish(record)
        _exit_hook("after-publish")
        moved = store.finish(run)
        say(f"run {run}: committed {path.name}, {moved} file(s) moved into {store.root}")
    result = LoadResult(run, rows, payload, log_bytes, len(ends), time.monotonic() - began, record.offsets)
    say(result.summary())
    return result


def _plan(
    zookeeper: str, topics: list[str], stored: Offsets, say: Callable[[str], None]
) -> tuple[Offsets, Offsets, int]:
    """(start, end) offsets of the broker-partitions with new data, and the log bytes between them."""
    starts, ends, log_bytes = {}, {}, 0
    with Cluster(zookeeper) as cluster:
        partitions = cluster.partitions(topics)
        for tp in sorted(set(stored) - set(partitions)):
            if tp.topic in topics:
                say(
                    f"{tp}: its broker is not registered; it resumes from offset {stored[tp]} when it is back"
                )
        for tp in partitions:
            try:
                earliest, latest = cluster.earliest(tp), cluster.latest(tp)
            except BrokerGoneError:
                continue
            start = stored.get(tp, earliest)
            if start != latest:
                starts[tp], ends[tp] = start, latest
                log_bytes += max(0, latest - max(start, earliest))
    return starts, ends, log_bytes


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

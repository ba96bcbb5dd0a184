"""The batch loader on 0.8 topics: per-partition logical offsets, only new data on each run, and nothing
loaded twice or skipped after a kill at any point of a run."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from tests.support.consumers08 import start_cluster08
from tests.support.spark import (
    COLUMNS08,
    ROOT,
    collect_rows,
    loader_command,
    produce08,
    run_loader_cli,
    visible_files,
)
from zkafka.config import LINE_08
from zkafka.spark.loader import EXIT_HOOK_STATUS, load
from zkafka.spark.offsets import TopicPartition08
from zkafka.spark.store import OffsetStore
from zkafka.utils import wait_until

pytestmark = [pytest.mark.spark, pytest.mark.integration]

TOPICS = {"k-a": 2, "k-b": 2}


def produce(brokers, tag: str, codec: int = 0, per_partition: int = 6) -> list[tuple]:
    rows = []
    for topic, count in TOPICS.items():
        for p in range(count):
            pairs = [(None, f"{topic}/{p}/{tag}/{i}".encode()) for i in range(per_partition)]
            rows += produce08(brokers, topic, p, pairs, codec)
    return rows


def table_rows(spark, out) -> list[tuple]:
    return collect_rows(spark.read.parquet(str(out)), COLUMNS08)


def killed_while_writing(connection: list[str], out) -> int:
    """Start a load and SIGKILL it (its JVM too) once Spark has begun writing the run's staging files."""
    args, env = loader_command(connection, ",".join(TOPICS), out)
    child = subprocess.Popen(
        args, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        staging = out / "_staging"
        wait_until(
            lambda: staging.is_dir() and any(staging.rglob("*")), 120, interval=0.01, message="staging"
        )
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(30)
    return child.returncode


@pytest.mark.timeout(420)
def test_loader08_killed_at_any_point_loads_each_message_once(
    spark, start_broker08, zk_client, zk_connect, tmp_path
):
    out = tmp_path / "table"
    brokers = start_cluster08(start_broker08, zk_client, 2, TOPICS)
    bootstrap = ",".join(f"127.0.0.1:{b.port}" for b in brokers)
    expected = produce(brokers, "one") + produce(brokers, "gz", codec=1)

    # killed while Spark writes: nothing is visible, nothing stored
    assert killed_while_writing(["-b", bootstrap], out) == -signal.SIGKILL
    assert visible_files(out) == [] and OffsetStore(out).runs() == []

    # killed right before publishing its offsets: the same
    died = run_loader_cli(["-z", zk_connect], ",".join(TOPICS), out, "before-publish")
    assert died.returncode == EXIT_HOOK_STATUS, died.stderr[-3000:]
    assert "deleted" in died.stderr and "never committed" in died.stderr  # the killed run's staging
    assert visible_files(out) == [] and OffsetStore(out).runs() == []

    expected += produce(brokers, "two", codec=2)
    # killed right after publishing: committed, its files still staged
    died = run_loader_cli(["-b", bootstrap], ",".join(TOPICS), out, "after-publish")
    assert died.returncode == EXIT_HOOK_STATUS, died.stderr[-3000:]
    assert OffsetStore(out).runs() == [1] and visible_files(out) == []

    expected += produce(brokers, "three")
    lines: list[str] = []
    second = load(spark, None, list(TOPICS), out, bootstrap_servers=bootstrap, progress=lines.append)
    assert "finished committed run 1" in lines[0]
    assert (second.run, second.rows, second.ranges) == (2, 24, 4)
    assert second.summary().startswith("run 2: 24 rows") and "partition(s)" in second.summary()
    assert table_rows(spark, out) == sorted(expected)

    stored = OffsetStore(out).current()
    assert stored.line == LINE_08 and stored.run == 2
    ends = {}
    for topic, partition, offset, _, _ in expected:
        ends[TopicPartition08(topic, partition)] = max(
            offset + 1, ends.get(TopicPartition08(topic, partition), 0)
        )
    assert stored.offsets == ends == {TopicPartition08(t, p): 24 for t, n in TOPICS.items() for p in range(n)}

    third = load(spark, zk_connect, list(TOPICS), out)
    assert third.run is None and OffsetStore(out).runs() == [1, 2]

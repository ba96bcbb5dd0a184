"""The batch loader: only new data on each run, and no duplicates or gaps after a kill at the commit."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.spark import RawProducer, loaded_rows, visible_files
from tests.support.spark import run_loader_cli as loader_cli
from tests.support.zookeeper import wait_topic_registered
from zkafka.cli import main
from zkafka.spark.loader import EXIT_HOOK_STATUS, load
from zkafka.spark.offsets import TopicPartition
from zkafka.spark.store import OffsetStore

pytestmark = [pytest.mark.spark, pytest.mark.integration]


class Produced:
    def __init__(self, port: int) -> None:
        self.port = port
        self.rows: list[tuple] = []

    def send(self, topic: str, partition: int, n: int, tag: str, codec: int = 0) -> None:
        payloads = [f"{topic}/{partition}/{tag}/{i}".encode() for i in range(n)]
        with RawProducer(self.port) as producer:
            for value, offset, nxt in producer.send(topic, partition, payloads, codec):
                self.rows.append((topic, 0, partition, value, offset, nxt))


@pytest.mark.timeout(180)
def test_loader_run_twice_loads_only_the_new_data(spark, start_broker, zk_connect, zk_client, tmp_path):
    out = tmp_path / "table"
    broker = start_broker(0, num_partitions="2")
    data = Produced(broker.port)
    for topic in ("l-a", "l-b"):
        for partition in (0, 1):
            data.send(topic, partition, 30, "one")
    data.send("l-a", 0, 20, "gz", codec=1)
    for topic in ("l-a", "l-b"):
        wait_topic_registered(zk_client, topic, [0])

    lines: list[str] = []
    first = load(spark, zk_connect, ["l-a", "l-b"], out, progress=lines.append)
    assert (first.run, first.rows, first.ranges) == (1, 140, 4)
    assert loaded_rows(spark, out) == sorted(data.rows)
    assert any(line.startswith("run 1: 140 rows") and "rows/s" in line for line in lines)

    before = len(data.rows)
    data.send("l-a", 1, 7, "two")
    data.send("l-b", 0, 5, "two", codec=2)
    second = load(spark, zk_connect, ["l-a", "l-b"], out)
    assert (second.run, second.rows, second.ranges) == (2, 12, 2)
    assert loaded_rows(spark, out) == sorted(data.rows)
    assert len(data.rows) == before + 12

    stored = OffsetStore(out).current()
    assert stored is not None and stored.run == 2
    ends = {
        (t, p): max(r[5] for r in data.rows if (r[0], r[2]) == (t, p)) for t in ("l-a", "l-b") for p in (0, 1)
    }
    assert stored.offsets == {TopicPartition(t, 0, p): end for (t, p), end in ends.items()}

    third = load(spark, zk_connect, ["l-a", "l-b"], out)
    assert third.run is None and third.rows == 0
    assert OffsetStore(out).runs() == [1, 2]


def run_loader_cli(zk_connect: str, out: Path, exit_at: str | None) -> subprocess.CompletedProcess:
    return loader_cli(["-z", zk_connect], "k-a,k-b", out, exit_at)


@pytest.mark.timeout(300)
def test_loader_killed_around_the_commit_loses_and_duplicates_nothing(
    spark, start_broker, zk_connect, zk_client, tmp_path
):
    out = tmp_path / "table"
    broker = start_broker(0, num_partitions="2")
    data = Produced(broker.port)
    for partition in (0, 1):
        data.send("k-a", partition, 25, "one")
    data.send("k-b", 0, 10, "one", codec=1)
    for topic in ("k-a", "k-b"):
        wait_topic_registered(zk_client, topic, [0])

    # killed after writing its data, right before publishing the offsets: nothing is visible, nothing stored
    died = run_loader_cli(zk_connect, out, "before-publish")
    assert died.returncode == EXIT_HOOK_STATUS, died.stderr[-3000:]
    assert list((out / "_staging").iterdir()), "the run had written its data"
    assert visible_files(out) == []
    assert OffsetStore(out).runs() == []

    data.send("k-a", 1, 6, "two")
    # killed right after publishing: the offsets are committed, the files still staged
    died = run_loader_cli(zk_connect, out, "after-publish")
    assert died.returncode == EXIT_HOOK_STATUS, died.stderr[-3000:]
    assert OffsetStore(out).runs() == [1]
    assert visible_files(out) == []

    data.send("k-b", 1, 4, "three", codec=2)
    done = run_loader_cli(zk_connect, out, None)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "finished committed run 1" in done.stderr
    assert done.stdout.startswith("zkafka spark load: run 2: 4 rows"), done.stdout
    assert OffsetStore(out).runs() == [1, 2]
    assert loaded_rows(spark, out) == sorted(data.rows)
    assert all(p.name.startswith(("run-000001-", "run-000002-")) for p in visible_files(out))

    shown = CliRunner().invoke(main, ["spark", "offsets", "-o", str(out)])
    assert shown.exit_code == 0, shown.output
    stored = json.loads(shown.output)
    assert stored["run"] == 2 and stored["rows"] == 4
    assert stored["offsets"]["k-b"]["0-1"] == max(r[5] for r in data.rows if (r[0], r[2]) == ("k-b", 1))

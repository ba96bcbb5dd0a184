"""The streaming driver killed with SIGKILL after the sink committed a micro-batch and before Spark's commit
log has it: the restarted query replays that batch with the offsets its offset log holds (the source reads
exactly the same rows again, even with more data there by then), and every row ends in the sink once."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.consumers08 import start_cluster08
from tests.support.spark import ROOT, produce08
from zkafka.utils import wait_until

pytestmark = [pytest.mark.spark, pytest.mark.integration]


def start_driver(bootstrap: str, out: Path, checkpoint: Path, hold: int, mode: str = "") -> subprocess.Popen:
    args = [
        sys.executable,
        "-m",
        "tests.support.spark_driver",
        bootstrap,
        str(out),
        str(checkpoint),
        str(hold),
    ]
    return subprocess.Popen(
        [*args, mode] if mode else args,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its JVM in the same process group: killed with it, as when a host dies
    )


def kill_group(driver: subprocess.Popen) -> None:
    try:
        os.killpg(driver.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    driver.wait(30)


def batches(out: Path) -> dict[int, list[tuple]]:
    return {
        int(f.stem): [(t, p, o, base64.b64decode(v)) for t, p, o, v in json.loads(f.read_text())]
        for f in out.glob("*.json")
    }


def produce(brokers, tag: str) -> list[tuple]:
    rows = []
    for partition in (0, 1):
        pairs = [(None, f"{tag}/{partition}/{i}".encode()) for i in range(20)]
        rows += [(t, p, o, v) for t, p, o, _k, v in produce08(brokers, "kill", partition, pairs)]
    return rows


@pytest.mark.timeout(300)
def test_a_driver_killed_between_the_sink_and_the_commit_log_replays_the_same_rows_once(
    start_broker08, zk_client, tmp_path
):
    brokers = start_cluster08(start_broker08, zk_client, 1, {"kill": 2})
    bootstrap = f"127.0.0.1:{brokers[0].port}"
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    out.mkdir()
    first = produce(brokers, "first")
    driver = start_driver(bootstrap, out, checkpoint, hold=1)
    try:
        wait_until(lambda: (out / "sunk-0").exists(), 120, interval=0.2, message="batch 0 in the sink")
        second = produce(brokers, "second")
        wait_until(lambda: (out / "sunk-1").exists(), 60, interval=0.2, message="batch 1 in the sink")
        held = batches(out)[1]
    finally:
        kill_group(driver)
    assert not (checkpoint / "commits" / "1").exists() and (checkpoint / "offsets" / "1").exists()
    third = produce(brokers, "third")  # there when the query restarts: not part of the replayed batch
    (out / "sunk-1").unlink()

    driver = start_driver(bootstrap, out, checkpoint, hold=-1, mode="available-now")
    try:
        assert driver.wait(180) == 0, driver.stderr.read().decode()[-2000:]
    finally:
        kill_group(driver)
    written = batches(out)
    assert (out / "sunk-1").exists() and sorted(written[1]) == sorted(held)  # the same rows, replayed
    rows = [row for batch in written.values() for row in batch]
    assert sorted(rows) == sorted(first + second + third)  # every row once

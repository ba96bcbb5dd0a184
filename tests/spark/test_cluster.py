"""The loader on a Spark standalone cluster: a master and two workers (one core each) started from the installed
pyspark, ``zkafka spark load --master spark://...`` reading a 0.8 topic's partitions on executors of both
workers, and one worker killed (kill -9 of its process group: the worker, its executor and Python workers) once
its executor has finished a task (the driver has its result) and runs another. Spark runs the lost tasks again on
the other worker; the table holds every message exactly once, and the run says which executor read each
partition. Figures go to the terminal summary.

A task would read its partition in a few milliseconds, too short a time to find one running; the brokers hold
the loader's client id to a consumer byte rate (a client quota, measured over two 1 s windows), so that each
task reads for a second or more.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.request

import pytest

from tests.support.consumers08 import produce08, start_cluster08
from tests.support.drills import FIGURES
from tests.support.quotas import hold_consumer
from tests.support.spark import ROOT, loader_command
from zkafka.launch.spark_standalone import SparkStandalone
from zkafka.launch.zookeeper_server import free_port
from zkafka.spark.cluster08 import CLIENT_ID
from zkafka.utils import wait_until

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(360)]

PARTITIONS = 8
MESSAGES = 8000
BYTE_RATE = 30 * 1024  # per broker: ~180 KB each to read, a task's ~45 KB in 1-3 s


@pytest.fixture
def spark_cluster(tmp_path):
    cluster = SparkStandalone(tmp_path / "spark", workers=2, cores=1, memory="768m")
    try:
        yield cluster.start()
    finally:
        cluster.stop()


def executor_log(cluster: SparkStandalone, worker: int) -> str:
    """The worker's executors' stderr (INFO: each task attempt's start and end), from its work directory."""
    logs = (cluster.root / f"worker-{worker}").glob("app-*/*/stderr")
    return "".join(log.read_text(errors="replace") for log in logs)


def busy_after_a_task(cluster: SparkStandalone, worker: int, driver_ui: str) -> bool:
    """The worker's executor is running a task after finishing others whose results the driver has taken. The
    executor logs a finished task before the driver has its result; a kill in between makes the driver run that
    task again elsewhere, so the driver's own count (its REST API) has to match the executor's log."""
    try:
        with urllib.request.urlopen(f"{driver_ui}/api/v1/applications", timeout=2) as answer:
            app = json.load(answer)[0]["id"]
        with urllib.request.urlopen(f"{driver_ui}/api/v1/applications/{app}/executors", timeout=2) as answer:
            completed = {e["id"]: e["completedTasks"] for e in json.load(answer)}
    except (OSError, ValueError, IndexError, KeyError):
        return False
    for log in (cluster.root / f"worker-{worker}").glob("app-*/*/stderr"):
        text = log.read_text(errors="replace")
        finished = text.count("Executor: Finished task")
        if 0 < finished == completed.get(log.parent.name) and finished < text.count("Executor: Running task"):
            return True
    return False


def test_loader_on_a_standalone_cluster_survives_a_worker_killed_mid_job(
    spark, spark_cluster, start_broker08, zk_client, zk_connect, tmp_path
):
    windows = {"quota.window.num": "2", "quota.window.size.seconds": "1"}
    brokers = start_cluster08(start_broker08, zk_client, 2, {"c": PARTITIONS}, **windows)
    values = produce08(brokers, "c", MESSAGES, prefix="cluster")
    hold_consumer(zk_connect, brokers, CLIENT_ID, BYTE_RATE)  # zkafka configs, as kafka-configs.sh
    bootstrap = ",".join(f"127.0.0.1:{b.port}" for b in brokers)
    out = tmp_path / "table"
    args, env = loader_command(["-b", bootstrap], "c", out)
    args += ["--master", spark_cluster.url, "--fetch-size", "4096"]
    ui_port = free_port()
    for key, value in {
        "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
        "spark.executor.memory": "512m", "spark.executor.cores": "1", "spark.cores.max": "2",
        "spark.ui.enabled": "true", "spark.ui.port": str(ui_port),
        # the REST counts written at every task event: at the default 100 ms a task's end that follows the
        # next task's start within that time is not written until the executor's next event
        "spark.ui.liveUpdate.period": "0",
    }.items():  # fmt: skip
        args += ["--conf", f"{key}={value}"]
    stderr_path = tmp_path / "load.err"
    began = time.monotonic()
    with open(stderr_path, "wb") as stderr:
        loader = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=stderr)
    try:
        driver_ui = f"http://127.0.0.1:{ui_port}"
        wait_until(
            lambda: busy_after_a_task(spark_cluster, 2, driver_ui),
            180,
            interval=0.01,
            message="worker 2's second task",
        )
        spark_cluster.workers[1].kill()
        killed = time.monotonic()
        stdout, _ = loader.communicate(timeout=240)
    finally:
        if loader.poll() is None:
            loader.kill()
            loader.wait()
    log = stderr_path.read_text(errors="replace")
    assert loader.returncode == 0, log[-3000:]
    assert "Lost executor" in log, "the worker's executor was not lost"
    # the task it was running ran again (a second attempt, "task N.1") on the other worker
    cut_short = set(re.findall(r"Running task (\d+)\.0 ", executor_log(spark_cluster, 2))) - set(
        re.findall(r"Finished task (\d+)\.0 ", executor_log(spark_cluster, 2))
    )
    retried = set(re.findall(r"Running task (\d+)\.1 ", executor_log(spark_cluster, 1)))
    assert cut_short and cut_short <= retried, f"tasks cut short {cut_short}, run again {retried}"

    rows = [bytes(r.value) for r in spark.read.parquet(str(out)).select("value").collect()]
    assert len(rows) == len(set(rows)) == MESSAGES, f"{len(rows)} rows, {len(set(rows))} distinct"
    assert set(rows) == values
    readers = [line.split(" read by ", 1)[1] for line in log.splitlines() if " read by " in line]
    workers = {name.rsplit(" on ", 1)[1] for line in readers for name in line.split(", ")}
    assert len(readers) == PARTITIONS and len(workers) == 2, f"partitions read by {readers}"
    figures = {
        "rows": len(rows), "tasks_retried": sorted(retried, key=int), "after_kill_s": round(time.monotonic() - killed, 1),
        "total_s": round(time.monotonic() - began, 1), "readers": sorted(set(readers)),
    }  # fmt: skip
    FIGURES.append(("spark standalone, worker killed mid-job", figures))
    print(f"\n{stdout.decode().strip()}\n{figures}")

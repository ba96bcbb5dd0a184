"""Run a Spark standalone cluster (a master and workers) from the installed pyspark, as child processes.

Each daemon is ``spark-class org.apache.spark.deploy.master.Master`` or ``...worker.Worker`` from pyspark's
``bin``, in its own process group (a worker's executors and their Python workers are in it too, so killing
the group is a host going away), with its log in the cluster's directory. The master's web UI answers
``/json/`` with its alive workers, which is how a start waits for them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

from zkafka.launch.zookeeper_server import free_port

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
# No REST submission server (it would take port 6066), a small daemon heap, the C1 compiler only.
DAEMON_OPTS = "-Dspark.master.rest.enabled=false -XX:TieredStopAtLevel=1"


def spark_class() -> str:
    """pyspark's ``bin/spark-class``."""
    import pyspark

    return str(Path(pyspark.__file__).resolve().parent / "bin" / "spark-class")


class SparkDaemon:
    """One master or worker process."""

    def __init__(self, name: str, args: list[str], log_path: Path, host: str) -> None:
        self.name, self.args, self.log_path, self.host = name, args, log_path, host
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> SparkDaemon:
        env = {
            **os.environ,
            "SPARK_LOCAL_IP": self.host,
            "SPARK_DAEMON_JAVA_OPTS": DAEMON_OPTS,
            "SPARK_DAEMON_MEMORY": "256m",
        }
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [spark_class(), *self.args],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        return self

    def kill(self) -> None:
        """kill -9 the daemon's process group: the daemon, and a worker's executors with their Python workers."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()

    def stop(self, timeout: float = 20.0) -> None:
        """SIGTERM to the process group, then SIGKILL after ``timeout`` seconds."""
        process = self.process
        if process is None or process.poll() is not None:
            self.process = None
            return
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout)
            self.process = None
        except subprocess.TimeoutExpired:
            self.kill()

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "".join(self.log_path.read_text(errors="replace").splitlines(True)[-lines:])
        except OSError:
            return ""


class SparkStandalone:
    """A master and ``workers`` workers on ``host``, each with ``cores`` cores and ``memory`` for executors."""

    def __init__(
        self, root: str | os.PathLike, workers: int = 2, cores: int = 1, memory: str = "1g", host: str = "127.0.0.1"
    ) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.host = host
        self.port, self.webui_port = free_port(host), free_port(host)
        master_args = [MASTER_CLASS, "--host", host, "--port", str(self.port), "--webui-port", str(self.webui_port)]
        self.master = SparkDaemon("master", master_args, self.root / "master.log", host)
        self.workers = [
            SparkDaemon(
                f"worker-{i}",
                [WORKER_CLASS, "--host", host, "--cores", str(cores), "--memory", memory, "--webui-port", "0",
                 "--work-dir", str(self.root / f"worker-{i}"), self.url],
                self.root / f"worker-{i}.log",
                host,
            )  # fmt: skip
            for i in range(1, workers + 1)
        ]

    @property
    def url(self) -> str:
        """The master URL for ``--master``."""
        return f"spark://{self.host}:{self.port}"

    def start(self, timeout: float = 90.0) -> SparkStandalone:
        """Start the master and the workers; wait until every worker is alive at the master."""
        self.master.start()
        for worker in self.workers:
            worker.start()
        deadline = time.monotonic() + timeout
        while self.alive_workers() < len(self.workers):
            if time.monotonic() > deadline or self.master.process is None or self.master.process.poll() is not None:
                self.stop()
                raise RuntimeError(
                    f"Spark master {self.url}: {self.alive_workers()} of {len(self.workers)} workers alive after "
                    f"{timeout:.0f}s; log {self.master.log_path}:\n{self.master.log_tail()}"
                )
            time.sleep(0.2)
        return self

    def state(self) -> dict:
        """The master's ``/json/`` view (workers, applications); empty when it does not answer."""
        try:
            with urllib.request.urlopen(f"http://{self.host}:{self.webui_port}/json/", timeout=2) as answer:
                return json.load(answer)
        except (OSError, ValueError):
            return {}

    def alive_workers(self) -> int:
        return int(self.state().get("aliveworkers", 0))

    def stop(self) -> None:
        """Stop the workers (their executors with them), then the master."""
        for worker in self.workers:
            worker.stop()
        self.master.stop()

    def __enter__(self) -> SparkStandalone:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

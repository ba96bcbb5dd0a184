"""One broker (0.7 or 0.8 line) as a ``zkafka broker start`` child process, for the benchmarks (its work off
their GIL)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

from zkafka.launch.zookeeper_server import ZooKeeperServer, free_port
from zkafka.utils import wait_until

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def start_broker(
    work: str,
    zk_connect: str,
    partitions: int,
    name: str = "broker",
    launcher: tuple[str, ...] = ("-m", "zkafka.cli"),
    **props: str,
):
    """Start broker 0 with its log in ``work/<name>``; returns (process, port) once it listens.

    ``launcher`` is what runs the CLI (``-m benchmarks.slow_disk 200`` for a slow disk).
    """
    port = free_port()
    settings = {
        "brokerid": "0",
        "hostname": "127.0.0.1",
        "port": str(port),
        "log.dir": os.path.join(work, name),
        "zk.connect": zk_connect,
        "num.partitions": str(partitions),
        "log.flush.interval": "10000",
        "log.default.flush.scheduler.interval.ms": "200",
        "socket.send.buffer": str(1024 * 1024),
        "max.socket.request.bytes": str(200 * 1024 * 1024),
        **{k.replace("_", "."): str(v) for k, v in props.items()},
    }
    return _start(work, name, settings, port, launcher)


def start_broker08(
    work: str,
    zk_connect: str,
    partitions: int,
    name: str = "broker08",
    launcher: tuple[str, ...] = ("-m", "zkafka.cli"),
    **props: str,
):
    """Start 0.8 broker 0 with its log in ``work/<name>``; returns (process, port) once it listens."""
    port = free_port()
    settings = {
        "broker.id": "0",
        "host.name": "127.0.0.1",
        "advertised.host.name": "127.0.0.1",
        "port": str(port),
        "log.dirs": os.path.join(work, name),
        "zookeeper.connect": zk_connect,
        "num.partitions": str(partitions),
        "socket.send.buffer.bytes": str(1024 * 1024),
        **{k.replace("_", "."): str(v) for k, v in props.items()},
    }
    return _start(work, name, settings, port, launcher)


@contextmanager
def broker08_cluster(partitions: int, **props: str) -> Iterator[tuple[str, int]]:
    """A ZooKeeper and 0.8 broker 0 (``start_broker08``) in a temporary directory for the length of the
    block: yields ``(zk_connect, broker port)``; stops the broker, then ZooKeeper."""
    with tempfile.TemporaryDirectory() as work, ZooKeeperServer(os.path.join(work, "zk")) as zookeeper:
        proc, port = start_broker08(work, zookeeper.connect_string, partitions, **props)
        try:
            yield zookeeper.connect_string, port
        finally:
            proc.terminate()
            proc.wait(30)


def _start(
    work: str,
    name: str,
    settings: dict[str, str],
    port: int,
    launcher: tuple[str, ...] = ("-m", "zkafka.cli"),
):
    path = os.path.join(work, f"{name}.properties")
    with open(path, "w") as handle:
        handle.write("".join(f"{k}={v}\n" for k, v in settings.items()))
    with open(os.path.join(work, f"{name}.log"), "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, *launcher, "broker", "start", path],
            cwd=work,  # not the checkout: ``-m`` puts the working directory first on the path
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            # the checkout's zkafka, whatever the caller's PYTHONPATH (a relative one would miss from cwd)
            env={**os.environ, "PYTHONPATH": os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")])},
        )

    def listening() -> bool:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            return proc.poll() is not None and _raise(proc)

    wait_until(listening, 30, 0.1, "broker listening")
    return proc, port


def _raise(proc: subprocess.Popen) -> bool:
    raise RuntimeError(f"broker exited with status {proc.returncode}")

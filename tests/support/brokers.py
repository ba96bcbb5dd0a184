"""Pytest fixtures for real brokers: in-process (own thread and gevent hub) and as `zkafka broker start` children.

Registered as a plugin by tests/conftest.py: ``start_broker`` and ``broker_process`` are in every test's scope.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from zkafka.config07 import BrokerConfig
from zkafka.launch.zookeeper_server import free_port
from zkafka.server.start import BrokerThread

# Every append flushed at once, so tests can fetch what they produced without waiting for the flusher.
TEST_BROKER_PROPS = {
    "hostname": "127.0.0.1",
    "port": "0",
    "num.partitions": "4",
    "log.flush.interval": "1",
    "log.default.flush.scheduler.interval.ms": "50",
    "zk.sessiontimeout.ms": "4000",
}


def broker_config(broker_id: int, log_dir: Path, zk_connect: str | None, **overrides: str) -> BrokerConfig:
    props = {**TEST_BROKER_PROPS, "brokerid": str(broker_id), "log.dir": str(log_dir)}
    if zk_connect is None:
        props["enable.zookeeper"] = "false"
    else:
        props["zk.connect"] = zk_connect
    props.update({k.replace("_", "."): str(v) for k, v in overrides.items()})
    return BrokerConfig(props)


@pytest.fixture
def start_broker(tmp_path: Path, zk_connect: str) -> Iterator:
    """Factory: ``start_broker(id, **props)`` runs an in-process broker, stopped at the end of the test."""
    started: list[BrokerThread] = []

    def start(broker_id: int = 0, zk: str | None = zk_connect, **overrides: str) -> BrokerThread:
        config = broker_config(broker_id, tmp_path / f"broker-{broker_id}", zk, **overrides)
        broker = BrokerThread(config).start()
        started.append(broker)
        return broker

    try:
        yield start
    finally:
        for broker in reversed(started):
            broker.stop()


class BrokerProcess:
    """A broker run as ``zkafka broker start`` in a child process (for SIGTERM and kill -9)."""

    def __init__(self, props_path: Path, port: int) -> None:
        self.props_path = props_path
        self.port = port
        self.proc: subprocess.Popen | None = None

    def start(self) -> BrokerProcess:
        log = open(self.props_path.with_suffix(".log"), "ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "zkafka.cli", "broker", "start", str(self.props_path)],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        return self

    def log_text(self) -> str:
        return self.props_path.with_suffix(".log").read_text(errors="replace")

    def signal(self, signum: int) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signum)

    def wait(self, timeout: float = 30.0) -> int:
        return self.proc.wait(timeout)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


@pytest.fixture
def broker_process(tmp_path: Path, zk_connect: str) -> Iterator:
    """Factory: ``broker_process(id, **props)`` writes a server.properties and starts a child broker."""

    def props(broker_id: int, port: int) -> dict[str, str]:
        return {
            **TEST_BROKER_PROPS,
            "brokerid": str(broker_id),
            "port": str(port),
            "zk.connect": zk_connect,
            "log.dir": str(tmp_path / f"broker-{broker_id}"),
        }

    yield from broker_processes(tmp_path / "server", props)


def broker_processes(path_prefix: Path, props: Callable[[int, int], dict[str, str]]) -> Iterator:
    """A fixture body for either line: yields ``make(id, **overrides)``, which writes
    ``<path_prefix>-<id>.properties`` from ``props(id, port)`` and the overrides (``{port}`` in a value: the
    broker's port, as ``listeners=PLAINTEXT://127.0.0.1:{port},...``) and starts a child broker; stops every
    one started at the end."""
    started: list[BrokerProcess] = []

    def make(broker_id: int = 0, **overrides: str) -> BrokerProcess:
        port = free_port()
        settings = props(broker_id, port)
        settings.update({k.replace("_", "."): str(v).replace("{port}", str(port)) for k, v in overrides.items()})
        path = path_prefix.parent / f"{path_prefix.name}-{broker_id}.properties"
        path.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        proc = BrokerProcess(path, port).start()
        started.append(proc)
        return proc

    try:
        yield make
    finally:
        for proc in started:
            proc.stop()


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True

"""SIGHUP (the terminal closed) stops every long-running command as Ctrl-C does: it ends on its own, with no
traceback, and leaves nothing running (the broker's and the demo's own tests are with their other stops).

Real commands in child processes against a real ZooKeeper and broker.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys

import pytest

from zkafka.launch.zookeeper_server import free_port, is_serving
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "zkafka.cli", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def hang_up(proc: subprocess.Popen, expected_status: int = 0) -> str:
    """SIGHUP, then the command's exit (30 s: a hang detector); its stderr."""
    proc.send_signal(signal.SIGHUP)
    try:
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert "Traceback" not in err, err
    assert proc.returncode == expected_status, err
    return err


def test_zookeeper_start_stops_its_server_on_sighup(tmp_path):
    port = free_port()
    proc = start("zookeeper", "start", "--port", str(port), "--data-dir", str(tmp_path / "zk"))
    wait_until(lambda: is_serving("127.0.0.1", port), 30, message="ZooKeeper serving")
    hang_up(proc)
    assert not is_serving("127.0.0.1", port)


def test_ui_stops_on_sighup(zk_connect):
    port = free_port()
    proc = start("ui", "--zookeeper", zk_connect, "--port", str(port))
    wait_until(lambda: listening(port), 30, message="the ui serving")
    hang_up(proc)
    assert not listening(port)


def test_console_consumer_leaves_its_group_on_sighup(start_broker08, zk_connect, zk_client):
    start_broker08(0)
    proc = start("console-consumer", "--zookeeper", zk_connect, "--topic", "t", "--group", "hup")
    ids = "/consumers/hup/ids"
    wait_until(
        lambda: zk_client.exists(ids) and zk_client.get_children(ids), 30, message="consumer registered"
    )
    hang_up(proc)
    assert zk_client.get_children(ids) == []


def test_console_producer_sends_what_it_read_on_sighup(start_broker08, zk_connect):
    broker = start_broker08(0)
    proc = start("console-producer", "--broker-list", f"127.0.0.1:{broker.port}", "--topic", "t", "--sync")
    proc.stdin.write("before the hangup\n")
    proc.stdin.flush()
    log = wait_until(lambda: broker.server.log_manager.get_log("t", 0), 30, message="the topic created")
    wait_until(lambda: log.log_end_offset == 1, 30, message="the line appended")
    hang_up(proc)


def test_under_nohup_sighup_stays_ignored(tmp_path):
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "zkafka.cli",
            "zookeeper",
            "start",
            "--port",
            str(port),
            "--data-dir",
            str(tmp_path),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN),  # what nohup does
    )
    try:
        wait_until(lambda: is_serving("127.0.0.1", port), 30, message="ZooKeeper serving")
        proc.send_signal(signal.SIGHUP)
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(2)  # still running: a stop would take well under this
        assert is_serving("127.0.0.1", port)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    finally:
        proc.kill()
        proc.communicate()


def test_perf_consume_stops_on_sighup(start_broker08, zk_connect, zk_client):
    start_broker08(0)
    proc = start("perf", "consume", "--zookeeper", zk_connect, "--topic", "t", "--group", "hup",
                 "--consumer-timeout-ms", "600000")  # fmt: skip
    ids = "/consumers/hup/ids"
    wait_until(
        lambda: zk_client.exists(ids) and zk_client.get_children(ids), 30, message="consumer registered"
    )
    assert hang_up(proc, expected_status=1).split() == ["Aborted!"]  # as on Ctrl-C (click)

"""`zkafka zookeeper start` runs a real ZooKeeper in the foreground and stops it on SIGTERM."""

import signal
import subprocess
import sys

import pytest

from zkafka.launch.zookeeper_server import four_letter_word, free_port
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration


def answers(port):
    try:
        return four_letter_word("127.0.0.1", port, "ruok", timeout=1) == "imok"
    except OSError:
        return False


def test_zookeeper_start_from_properties_then_sigterm(tmp_path):
    port = free_port()
    props = tmp_path / "zookeeper.properties"
    props.write_text(f"dataDir={tmp_path / 'zk'}\nclientPort={port}\nmaxClientCnxns=0\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "zkafka.cli", "zookeeper", "start", str(props)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        wait_until(lambda: answers(port), timeout=30, message="ZooKeeper answering ruok")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
        wait_until(lambda: not answers(port), timeout=10, message="ZooKeeper stopped")
        assert (tmp_path / "zk").is_dir()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

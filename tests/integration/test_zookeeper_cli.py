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


def start_cli(props, *args):
    return subprocess.Popen(
        [sys.executable, "-m", "zkafka.cli", "zookeeper", "start", str(props), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def test_zookeeper_start_runs_an_ensemble_member_from_server_lines_and_myid(tmp_path):
    ports = {i: (free_port(), free_port(), free_port()) for i in (1, 2, 3)}
    servers = "".join(f"server.{i}=127.0.0.1:{q}:{e}\n" for i, (_, q, e) in ports.items())
    procs = []
    try:
        for i, (client, _, _) in ports.items():
            (tmp_path / f"zk{i}").mkdir()
            props = tmp_path / f"zoo{i}.cfg"
            props.write_text(f"tickTime=200\ninitLimit=10\nsyncLimit=5\ndataDir={tmp_path / f'zk{i}'}\n"
                             f"clientPort={client}\nclientPortAddress=127.0.0.1\n4lw.commands.whitelist=*\n{servers}")  # fmt: skip
            # zookeeper-server-start.sh's way for two of them (myid written by hand), --myid for the third
            if i < 3:
                (tmp_path / f"zk{i}" / "myid").write_text(f"{i}\n")
            procs.append(start_cli(props, *(["--myid", "3"] if i == 3 else [])))

        def modes():
            out = []
            for client, _, _ in ports.values():
                try:
                    srvr = four_letter_word("127.0.0.1", client, "srvr", timeout=1)
                except OSError:
                    return None
                out += [line.split()[1] for line in srvr.splitlines() if line.startswith("Mode:")]
            return sorted(out) if len(out) == 3 else None

        assert wait_until(modes, timeout=60, message="a leader and two followers") == ["follower", "follower", "leader"]
        assert (tmp_path / "zk3" / "myid").read_text().strip() == "3"
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            assert proc.wait(30) == 0


def test_zookeeper_start_of_an_ensemble_member_without_myid_names_the_file(tmp_path):
    props = tmp_path / "zoo.cfg"
    props.write_text(f"dataDir={tmp_path / 'zk'}\nclientPort={free_port()}\nserver.1=127.0.0.1:2888:3888\n")
    proc = start_cli(props)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert f"{tmp_path / 'zk'}/myid is missing" in err.decode()

"""A real ZooKeeper server as a child process: start, stop, chroots, ephemerals and forced expiry."""

from __future__ import annotations

import os
import threading
import uuid

import pytest
from kazoo.client import KazooClient, KazooState

from zkafka.launch.zookeeper_server import (
    ZooKeeperError,
    ZooKeeperNotFound,
    ZooKeeperServer,
    expire_session,
    find_zookeeper_classpath,
    four_letter_word,
)
from zkafka.utils import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def started_client(hosts: str, **kwargs: object) -> KazooClient:
    client = KazooClient(hosts=hosts, **kwargs)
    client.start(timeout=10)
    return client


def closed(client: KazooClient) -> None:
    client.stop()
    client.close()


class StateLog:
    """Records every kazoo state change of a client."""

    def __init__(self, client: KazooClient) -> None:
        self.states: list[str] = []
        self._lock = threading.Lock()
        client.add_listener(self._record)

    def _record(self, state: str) -> None:
        with self._lock:
            self.states.append(state)

    def saw(self, state: str) -> bool:
        with self._lock:
            return state in self.states


def test_server_answers_ruok(zookeeper_server: ZooKeeperServer) -> None:
    host, port = zookeeper_server.connect_string.split(":")
    assert four_letter_word(host, int(port), "ruok") == "imok"
    assert "Mode: standalone" in four_letter_word(host, int(port), "srvr")
    assert zookeeper_server.is_running()


def test_client_creates_and_reads_node(zk_client: KazooClient) -> None:
    zk_client.create("/brokers/ids/0", b"127.0.0.1-1:9092", makepath=True)
    data, stat = zk_client.get("/brokers/ids/0")
    assert data == b"127.0.0.1-1:9092"
    assert zk_client.get_children("/brokers/ids") == ["0"]


def test_chroots_are_isolated(
    zookeeper_server: ZooKeeperServer, zk_connect: str, zk_client: KazooClient
) -> None:
    root = started_client(zookeeper_server.connect_string)
    other_chroot = f"/t{uuid.uuid4().hex}"
    root.create(other_chroot)
    other = started_client(zookeeper_server.connect_string + other_chroot)
    try:
        zk_client.create("/only-here", b"a")
        other.create("/only-there", b"b")
        assert other.exists("/only-here") is None
        assert zk_client.exists("/only-there") is None
        mine = zk_connect[len(zookeeper_server.connect_string) :]
        assert root.get(f"{mine}/only-here")[0] == b"a"
        assert root.get(f"{other_chroot}/only-there")[0] == b"b"
    finally:
        closed(other)
        root.delete(other_chroot, recursive=True)
        closed(root)


def test_ephemeral_node_vanishes_when_client_closes(zk_connect: str, zk_client: KazooClient) -> None:
    owner = started_client(zk_connect)
    owner.create("/ephemeral", b"x", ephemeral=True)
    assert zk_client.exists("/ephemeral") is not None
    closed(owner)
    wait_until(lambda: zk_client.exists("/ephemeral") is None, message="ephemeral node to vanish")


def test_second_server_stops_its_process(tmp_path, zookeeper_server: ZooKeeperServer) -> None:
    with ZooKeeperServer(str(tmp_path), tick_time=200) as server:
        pid = server.pid
        assert pid is not None and pid != zookeeper_server.pid
        assert server.port != zookeeper_server.port
        assert four_letter_word(server.host, server.port, "ruok") == "imok"
        assert os.path.isfile(os.path.join(str(tmp_path), "zoo.cfg"))
    assert not server.is_running()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    # The shared server is untouched.
    assert four_letter_word(zookeeper_server.host, zookeeper_server.port, "ruok") == "imok"


def test_start_failure_raises_with_log_tail(tmp_path) -> None:
    server = ZooKeeperServer(str(tmp_path), extra={"tickTime": "not-a-number"})
    with pytest.raises(ZooKeeperError, match="exited with code"):
        server.start(timeout=30)
    assert not server.is_running()


def test_missing_install_says_how_to_install(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZOOKEEPER_HOME", str(tmp_path))
    with pytest.raises(ZooKeeperNotFound, match="apt-get install -y zookeeper"):
        find_zookeeper_classpath()


def test_expire_session_of_client(zk_connect: str, zk_client: KazooClient) -> None:
    victim = started_client(zk_connect)
    try:
        states = StateLog(victim)
        victim.create("/brokers/ids/1", b"broker-1", ephemeral=True, makepath=True)
        old_session_id = victim.client_id[0]

        expire_session(victim, zk_connect)

        assert states.saw(KazooState.LOST)
        wait_until(lambda: zk_client.exists("/brokers/ids/1") is None, message="ephemeral node to vanish")
        # kazoo opens a new session after the loss; the broker would re-register here.
        wait_until(lambda: victim.connected, message="client to reconnect")
        assert victim.client_id[0] != old_session_id
        victim.create("/brokers/ids/1", b"broker-1 again", ephemeral=True)
        assert zk_client.get("/brokers/ids/1")[0] == b"broker-1 again"
    finally:
        closed(victim)


def test_expire_session_by_id_and_password(zk_connect: str, zk_client: KazooClient) -> None:
    victim = started_client(zk_connect)
    try:
        states = StateLog(victim)
        victim.create("/ephemeral", b"x", ephemeral=True)

        expire_session(victim.client_id, zk_connect)

        wait_until(lambda: zk_client.exists("/ephemeral") is None, message="ephemeral node to vanish")
        wait_until(lambda: states.saw(KazooState.LOST), message="client to see LOST")
    finally:
        closed(victim)

"""Pytest fixtures: one real ZooKeeper server per test session and a fresh chroot per test.

The server is a local process or, when Docker can run one, a container (tests/support/zk_container.py);
ZKAFKA_TEST_ZK=process|container forces the choice, which the pytest header reports.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Iterator

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import NotEmptyError

from tests.support.zk_container import IMAGE, ZooKeeperContainer, choose_backend
from zkafka.launch.zookeeper_server import ZooKeeperError, ZooKeeperNotFound, ZooKeeperServer
from zkafka.utils import wait_until

# A short tick lets tests ask for sessions of a second or less; clients asking for more still get it.
TEST_TICK_TIME_MS = 200


def pytest_report_header(config: pytest.Config) -> str:
    backend, why = choose_backend()
    where = f"container {IMAGE} through testcontainers" if backend == "container" else "local process"
    return f"zookeeper: {where} ({why})"


@pytest.fixture(scope="session")
def zookeeper_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZooKeeperServer]:
    """A ZooKeeper server shared by the whole test session."""
    backend, why = choose_backend()
    if backend == "container":
        server = ZooKeeperContainer(tick_time=TEST_TICK_TIME_MS)
    else:
        server = ZooKeeperServer(str(tmp_path_factory.mktemp("zookeeper")), tick_time=TEST_TICK_TIME_MS)
    try:
        server.start()
    except (ZooKeeperNotFound, ZooKeeperError, ImportError) as e:
        pytest.fail(f"{backend} ZooKeeper ({why}): {e}")
    try:
        yield server
    finally:
        server.stop()


def started_client(connect_string: str) -> Iterator[KazooClient]:
    """A started client, stopped and closed when the generator is closed (``yield from`` it in a fixture)."""
    client = KazooClient(hosts=connect_string)
    client.start(timeout=10)
    try:
        yield client
    finally:
        client.stop()
        client.close()


@pytest.fixture(scope="session")
def zk_admin(zookeeper_server: ZooKeeperServer) -> Iterator[KazooClient]:
    """A client on the server's root, used to make and remove the per-test chroots."""
    yield from started_client(zookeeper_server.connect_string)


def fresh_chroot(server: ZooKeeperServer, admin: KazooClient, prefix: str) -> Iterator[str]:
    """A connect string with a new chroot ``/<prefix><uuid>``, removed when the generator is closed."""
    chroot = f"/{prefix}{uuid.uuid4().hex}"
    admin.create(chroot)
    try:
        yield server.connect_string + chroot
    finally:
        delete_tree(admin, chroot)


@pytest.fixture
def zk_connect(zookeeper_server: ZooKeeperServer, zk_admin: KazooClient) -> Iterator[str]:
    """A connect string with a fresh chroot, e.g. 127.0.0.1:2181/t0123abcd..., removed after the test."""
    yield from fresh_chroot(zookeeper_server, zk_admin, "t")


@pytest.fixture
def target_zk(zookeeper_server: ZooKeeperServer, zk_admin: KazooClient) -> Iterator[str]:
    """A second fresh chroot on the same server, for a second cluster (a mirror's or a migration's target)."""
    yield from fresh_chroot(zookeeper_server, zk_admin, "target")


@pytest.fixture
def zk_client(zk_connect: str) -> Iterator[KazooClient]:
    """A started kazoo client inside the test's chroot."""
    yield from started_client(zk_connect)


def delete_tree(client: KazooClient, path: str, timeout: float = 10.0) -> None:
    """Delete path and its children, retrying while a still-live session adds nodes under it."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            client.delete(path, recursive=True)
            return
        except NotEmptyError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.05)


def wait_topic_registered(
    zk: KazooClient, topic: str, broker_ids: Iterable[int], timeout: float = 15.0
) -> None:
    """Wait until exactly ``broker_ids`` have registered ``topic`` under /brokers/topics (0.7 layout)."""
    expected = sorted(broker_ids)
    path = f"/brokers/topics/{topic}"

    def registered() -> bool:
        return bool(zk.exists(path)) and sorted(map(int, zk.get_children(path))) == expected

    wait_until(registered, timeout, message=f"{topic} registered by brokers {expected}")

"""Fixtures of the container tests: ZooKeeper in a container for the integration subset, the compose
cluster for the fault drills, and the drills' figures at the end of the run.

Without a usable Docker engine these tests are skipped, saying why, unless ZKAFKA_REQUIRE_DOCKER=1 (CI),
which makes them fail instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from kazoo.client import KazooClient

from tests.support.drills import FIGURES  # noqa: F401 - the drills' figures, printed in the terminal summary
from tests.support.zk_container import ZooKeeperContainer, docker_problem
from tests.support.zookeeper import TEST_TICK_TIME_MS, started_client


def require_docker(image: str | None = None) -> None:
    """Skip (or, under ZKAFKA_REQUIRE_DOCKER=1, fail) when Docker cannot run the image."""
    require(docker_problem(image) if image else docker_problem())


def require(problem: str | None) -> None:
    """Skip saying why, or fail under ZKAFKA_REQUIRE_DOCKER=1; nothing when there is no problem."""
    if problem is None:
        return
    if os.environ.get("ZKAFKA_REQUIRE_DOCKER") == "1":
        pytest.fail(f"Docker is required (ZKAFKA_REQUIRE_DOCKER=1): {problem}", pytrace=False)
    pytest.skip(problem)


@pytest.fixture(scope="session")
def drill_images() -> None:
    """The fault drills' images and a compose command, or a skip (a failure under ZKAFKA_REQUIRE_DOCKER=1)."""
    from tests.containers.cluster import compose_command, zkafka_image
    from tests.support.zk_container import IMAGE as ZOOKEEPER_IMAGE

    require_docker(ZOOKEEPER_IMAGE)
    require_docker(zkafka_image())
    require(None if compose_command() else "no compose command: run scripts/docker-setup.sh")


@pytest.fixture(scope="session")
def zookeeper_container() -> Iterator[ZooKeeperContainer]:
    """ZooKeeper in a container on a free 127.0.0.1 port, for the whole session."""
    require_docker()
    with ZooKeeperContainer(tick_time=TEST_TICK_TIME_MS) as server:
        yield server


# The integration fixtures, pointed at the container for the tests of this directory. zk_admin is
# session-scoped, so it is redefined too: the suite's own instance belongs to the suite's own server.
@pytest.fixture(scope="session")
def zookeeper_server(zookeeper_container: ZooKeeperContainer) -> ZooKeeperContainer:
    return zookeeper_container


@pytest.fixture(scope="session")
def zk_admin(zookeeper_server: ZooKeeperContainer) -> Iterator[KazooClient]:
    yield from started_client(zookeeper_server.connect_string)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the item, so a fixture can tell at teardown that its test failed."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report

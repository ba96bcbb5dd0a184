"""ZooKeeper in a container (testcontainers) on the image scripts/build-images.sh builds, and the choice
between it and a local ZooKeeper process for the tests (``ZKAFKA_TEST_ZK=process|container``, default auto).
"""

from __future__ import annotations

import functools
import os
import time
import uuid

from zkafka.launch.zookeeper_server import ZooKeeperError, is_serving

IMAGE = os.environ.get("ZKAFKA_ZOOKEEPER_IMAGE", "zkafka/zookeeper:3.8")
CLIENT_PORT = 2181
LABEL = "org.zkafka.test"  # on every container the tests start, valued with the starting process id
BUILD_HINT = "build it with `bash scripts/build-images.sh`"


def docker_problem(image: str = IMAGE) -> str | None:
    """Why a container of ``image`` cannot be started here, or None when it can."""
    try:
        import docker
        import testcontainers  # noqa: F401
    except ImportError as exc:
        return f"{exc.name} is not installed (pip install -e '.[test]')"
    try:
        client = docker.from_env(timeout=5)
    except Exception as exc:
        return f"no Docker engine: {exc}"
    try:
        client.ping()
        client.images.get(image)
    except docker.errors.ImageNotFound:
        return f"image {image} is missing; {BUILD_HINT}"
    except Exception as exc:
        return f"Docker engine not reachable: {exc}"
    finally:
        client.close()
    return None


@functools.cache
def choose_backend() -> tuple[str, str]:
    """("process" | "container", why): ZKAFKA_TEST_ZK forces one; else a container when Docker can run it."""
    wanted = os.environ.get("ZKAFKA_TEST_ZK", "auto").strip().lower() or "auto"
    if wanted not in ("auto", "process", "container"):
        raise ValueError(f"ZKAFKA_TEST_ZK={wanted!r}: expected process, container or auto")
    if wanted == "process":
        return "process", "ZKAFKA_TEST_ZK=process"
    problem = docker_problem()
    if wanted == "container":
        return "container", problem or "ZKAFKA_TEST_ZK=container"
    if problem:
        return "process", f"no container: {problem}"
    return "container", "Docker is reachable"


class ZooKeeperContainer:
    """A standalone ZooKeeper in a container, published on a free 127.0.0.1 port; the face of ZooKeeperServer.

    Session timeouts are 2..max(20, 60 s / tick) ticks as for the local process, so tests may ask for short
    sessions. It runs on a network of its own, made for it and removed with it, unless ``network`` (a
    testcontainers Network of the test) and ``aliases`` attach it to one shared with other containers.
    """

    def __init__(
        self,
        tick_time: int = 2000,
        image: str = IMAGE,
        network=None,
        aliases: tuple[str, ...] = (),
        name: str | None = None,
    ) -> None:
        self.image = image
        self.tick_time = tick_time
        self.host = "127.0.0.1"
        self.port: int | None = None
        self.pid = None  # no local process
        self.network = network
        self._own_network = None
        self.aliases = aliases
        self.name = name or f"zkafka-test-zk-{uuid.uuid4().hex[:8]}"
        self.container = None
        self.start_seconds: float | None = None

    @property
    def connect_string(self) -> str:
        return f"{self.host}:{self.port}"

    def config(self) -> str:
        settings = {
            "tickTime": self.tick_time,
            "dataDir": "/data",
            "clientPort": CLIENT_PORT,
            "maxClientCnxns": 0,
            "minSessionTimeout": 2 * self.tick_time,
            "maxSessionTimeout": max(20 * self.tick_time, 60000),
            "admin.enableServer": "false",
            "4lw.commands.whitelist": "*",
            "forceSync": "no",
        }
        return "".join(f"{key}={value}\n" for key, value in settings.items())

    def start(self, timeout: float = 60.0) -> ZooKeeperContainer:
        """Start the container and wait until the server answers ruok and takes a client session."""
        from testcontainers.core.config import testcontainers_config
        from testcontainers.core.container import DockerContainer
        from testcontainers.core.network import Network

        # The reaper (Ryuk) is an image from a registry; this fixture removes what it starts itself.
        testcontainers_config.ryuk_disabled = True
        started = time.monotonic()
        container = DockerContainer(self.image, name=self.name)
        container.ports[f"{CLIENT_PORT}/tcp"] = ("127.0.0.1", None)  # loopback only, a free port
        container.with_copy_into_container(self.config().encode(), "/conf/zoo.cfg")
        container.with_kwargs(labels={LABEL: str(os.getpid())})
        network = self.network
        if network is None:
            network = self._own_network = Network(docker_network_kw={"labels": {LABEL: str(os.getpid())}})
            network.create()
        container.with_network(network).with_network_aliases("zookeeper", *self.aliases)
        self.container = container
        try:
            container.start()
            self.port = self._published_port()
            self._wait_serving(timeout - (time.monotonic() - started))
        except BaseException:
            self.stop()
            raise
        self.start_seconds = time.monotonic() - started
        return self

    def _published_port(self) -> int:
        wrapped = self.container.get_wrapped_container()
        wrapped.reload()
        return int(wrapped.attrs["NetworkSettings"]["Ports"][f"{CLIENT_PORT}/tcp"][0]["HostPort"])

    def _wait_serving(self, timeout: float) -> None:
        from kazoo.client import KazooClient

        deadline = time.monotonic() + timeout
        while not self.is_serving():
            if not self.is_running():
                raise ZooKeeperError(f"ZooKeeper container exited:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                raise ZooKeeperError(
                    f"ZooKeeper container not serving within {timeout:.0f}s:\n{self.log_tail()}"
                )
            time.sleep(0.1)
        client = KazooClient(hosts=self.connect_string)
        try:
            client.start(timeout=max(1.0, deadline - time.monotonic()))
        finally:
            client.stop()
            client.close()

    def is_running(self) -> bool:
        if self.container is None:
            return False
        wrapped = self.container.get_wrapped_container()
        try:
            wrapped.reload()
        except Exception:
            return False
        return wrapped.status == "running"

    def is_serving(self) -> bool:
        return is_serving(self.host, self.port)

    def log_tail(self, lines: int = 30) -> str:
        if self.container is None:
            return ""
        try:
            out = self.container.get_wrapped_container().logs(tail=lines)
        except Exception as exc:
            return f"(no logs: {exc})"
        return out.decode("utf-8", "replace")

    def stop(self) -> None:
        """Remove the container (and its anonymous volumes), then the network made for it."""
        container, self.container = self.container, None
        network, self._own_network = self._own_network, None
        try:
            if container is not None:
                container.stop(force=True, delete_volume=True)
        finally:
            if network is not None:
                network.remove()

    def __enter__(self) -> ZooKeeperContainer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"ZooKeeperContainer({self.image}, {self.connect_string}, name={self.name})"

"""The fault drills' cluster: compose/docker-compose.yml under a unique project name, load agents in
containers on its network, and reads of the brokers through their published 127.0.0.1 ports.

Everything a Cluster starts carries its project name and is removed by ``down()``: the compose services
and volumes, and the agent containers (label org.zkafka.drill=<project>).
"""

from __future__ import annotations

import configparser
import io
import json
import os
import subprocess
import tarfile
import time
import uuid
from pathlib import Path

from zkafka.consumer.simple07 import SimpleConsumer
from zkafka.launch.zookeeper_server import free_port
from zkafka.utils import wait_until

REPO = Path(__file__).resolve().parents[2]
COMPOSE_FILE = REPO / "compose" / "docker-compose.yml"
COMPOSE_FILE_08 = REPO / "compose" / "docker-compose-08.yml"  # the 0.8 line, replication factor 3
AGENT = Path(__file__).with_name("agent.py")
LABEL = "org.zkafka.drill"
BROKERS = (1, 2, 3)


def zkafka_image() -> str:
    setup = configparser.ConfigParser()
    setup.read(REPO / "setup.cfg")
    return os.environ.get("ZKAFKA_IMAGE", f"zkafka/zkafka:{setup['metadata']['version']}")


def compose_command() -> list[str] | None:
    """``docker compose`` (v2) where there is one, else Debian's ``docker-compose`` (v1), else None."""
    for command in (["docker", "compose"], ["docker-compose"]):
        try:
            subprocess.run([*command, "version"], capture_output=True, check=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            continue
        return command
    return None


class Cluster:
    """One ZooKeeper and three brokers from the compose file; ports published on free 127.0.0.1 ports."""

    def __init__(self, broker_session_ms: int = 3000, compose_file: Path = COMPOSE_FILE) -> None:
        import docker

        self.compose_file = compose_file
        self.project = f"zkdrill{uuid.uuid4().hex[:10]}"
        self.command = compose_command()
        if self.command is None:
            raise RuntimeError("no compose command: install docker-compose (scripts/docker-setup.sh)")
        self.env = {
            **os.environ,
            # A fixed port: the host's view of ZooKeeper stays put when the drill restarts it.
            "ZK_PORT": str(free_port()),
            "BROKER1_PORT": "",
            "BROKER2_PORT": "",
            "BROKER3_PORT": "",
            "BROKER1_METRICS_PORT": "",
            "BROKER2_METRICS_PORT": "",
            "BROKER3_METRICS_PORT": "",
            "BROKER_SESSION_TIMEOUT_MS": str(broker_session_ms),
            "ZKAFKA_IMAGE": zkafka_image(),
        }
        self.docker = docker.from_env(timeout=60)
        self.image = zkafka_image()
        self.network = f"{self.project}_default"

    # -- compose -------------------------------------------------------------------------------------------

    def compose(self, *args: str, timeout: float = 180) -> str:
        cmd = [*self.command, "-f", str(self.compose_file), "-p", self.project, *args]
        done = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
        return done.stdout

    def up(self, timeout: float = 90) -> float:
        """Start ZooKeeper and the brokers; return the seconds until every one is healthy."""
        started = time.monotonic()
        services = ["zookeeper", *(f"broker-{b}" for b in BROKERS)]
        self.compose("up", "-d", "--no-build", *services, timeout=timeout)
        self.wait_healthy(services, timeout - (time.monotonic() - started))
        return time.monotonic() - started

    def down(self) -> None:
        """Remove the agents, then the compose services, network and volumes of this project only."""
        for container in self.docker.containers.list(all=True, filters={"label": f"{LABEL}={self.project}"}):
            container.remove(force=True, v=True)
        self.compose("down", "-v", "--remove-orphans", "-t", "10", timeout=120)
        self.docker.close()

    def container(self, service: str):
        found = self.docker.containers.list(
            all=True,
            filters={
                "label": [
                    f"com.docker.compose.project={self.project}",
                    f"com.docker.compose.service={service}",
                ]
            },
        )
        if len(found) != 1:
            raise LookupError(f"{len(found)} containers for service {service} of {self.project}")
        return found[0]

    def health(self, service: str) -> str:
        container = self.container(service)
        state = container.attrs["State"]
        return state.get("Health", {}).get("Status", state["Status"])

    def wait_healthy(self, services: list[str], timeout: float = 60) -> None:
        wait_until(
            lambda: all(self.health(s) == "healthy" for s in services),
            timeout=timeout,
            interval=0.25,
            message=f"{', '.join(services)} healthy",
        )

    def published_port(self, service: str, private: int) -> int:
        container = self.container(service)
        container.reload()
        return int(container.attrs["NetworkSettings"]["Ports"][f"{private}/tcp"][0]["HostPort"])

    @property
    def zk_connect(self) -> str:
        """ZooKeeper as the host (the test) reaches it."""
        return f"127.0.0.1:{self.published_port('zookeeper', 2181)}"

    def broker_port(self, broker_id: int) -> int:
        return self.published_port(f"broker-{broker_id}", 9092)

    def metrics_port(self, broker_id: int) -> int:
        """Where the host reaches the broker's Prometheus metrics (``metrics.port=9100`` inside)."""
        return self.published_port(f"broker-{broker_id}", 9100)

    def logs(self, service: str, since: float | None = None) -> str:
        kwargs = {"since": int(since)} if since else {}
        return self.container(service).logs(**kwargs).decode("utf-8", "replace")

    # -- agents --------------------------------------------------------------------------------------------

    def run_agent(self, name: str, *args: str):
        """Start tests/containers/agent.py in the zkafka image on the cluster's network."""
        container = self.docker.containers.create(
            self.image,
            entrypoint=["python", "/drill/agent.py"],
            command=list(args),
            name=f"{self.project}-{name}",
            hostname=name,
            network=self.network,
            labels={LABEL: self.project},
            init=True,
            detach=True,
        )
        archive = io.BytesIO()
        with tarfile.open(fileobj=archive, mode="w") as tar:
            tar.add(str(AGENT), arcname="drill/agent.py")
        container.put_archive("/", archive.getvalue())
        container.start()
        return container

    @staticmethod
    def events(container) -> list[dict]:
        """The JSON lines an agent wrote to stdout so far."""
        out = container.logs(stdout=True, stderr=False).decode("utf-8", "replace")
        return [json.loads(line) for line in out.splitlines() if line.startswith("{")]

    @staticmethod
    def stop_agent(container, timeout: int = 20) -> int:
        """SIGTERM, wait for the agent's clean exit; its exit code."""
        container.stop(timeout=timeout)
        return container.wait(timeout=timeout)["StatusCode"]

    # -- the brokers seen from the host ----------------------------------------------------------------------

    def make_topic(self, topic: str) -> None:
        """Create ``topic`` on every broker (a produce to partition 0 of each), so that it is registered on all."""
        from tests.support.wire import Producer as RawProducer

        for broker in BROKERS:
            with RawProducer(self.broker_port(broker)) as producer:
                producer.send(topic, 0, [f"warmup:{broker}".encode()])

    def flushed_end(self, broker: int, topic: str, partition: int, timeout_ms: int = 5000) -> int:
        """The broker's OFFSETS -1 answer: the end of what it has flushed (all a reader can see)."""
        with SimpleConsumer("127.0.0.1", self.broker_port(broker), socket_timeout_ms=timeout_ms) as consumer:
            return consumer.get_offsets_before(topic, partition, -1, 1)[0]

    def read(self, broker: int, topic: str, partition: int) -> list[str]:
        """Payload ids (``run:seq``) of a partition from offset 0 to the broker's flushed end."""
        found: list[str] = []
        with SimpleConsumer("127.0.0.1", self.broker_port(broker), socket_timeout_ms=10000) as consumer:
            end = consumer.get_offsets_before(topic, partition, -1, 1)[0]
            offset = 0
            while offset < end:
                messages = consumer.fetch(topic, partition, offset, 1 << 20)
                if messages.valid_bytes == 0:
                    raise RuntimeError(f"broker {broker} {topic}-{partition}: nothing at {offset} < {end}")
                for message, next_offset in messages:
                    found.append(b":".join(bytes(message.payload).split(b":", 2)[:2]).decode())
                    offset = next_offset
        return found

    def snapshot(self, topic: str, partitions: int, brokers=BROKERS) -> dict[str, list[str]]:
        """Every flushed message of every partition: ``{"b-p": [run:seq, ...]}``."""
        return {f"{b}-{p}": self.read(b, topic, p) for b in brokers for p in range(partitions)}

"""The ensemble cluster in containers (compose/docker-compose-cluster.yml): three ZooKeeper members and three
0.8 brokers, each in its own container with its own address, the brokers listing every member. Under acks=-1
load from agents on the cluster's network, the network is cut (``docker network disconnect``) between the
rest and first the ZooKeeper leader (an election; the brokers keep their sessions), then the partition's leader
broker (past its session: a new leader; it rejoins as a follower once connected again). Nothing acknowledged
is lost, read back from the brokers after healing. The compose file's "cluster" profile (Spark and the loader,
whose image the tests do not build) is checked to be a valid compose file.
"""

from __future__ import annotations

import subprocess
import time

import pytest

from tests.containers.cluster import BROKERS, REPO, Cluster, compose_command
from tests.containers.test_drills08 import SESSION_MS, Drill08, new_leader
from tests.support.ensemble import ephemeral_owners
from zkafka.utils import wait_until

pytestmark = [pytest.mark.drill, pytest.mark.container, pytest.mark.timeout(300)]

COMPOSE_FILE_CLUSTER = REPO / "compose" / "docker-compose-cluster.yml"
MEMBERS = (1, 2, 3)


class EnsembleCluster(Cluster):
    """Cluster on the ensemble compose file: ZooKeeper members zk-1..3 instead of one zookeeper service."""

    def __init__(self, broker_session_ms: int) -> None:
        super().__init__(broker_session_ms, compose_file=COMPOSE_FILE_CLUSTER)
        self.env.update({f"ZK{m}_PORT": "" for m in MEMBERS})
        self.zk_ports: dict[int, int] = {}  # read once: a container cut off the network publishes none

    def up(self, timeout: float = 120) -> float:
        started = time.monotonic()
        services = [*(f"zk-{m}" for m in MEMBERS), *(f"broker-{b}" for b in BROKERS)]
        self.compose("up", "-d", "--no-build", *services, timeout=timeout)
        self.wait_healthy(services, timeout - (time.monotonic() - started))
        self.zk_ports = {m: self.published_port(f"zk-{m}", 2181) for m in MEMBERS}
        return time.monotonic() - started

    @property
    def zk_connect(self) -> str:
        return ",".join(f"127.0.0.1:{port}" for port in self.zk_ports.values())

    def zk_mode(self, member: int) -> str | None:
        """The member's ``srvr`` Mode, asked inside its container (a member cut off the network answers too)."""
        ask = "exec 3<>/dev/tcp/127.0.0.1/2181 && printf srvr >&3 && cat <&3"
        code, out = self.container(f"zk-{member}").exec_run(["bash", "-c", ask])
        lines = out.decode("utf-8", "replace").splitlines() if code == 0 else []
        return next((line.split()[1] for line in lines if line.startswith("Mode:")), None)

    def zk_leader(self) -> int | None:
        leaders = [m for m in MEMBERS if self.zk_mode(m) == "leader"]
        return leaders[0] if len(leaders) == 1 else None


@pytest.fixture
def drill(drill_images):
    cluster = EnsembleCluster(broker_session_ms=SESSION_MS)
    d = Drill08(cluster, "ensemble cluster: network cut")
    try:
        d.start()
        yield d
    finally:
        if d.zk is not None:
            d.zk.stop()
        cluster.down()


def cut_off(cluster: Cluster, service: str):
    """Disconnect the service's container from the cluster network; a function that connects it back."""
    container = cluster.container(service)
    network = cluster.docker.networks.get(cluster.network)
    network.disconnect(container)
    return lambda: network.connect(container, aliases=[service])


def test_network_cuts_of_the_zookeeper_leader_and_of_the_partition_leader(drill: Drill08) -> None:
    cluster: EnsembleCluster = drill.cluster
    owners = ephemeral_owners(drill.zk)
    zk_leader = wait_until(cluster.zk_leader, 60, message="a ZooKeeper leader")
    heal = cut_off(cluster, f"zk-{zk_leader}")
    began = time.monotonic()
    try:
        elected = wait_until(
            lambda: (m := cluster.zk_leader()) not in (None, zk_leader) and m, 60, interval=0.1, message="a new leader"
        )
        elected_s = time.monotonic() - began
        more_s = drill.wait_acked(100)
    finally:
        heal()
    wait_until(lambda: cluster.zk_mode(zk_leader) == "follower", 60, interval=0.2, message="the old leader follows")
    assert ephemeral_owners(drill.zk) == owners, "a broker lost its session in the ZooKeeper election"

    leader = drill.settle().leader
    heal = cut_off(cluster, f"broker-{leader}")
    try:
        broker_elected_s = new_leader(drill, leader)
        drill.wait_acked(100)
    finally:
        heal()
    drill.settle()  # the old leader registered again and follows
    drill.figures.update(
        zk_cut=zk_leader, zk_new_leader=elected, zk_elected_s=round(elected_s, 1), acks_resumed_s=round(more_s, 1),
        broker_cut=leader, broker_new_leader_s=round(broker_elected_s, 1),
    )  # fmt: skip
    drill.finish()


def test_the_cluster_profile_is_a_valid_compose_file() -> None:
    command = compose_command()
    if command is None:
        pytest.fail("no compose command: run scripts/docker-setup.sh")
    done = subprocess.run(
        [*command, "-f", str(COMPOSE_FILE_CLUSTER), "--profile", "cluster", "config", "--services"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    services = set(done.stdout.split())
    assert services == {"zk-1", "zk-2", "zk-3", "broker-1", "broker-2", "broker-3", "spark-master",
                        "spark-worker-1", "spark-worker-2", "producer", "loader"}  # fmt: skip

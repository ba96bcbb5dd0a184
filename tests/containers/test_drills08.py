"""The replication drills on the 0.8-line compose cluster (compose/docker-compose-08.yml: ZooKeeper and three
brokers, replication factor 3), with Producer08 (acks=-1) and a SimpleConsumer08 watcher running as agents on
the cluster's network (tests/containers/agent.py).

Faults: docker kill (SIGKILL) of the partition's leader, docker pause of a follower past
replica.lag.time.max.ms, the leader cut off the network past its ZooKeeper session (the session expires),
and a rolling restart of every broker with docker stop (SIGTERM: controlled shutdown). Each checks, from the
host through the published ports, that every acknowledged message is in the leader's log, that the watcher
was never given a message later truncated away, and that the partition has one leader agreed by the state
znode and every broker. Figures go to the terminal summary.
"""

from __future__ import annotations

import random
import time

import pytest
from kazoo.client import KazooClient

from tests.containers.cluster import BROKERS, COMPOSE_FILE_08, Cluster
from tests.containers.conftest import FIGURES
from tests.support.drills import check_no_loss, settle
from tests.support.replication import zk_state
from zkafka.admin.topics import create_topic
from zkafka.utils import wait_until

pytestmark = [pytest.mark.drill, pytest.mark.container, pytest.mark.timeout(300)]

TOPIC = "drill08"
SESSION_MS = 6000  # the brokers' zookeeper.session.timeout.ms
BOOTSTRAP = ",".join(f"broker-{b}:9092" for b in BROKERS)


class Drill08:
    def __init__(self, cluster: Cluster, name: str) -> None:
        self.cluster, self.name = cluster, name
        self.started = time.monotonic()
        self.figures: dict[str, object] = {}
        self.zk: KazooClient | None = None
        self.agents: dict[str, object] = {}

    def start(self) -> None:
        c = self.cluster
        self.figures["cluster_up_s"] = round(c.up(), 1)
        self.zk = KazooClient(hosts=c.zk_connect)
        self.zk.start()
        create_topic(self.zk, TOPIC, 1, 3, rng=random.Random(self.name))
        self.first = self.settle()
        for mode in ("produce", "watch"):
            self.agents[mode] = c.run_agent(
                mode, f"{mode}08", "--brokers", BOOTSTRAP, "--topic", TOPIC, "--max-seconds", "280"
            )
        self.wait_acked(200)

    def ports(self) -> list[int]:
        out = []
        for b in BROKERS:
            container = self.cluster.container(f"broker-{b}")
            container.reload()
            if container.status == "running":
                out.append(self.cluster.broker_port(b))
        return out

    def settle(self):
        return settle(self.zk, self.ports, TOPIC)[0]

    def events(self, mode: str, kind: str) -> list[dict]:
        return [e for e in self.cluster.events(self.agents[mode]) if e["e"] == kind]

    def acked(self) -> dict[bytes, None]:
        return {v.encode(): None for e in self.events("produce", "acked") for v in e["v"]}

    def wait_acked(self, more: int) -> float:
        began, at = time.monotonic(), len(self.acked())
        wait_until(lambda: len(self.acked()) >= at + more, 60, interval=0.2, message=f"{more} more acks")
        return time.monotonic() - began

    def finish(self) -> None:
        for agent in self.agents.values():
            self.cluster.stop_agent(agent)
        seen = {o: v.encode() for e in self.events("watch", "seen") for o, v in e["m"]}
        acked = self.acked()
        errors = self.events("produce", "error")
        state, high_watermark = check_no_loss(
            self.zk, self.ports, TOPIC, acked, seen, port_of=self.cluster.broker_port
        )
        self.figures.update(
            acked=len(acked),
            failed_batches=len(errors),
            consumed=len(seen),
            log=high_watermark,
            leader=state.leader,
            epoch=state.leader_epoch,
            drill_s=round(time.monotonic() - self.started, 1),
        )
        FIGURES.append((f"0.8 {self.name}", self.figures))
        assert not errors, errors[:3]


@pytest.fixture
def drill(request, drill_images):
    cluster = Cluster(broker_session_ms=SESSION_MS, compose_file=COMPOSE_FILE_08)
    d = Drill08(cluster, request.node.name.removeprefix("test_"))
    try:
        d.start()
        yield d
    finally:
        report = getattr(request.node, "report_call", None)
        if report is None or report.failed:
            print(f"figures: {d.figures}")
            for service in ("zookeeper", *(f"broker-{b}" for b in BROKERS)):
                try:
                    print(f"--- {service}\n{cluster.logs(service)[-3000:]}")
                except Exception as exc:  # noqa: BLE001 - diagnostics only
                    print(f"--- {service}: {exc}")
        if d.zk is not None:
            d.zk.stop()
        cluster.down()


def new_leader(d: Drill08, old: int) -> float:
    began = time.monotonic()
    wait_until(
        lambda: zk_state(d.zk, TOPIC, 0).leader not in (-1, old), SESSION_MS / 1000 + 20, interval=0.05
    )
    return time.monotonic() - began


def test_kill_9_of_the_leader(drill: Drill08) -> None:
    leader = drill.cluster.container(f"broker-{drill.first.leader}")
    leader.kill(signal="SIGKILL")
    elected_s = new_leader(drill, drill.first.leader)
    drill.figures["more_acks_s"] = round(drill.wait_acked(100), 1)
    leader.start()
    drill.cluster.wait_healthy([f"broker-{drill.first.leader}"], timeout=60)
    drill.settle()
    drill.figures.update(killed=drill.first.leader, new_leader_after_s=round(elected_s, 1))
    drill.finish()


def test_pause_of_a_follower_past_the_replica_lag(drill: Drill08) -> None:
    follower = next(b for b in drill.first.isr if b != drill.first.leader)
    container = drill.cluster.container(f"broker-{follower}")
    container.pause()
    paused = time.monotonic()
    try:
        wait_until(lambda: follower not in zk_state(drill.zk, TOPIC, 0).isr, 20, interval=0.05)
        shrunk_s = time.monotonic() - paused
        drill.wait_acked(50)
    finally:
        container.unpause()
    drill.figures.update(paused=follower, isr_shrunk_s=round(shrunk_s, 1))
    drill.figures["paused_s"] = round(time.monotonic() - paused, 1)
    wait_until(lambda: follower in zk_state(drill.zk, TOPIC, 0).isr, 60, interval=0.05)
    drill.finish()


def test_leader_cut_off_past_its_zookeeper_session(drill: Drill08) -> None:
    leader = drill.first.leader
    container = drill.cluster.container(f"broker-{leader}")
    network = drill.cluster.docker.networks.get(drill.cluster.network)
    network.disconnect(container)
    try:
        elected_s = new_leader(drill, leader)
        drill.wait_acked(100)
    finally:
        network.connect(container, aliases=[f"broker-{leader}"])
    drill.settle()  # the old leader's session expired: it registered again and follows
    drill.figures.update(cut_off=leader, new_leader_after_s=round(elected_s, 1))
    drill.finish()


def test_rolling_restart_with_controlled_shutdown(drill: Drill08) -> None:
    stops = []
    for b in BROKERS:
        container = drill.cluster.container(f"broker-{b}")
        began = time.monotonic()
        container.stop(timeout=30)
        stops.append(round(time.monotonic() - began, 1))
        assert container.wait(timeout=10)["StatusCode"] == 0
        drill.wait_acked(30)
        container.start()
        drill.cluster.wait_healthy([f"broker-{b}"], timeout=60)
        drill.settle()
    drill.figures["shutdown_s"] = stops
    drill.finish()

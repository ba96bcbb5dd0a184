"""Replication drills: three 0.8 broker processes and a real ZooKeeper under acks=-1 load from real clients
(zkafka's Producer08, kafka-python with acks=all), one fault each: kill -9 of a partition's leader, SIGSTOP of
a follower past replica.lag.time.max.ms, expiry of the leader's ZooKeeper session, a rolling restart of every
broker with controlled shutdown. After the dust settles each checks that every acknowledged message is in the
log, that the consumer was never given a message later truncated away, and that the partition has exactly one
leader, the same in the state znode and in every broker's metadata. Figures go to the terminal summary.
(kill -9 of the controller and a single controlled shutdown: tests/integration/test_replication_failover.py.)
"""

from __future__ import annotations

import random
import signal
import time

import pytest

from tests.support.drills import (
    FIGURES,
    KafkaPythonLoad,
    Load,
    Producer08Load,
    SessionSnoop,
    Watcher,
    check_no_loss,
    settle,
)
from tests.support.replication import zk_state
from zkafka.admin.topics import create_topic
from zkafka.launch.zookeeper_server import expire_session
from zkafka.utils import wait_until
from zkafka.zk.paths08 import parse_controller

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(180)]

SESSION_MS = 4000  # the brokers' ZooKeeper session timeout (TEST_BROKER08_PROPS)
LAG_MS = 1500
DRILL_PROPS = {
    "replica_fetch_wait_max_ms": "100",
    "replica_lag_time_max_ms": str(LAG_MS),
    "controlled_shutdown_retry_backoff_ms": "300",
    "unclean_leader_election_enable": "false",
    "replica_high_watermark_checkpoint_interval_ms": "500",
}
TOPIC = "drill"


class Cluster:
    """Three broker processes, each reaching ZooKeeper through its own SessionSnoop."""

    def __init__(self, broker08_process, zk_connect: str, zk) -> None:
        self.zk = zk
        self.zk_connect = zk_connect
        host_port, chroot = zk_connect.split("/", 1)
        host, port = host_port.split(":")
        self.snoops = {b: SessionSnoop(host, int(port)) for b in (1, 2, 3)}
        self.procs = {
            b: broker08_process(b, zookeeper_connect=s.connect_string("/" + chroot), **DRILL_PROPS)
            for b, s in self.snoops.items()
        }
        wait_until(
            lambda: zk.exists("/brokers/ids") and len(zk.get_children("/brokers/ids")) == 3,
            30,
            message="3 brokers registered",
        )

    def ports(self) -> list[int]:
        return [p.port for p in self.procs.values() if p.proc.poll() is None]

    def topic(self, name: str = TOPIC, seed: int = 1):
        create_topic(self.zk, name, 1, 3, rng=random.Random(seed))
        return settle(self.zk, self.ports, name)[0]

    def controller(self) -> int:
        return parse_controller(self.zk.get("/controller")[0])

    def close(self) -> None:
        for proc in self.procs.values():
            proc.signal(signal.SIGCONT)
        for snoop in self.snoops.values():
            snoop.close()


@pytest.fixture
def cluster(broker08_process, zk_connect, zk_client):
    c = Cluster(broker08_process, zk_connect, zk_client)
    yield c
    c.close()


def start_load(cluster: Cluster, load_class: type[Load], until_acked: int) -> tuple[Load, Watcher]:
    load = load_class(cluster.ports, TOPIC)
    watcher = Watcher(cluster.ports, TOPIC)
    load.start()
    watcher.start()
    wait_until(lambda: len(load.acked) >= until_acked or not load.is_alive(), 30, message="acks flowing")
    assert load.is_alive(), f"the load stopped: {load.exception!r}"
    return load, watcher


def acks_after(load: Load, count: int, timeout: float = 45) -> float:
    """Seconds until ``count`` more messages are acknowledged."""
    start, at = time.monotonic(), len(load.acked)
    wait_until(lambda: len(load.acked) >= at + count, timeout, interval=0.005, message=f"{count} more acks")
    return time.monotonic() - start


def finish(cluster: Cluster, load: Load, watcher: Watcher, drill: str, **figures) -> None:
    load.stop()
    watcher.stop()
    state, high_watermark = check_no_loss(cluster.zk, cluster.ports, TOPIC, load.acked, watcher.seen)
    figures = {
        "acked": len(load.acked),
        "failed_sends": len(load.failures),
        "consumed": len(watcher.seen),
        "log": high_watermark,
        "leader": state.leader,
        "epoch": state.leader_epoch,
        **figures,
    }
    FIGURES.append((drill, figures))
    print(f"\n{drill}: " + ", ".join(f"{k}={v}" for k, v in figures.items()))


@pytest.mark.parametrize("load_class", [Producer08Load, KafkaPythonLoad], ids=["producer08", "kafka-python"])
def test_kill_9_of_the_leader_under_acks_all_load(cluster, load_class):
    first = cluster.topic(seed=7)
    load, watcher = start_load(cluster, load_class, 100)
    cluster.procs[first.leader].proc.kill()
    failover_s = acks_after(load, 1)
    more_s = acks_after(load, 100)
    state = zk_state(cluster.zk, TOPIC, 0)
    assert state.leader != first.leader and state.leader_epoch > first.leader_epoch
    cluster.procs[first.leader].start()  # rejoins as a follower, truncates to its high watermark, catches up
    rejoined = time.monotonic()
    settle(cluster.zk, cluster.ports, TOPIC)
    finish(
        cluster,
        load,
        watcher,
        f"kill -9 leader ({load_class.__name__})",
        killed=first.leader,
        first_ack_after_kill_s=round(failover_s, 2),
        next_100_acks_s=round(more_s, 2),
        rejoin_s=round(time.monotonic() - rejoined, 2),
    )


def test_a_paused_follower_leaves_the_isr_and_rejoins_after_sigcont(cluster):
    first = cluster.topic(seed=3)
    controller = cluster.controller()
    # pause a follower that is not the controller: the drill is about the ISR, not controller failover
    follower = next(b for b in first.isr if b not in (first.leader, controller))
    load, watcher = start_load(cluster, Producer08Load, 100)
    victim = cluster.procs[follower]
    victim.signal(signal.SIGSTOP)
    paused = time.monotonic()
    try:
        wait_until(
            lambda: follower not in zk_state(cluster.zk, TOPIC, 0).isr,
            20,
            interval=0.02,
            message="ISR shrinks",
        )
        shrink_s = time.monotonic() - paused
        acks_after(load, 50)  # produce continues with acks=-1 from the smaller ISR
    finally:
        victim.signal(signal.SIGCONT)
    paused_s = time.monotonic() - paused
    wait_until(
        lambda: follower in zk_state(cluster.zk, TOPIC, 0).isr, 30, interval=0.02, message="rejoins the ISR"
    )
    rejoin_s = time.monotonic() - paused - paused_s
    assert not load.failures
    finish(
        cluster,
        load,
        watcher,
        "SIGSTOP follower",
        paused=follower,
        isr_shrunk_after_s=round(shrink_s, 2),
        paused_s=round(paused_s, 2),
        rejoined_after_sigcont_s=round(rejoin_s, 2),
    )


def test_expiry_of_the_leaders_zookeeper_session(cluster, zookeeper_server):
    first = cluster.topic(seed=5)
    load, watcher = start_load(cluster, Producer08Load, 100)
    expire_session(cluster.snoops[first.leader].session(), zookeeper_server.connect_string)
    expired = time.monotonic()
    state = wait_until(
        lambda: (s := zk_state(cluster.zk, TOPIC, 0)).leader not in (-1, first.leader) and s,
        30,
        interval=0.02,
        message="a new leader",
    )
    new_leader_s = time.monotonic() - expired
    assert state.leader_epoch > first.leader_epoch
    more_s = acks_after(load, 100)
    settle(cluster.zk, cluster.ports, TOPIC)  # the old leader registered again and follows
    finish(
        cluster,
        load,
        watcher,
        "leader's session expired",
        expired=first.leader,
        new_leader_after_s=round(new_leader_s, 2),
        next_100_acks_s=round(more_s, 2),
        rejoined_after_s=round(time.monotonic() - expired, 2),
    )


def test_rolling_restart_with_controlled_shutdown_under_load(cluster):
    cluster.topic(seed=11)
    load, watcher = start_load(cluster, Producer08Load, 100)
    stops = []
    for broker_id, proc in sorted(cluster.procs.items()):
        began = time.monotonic()
        proc.signal(signal.SIGTERM)
        assert proc.wait(60) == 0
        stops.append(round(time.monotonic() - began, 2))
        assert "controlled shutdown succeeded" in proc.log_text(), f"broker {broker_id}"
        acks_after(load, 30)  # load carries on while it is down
        proc.start()
        settle(cluster.zk, cluster.ports, TOPIC)
    assert not load.failures, f"sends failed beyond their retries: {load.failures[:3]}"
    finish(cluster, load, watcher, "rolling restart", shutdown_s=stops)

"""Replication drills: three 0.8 broker processes and a real ZooKeeper under acks=-1 load, one fault each:
kill -9 of a partition's leader (zkafka's Producer08; kafka-python with acks=all in its own drill), kill -9 of
the controller, SIGSTOP of a follower past replica.lag.time.max.ms, expiry of the leader's ZooKeeper session
(expire_session, the broker still running), the leader frozen past its session, a rolling restart of every
broker with controlled shutdown. After the dust settles each checks that every acknowledged message is in
the log (at its offset when the client said), that no consumer was given a message later truncated away,
that every replica's log (read from its files) equals the leader's, and that every partition has exactly one
leader, the same in the state znode and in every live broker's metadata. Figures go to the terminal summary
("drill figures").
"""

from __future__ import annotations

import random
import signal
import time

import pytest

from tests.support.drills import (
    FIGURES,
    Cluster,
    Producer08Load,
    check_no_loss,
    leader_port,
    settle,
)
from tests.support.replication import AckedProducer, WatchingConsumer, read_all, zk_state
from zkafka.admin.topics import create_topic
from zkafka.launch.zookeeper_server import expire_session
from zkafka.utils import wait_until
from zkafka.zk.client import get_data
from zkafka.zk.paths08 import parse_controller

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(180)]


@pytest.fixture
def cluster(start_cluster):
    return start_cluster()


def acks_after(acked: dict, count: int, timeout: float = 45) -> float:
    """Seconds until ``count`` more messages are acknowledged."""
    start, at = time.monotonic(), len(acked)
    wait_until(lambda: len(acked) >= at + count, timeout, interval=0.005, message=f"{count} more acks")
    return time.monotonic() - start


def producer08_load(cluster: Cluster, topic: str, until_acked: int = 100):
    load = Producer08Load(cluster.ports, topic)
    consumer = WatchingConsumer(lambda: leader_port(cluster.ports, topic), topic)
    load.start()
    consumer.start()
    wait_until(lambda: len(load.acked) >= until_acked or not load.is_alive(), 30, message="acks flowing")
    assert load.is_alive(), f"the load stopped: {load.exception!r}"
    return load, consumer


def raw_load(cluster: Cluster, topic: str, until_acked: int = 100):
    """Produce requests on the raw 0.8 wire (each message's offset known, every error code seen)."""
    producer = AckedProducer(cluster.ports, topic)
    consumer = WatchingConsumer(producer.leader_port, topic)
    producer.start()
    consumer.start()
    wait_until(lambda: len(producer.acked) >= until_acked, 30, message="acks flowing")
    return producer, consumer


def finish(cluster, load, consumer, drill: str, partitions: int = 1, replicas: int = 3, **figures):
    """Stop the load, check nothing acknowledged was lost or consumed then truncated; record the figures."""
    load.stop()
    consumer.stop()
    if isinstance(load, AckedProducer):
        acked = {v: o for o, v in load.acked.items()}
        figures["errors"] = sorted(set(load.errors))
    else:
        acked = load.acked
        figures["failed_sends"] = len(load.failures)
    state, log_length = check_no_loss(
        cluster.zk, cluster.ports, load.topic, acked, consumer.seen, cluster.port_of, partitions, replicas
    )
    for partition, each in enumerate(settle(cluster.zk, cluster.ports, load.topic, partitions, replicas)):
        cluster.logs_agree(load.topic, each, partition)  # every replica's files hold the leader's log
    figures = {"acked": len(acked), "consumed": len(consumer.seen), "log": log_length, **figures}
    figures.update(leader=state.leader, epoch=state.leader_epoch)
    FIGURES.append((drill, figures))
    print(f"\n{drill}: " + ", ".join(f"{k}={v}" for k, v in figures.items()))
    return state, log_length


def test_kill_9_of_the_leader_under_acks_all_load(cluster):
    (first,) = cluster.topic("killed", seed=7)
    load, consumer = producer08_load(cluster, "killed")
    cluster[first.leader].proc.kill()
    failover_s = acks_after(load.acked, 1)
    more_s = acks_after(load.acked, 100)
    state = zk_state(cluster.zk, "killed", 0)
    assert state.leader != first.leader and state.leader_epoch > first.leader_epoch
    cluster[first.leader].start()  # rejoins as a follower, truncates to its high watermark, catches up
    rejoined = time.monotonic()
    settle(cluster.zk, cluster.ports, "killed")
    rejoin_s = time.monotonic() - rejoined
    assert not load.failures, f"sends failed beyond their retries: {load.failures[:3]}"
    state, log_length = finish(
        cluster, load, consumer, "kill -9 leader", killed=first.leader,
        first_ack_after_kill_s=round(failover_s, 2), next_100_acks_s=round(more_s, 2), rejoin_s=round(rejoin_s, 2),
    )  # fmt: skip
    # the replicas hold the same log: stop the leader (controlled shutdown), read it from the next one
    _, log = read_all(cluster.port_of(state.leader), "killed", 0)
    cluster[state.leader].signal(signal.SIGTERM)
    assert cluster[state.leader].wait(60) == 0
    (after,) = settle(cluster.zk, cluster.ports, "killed", replicas=2)
    _, replica_log = read_all(cluster.port_of(after.leader), "killed", 0)
    assert replica_log == log


def test_kill_9_of_the_controller_elects_another_that_carries_on(cluster):
    zk = cluster.zk
    cluster.topic("ctl", 2, seed=9)
    controller = parse_controller(zk.get("/controller")[0])
    epoch = int(zk.get("/controller_epoch")[0])
    producer, consumer = raw_load(cluster, "ctl")
    cluster[controller].proc.kill()
    killed = time.monotonic()
    wait_until(
        lambda: (data := get_data(zk, "/controller")) is not None and parse_controller(data) != controller,
        30,
        message="another controller",
    )
    elected_s = time.monotonic() - killed
    wait_until(lambda: int(zk.get("/controller_epoch")[0]) == epoch + 1, 10, message="the epoch raised")
    create_topic(zk, "after", 1, 2, rng=random.Random(1))  # the new controller acts
    settle(zk, cluster.ports, "after", replicas=2)
    states = settle(zk, cluster.ports, "ctl", 2, replicas=2)
    assert all(controller not in s.isr for s in states)
    acks_after(producer.acked, 100)
    finish(
        cluster, producer, consumer, "kill -9 controller", partitions=2, replicas=2, killed=controller,
        new_controller_after_s=round(elected_s, 2),
    )  # fmt: skip


def test_a_paused_follower_leaves_the_isr_produce_continues_and_it_rejoins(start_cluster):
    # a session longer than the pause: only the leader's lag check takes the follower out
    cluster = start_cluster(zookeeper_session_timeout_ms="15000")
    (first,) = cluster.topic("paused", seed=10)
    follower = next(b for b in first.isr if b != first.leader)
    producer, consumer = raw_load(cluster, "paused")
    cluster[follower].signal(signal.SIGSTOP)
    paused = time.monotonic()
    try:
        wait_until(
            lambda: follower not in zk_state(cluster.zk, "paused", 0).isr,
            20,
            interval=0.02,
            message="ISR shrinks",
        )
        shrunk_s = time.monotonic() - paused
        acks_after(producer.acked, 200)  # produce continues with acks=-1 from the smaller ISR
    finally:
        cluster[follower].signal(signal.SIGCONT)
    resumed = time.monotonic()
    wait_until(
        lambda: follower in zk_state(cluster.zk, "paused", 0).isr, 30, interval=0.02, message="it rejoins"
    )
    finish(
        cluster, producer, consumer, "SIGSTOP follower", paused=follower, isr_shrunk_after_s=round(shrunk_s, 2),
        paused_s=round(resumed - paused, 2), rejoined_after_sigcont_s=round(time.monotonic() - resumed, 2),
    )  # fmt: skip


def test_expiry_of_the_leaders_zookeeper_session(cluster, zookeeper_server):
    (first,) = cluster.topic("expired", seed=5)
    load, consumer = producer08_load(cluster, "expired")
    expire_session(cluster.snoops[first.leader].session(), zookeeper_server.connect_string)
    expired = time.monotonic()
    state = wait_until(
        lambda: (s := zk_state(cluster.zk, "expired", 0)).leader not in (-1, first.leader) and s,
        30,
        interval=0.02,
        message="a new leader",
    )
    new_leader_s = time.monotonic() - expired
    assert state.leader_epoch > first.leader_epoch
    more_s = acks_after(load.acked, 100)
    settle(cluster.zk, cluster.ports, "expired")  # the old leader registered again and follows
    finish(
        cluster, load, consumer, "leader's session expired", expired=first.leader,
        new_leader_after_s=round(new_leader_s, 2), next_100_acks_s=round(more_s, 2),
        rejoined_after_s=round(time.monotonic() - expired, 2),
    )  # fmt: skip


def test_a_leader_frozen_past_its_session_cannot_acknowledge_and_rejoins_as_follower(cluster):
    (first,) = cluster.topic("zombie", seed=11)
    producer, consumer = raw_load(cluster, "zombie")
    cluster[first.leader].signal(signal.SIGSTOP)  # frozen past its session: ZooKeeper expires it
    frozen = time.monotonic()
    try:
        wait_until(
            lambda: zk_state(cluster.zk, "zombie", 0).leader not in (first.leader, -1),
            30,
            message="new leader",
        )
        new_leader_s = time.monotonic() - frozen
        acks_after(producer.acked, 100, 60)
    finally:
        cluster[first.leader].signal(signal.SIGCONT)
    settle(cluster.zk, cluster.ports, "zombie")  # it rejoined as a follower
    acks_after(producer.acked, 100)
    state, _ = finish(
        cluster, producer, consumer, "leader frozen past its session", frozen=first.leader,
        new_leader_after_s=round(new_leader_s, 2),
    )  # fmt: skip
    assert state.leader != first.leader


def test_rolling_restart_with_controlled_shutdown_under_load(cluster):
    cluster.topic("rolling", seed=11)
    load, consumer = producer08_load(cluster, "rolling")
    stops = []
    for broker_id, proc in sorted(cluster.procs.items()):
        began = time.monotonic()
        proc.signal(signal.SIGTERM)
        assert proc.wait(60) == 0
        stops.append(round(time.monotonic() - began, 2))
        assert "controlled shutdown succeeded" in proc.log_text(), f"broker {broker_id}"
        acks_after(load.acked, 30)  # load carries on while it is down
        proc.start()
        settle(cluster.zk, cluster.ports, "rolling")
    assert not load.failures, f"sends failed beyond their retries: {load.failures[:3]}"
    finish(cluster, load, consumer, "rolling restart", shutdown_s=stops)


def test_kafka_python_produces_with_acks_all_through_a_leader_kill(cluster):
    kafka = pytest.importorskip("kafka")
    states = cluster.topic("kp3", 2, seed=12)
    bootstrap = [f"127.0.0.1:{port}" for port in cluster.ports()]
    producer = kafka.KafkaProducer(
        bootstrap_servers=bootstrap,
        api_version=(0, 8, 2),
        acks="all",
        retries=1000,
        retry_backoff_ms=100,
        request_timeout_ms=10000,
        linger_ms=5,
        max_in_flight_requests_per_connection=1,
    )
    acked: dict[tuple[int, int], bytes] = {}
    failed = 0
    victim = states[0].leader
    try:
        futures = []
        for i in range(3000):
            value = b"kp-%d" % i
            futures.append((producer.send("kp3", value=value, partition=i % 2), value))
            if i == 1000:
                producer.flush(30)
                cluster[victim].proc.kill()
            if i % 100 == 0:
                time.sleep(0.01)
        producer.flush(120)
        for future, value in futures:
            try:
                meta = future.get(60)
            except kafka.errors.KafkaError:
                failed += 1
                continue
            acked[(meta.partition, meta.offset)] = value
    finally:
        producer.close(10)
    after = settle(cluster.zk, cluster.ports, "kp3", 2, replicas=2)
    assert all(s.leader != victim for s in after)
    consumer = kafka.KafkaConsumer(
        bootstrap_servers=[f"127.0.0.1:{port}" for port in cluster.ports()],
        api_version=(0, 8, 2),
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        consumer_timeout_ms=5000,
    )
    try:
        consumer.assign([kafka.TopicPartition("kp3", 0), kafka.TopicPartition("kp3", 1)])
        log = {(m.partition, m.offset): m.value for m in consumer}
    finally:
        consumer.close()
    lost = [k for k, v in acked.items() if log.get(k) != v]
    assert not lost, f"{len(lost)} acknowledged messages missing: {sorted(lost)[:5]}"
    assert len(acked) >= 2900, f"only {len(acked)} of 3000 acknowledged ({failed} failed)"
    figures = {"acked": len(acked), "failed": failed, "read_back": len(log), "killed": victim}
    FIGURES.append(("kafka-python acks=all through a leader kill", figures))

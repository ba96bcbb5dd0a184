"""Failover drills with three real 0.8 broker processes and a real ZooKeeper: kill -9 of a partition's leader
under acks=-1 load, a controlled shutdown (SIGTERM) under load, kill -9 of the controller. Each checks that
every acknowledged message is in the final log at its offset, that no consumer read a message later
truncated away, and that every partition ends with exactly one leader that all brokers agree on; the
figures are printed."""

from __future__ import annotations

import random
import signal
import time

import pytest

from tests.support.replication import AckedProducer, WatchingConsumer, metadata, read_all, zk_state
from zkafka.admin.topics import create_topic
from zkafka.utils import wait_until
from zkafka.zk.client import get_data
from zkafka.zk.paths08 import parse_controller

pytestmark = pytest.mark.integration

DRILL_PROPS = {
    "replica_fetch_wait_max_ms": "100",
    "replica_lag_time_max_ms": "3000",
    "controlled_shutdown_retry_backoff_ms": "500",
    "unclean_leader_election_enable": "false",
    "replica_high_watermark_checkpoint_interval_ms": "500",
}


@pytest.fixture
def start_cluster(broker08_process, zk_client):
    def start(**props):
        procs = {b: broker08_process(b, **(DRILL_PROPS | props)) for b in (1, 2, 3)}
        wait_until(
            lambda: zk_client.exists("/brokers/ids") and len(zk_client.get_children("/brokers/ids")) == 3,
            30,
            message="3 brokers registered",
        )
        return procs

    return start


@pytest.fixture
def cluster(start_cluster):
    return start_cluster()


def alive_ports(cluster):
    return lambda: [p.port for p in cluster.values() if p.proc.poll() is None]


def settle(cluster, zk_client, topic, partitions=1):
    """Every partition has one leader, in its ISR, that every live broker names in its metadata."""

    def agreed():
        states = [zk_state(zk_client, topic, p) for p in range(partitions)]
        if any(s is None or s.leader < 0 or s.leader not in s.isr for s in states):
            return None
        for port in alive_ports(cluster)():
            answer = metadata(port, [topic])[0]
            if [p.leader for p in sorted(answer.partitions, key=lambda p: p.partition)] != [
                s.leader for s in states
            ]:
                return None
        return states

    return wait_until(agreed, 30, interval=0.1, message=f"{topic}: one leader per partition, agreed by all")


def check_no_loss(cluster, zk_client, topic, producer, consumer, partitions=1):
    state = settle(cluster, zk_client, topic, partitions)[0]
    high_watermark, messages = read_all(cluster[state.leader].port, topic, 0)
    log = dict(messages)
    lost = [o for o, v in producer.acked.items() if log.get(o) != v]
    assert not lost, f"{len(lost)} acknowledged messages missing, first at offsets {sorted(lost)[:5]}"
    truncated = [o for o, v in consumer.seen.items() if log.get(o) != v]
    assert not truncated, f"consumers read {len(truncated)} messages later truncated: {sorted(truncated)[:5]}"
    return state, high_watermark, log


def run_load(cluster, topic, until_acked):
    producer = AckedProducer(alive_ports(cluster), topic)
    consumer = WatchingConsumer(producer.leader_port, topic)
    producer.start()
    consumer.start()
    wait_until(lambda: len(producer.acked) >= until_acked, 30, message="acks flowing")
    return producer, consumer


def test_kill_9_of_the_leader_under_acks_all_load_loses_nothing(cluster, zk_client):
    create_topic(zk_client, "drill", 1, 3, rng=random.Random(7))
    first = settle(cluster, zk_client, "drill")[0]
    producer, consumer = run_load(cluster, "drill", 300)
    old_leader = first.leader
    at_kill = len(producer.acked)
    cluster[old_leader].proc.kill()
    killed = time.monotonic()
    wait_until(lambda: len(producer.acked) > at_kill, 60, interval=0.005, message="acks after the kill")
    failover_s = time.monotonic() - killed
    wait_until(lambda: len(producer.acked) >= at_kill + 300, 30, message="load carries on")
    new_state = zk_state(zk_client, "drill", 0)
    assert new_state.leader != old_leader and new_state.leader_epoch > first.leader_epoch

    cluster[old_leader].start()  # rejoins as a follower and catches up
    wait_until(
        lambda: old_leader in zk_state(zk_client, "drill", 0).isr,
        60,
        message="the old leader back in the ISR",
    )
    producer.stop()
    consumer.stop()
    state, high_watermark, log = check_no_loss(cluster, zk_client, "drill", producer, consumer)
    # the returning replica holds the same log: make it lead (a controlled shutdown of the others' leader)
    cluster[state.leader].signal(signal.SIGTERM)
    assert cluster[state.leader].wait(60) == 0
    after = settle(cluster, zk_client, "drill")[0]
    _, replica_log = read_all(cluster[after.leader].port, "drill", 0)
    assert dict(replica_log[: len(log)]) == {o: log[o] for o in sorted(log)[: len(replica_log)]}
    assert len(replica_log) >= high_watermark
    print(
        f"\nkill -9 drill: {len(producer.acked)} messages acknowledged with acks=-1 ({producer.sent} requests,"
        f" {len(producer.errors)} errors and {producer.failed_sends} lost connections, all retried),"
        f" {len(consumer.seen)} read by a consumer; leader {old_leader} killed, leader {new_state.leader}"
        f" (epoch {new_state.leader_epoch}) acknowledging {failover_s:.2f} s later; nothing lost or truncated"
    )


def test_controlled_shutdown_under_load_moves_leadership_with_no_error_beyond_retries(cluster, zk_client):
    create_topic(zk_client, "rolling", 1, 3, rng=random.Random(8))
    first = settle(cluster, zk_client, "rolling")[0]
    producer, consumer = run_load(cluster, "rolling", 200)
    started = time.monotonic()
    cluster[first.leader].signal(signal.SIGTERM)
    assert cluster[first.leader].wait(60) == 0
    stopped_s = time.monotonic() - started
    assert "controlled shutdown succeeded" in cluster[first.leader].log_text()
    at_stop = len(producer.acked)
    wait_until(lambda: len(producer.acked) >= at_stop + 200, 30, message="load carries on")
    producer.stop()
    consumer.stop()
    state, _, _ = check_no_loss(cluster, zk_client, "rolling", producer, consumer)
    assert state.leader != first.leader
    assert set(producer.errors) <= {6}  # NOT_LEADER_FOR_PARTITION, retried on the new leader
    print(
        f"\ncontrolled shutdown drill: leader {first.leader} stopped in {stopped_s:.2f} s after moving leadership to"
        f" {state.leader}; {len(producer.acked)} acknowledged, errors {sorted(set(producer.errors))}"
        f" x{len(producer.errors)}, {producer.failed_sends} lost connections; nothing lost"
    )


def test_kill_9_of_the_controller_elects_another_that_carries_on(cluster, zk_client):
    create_topic(zk_client, "ctl", 2, 3, rng=random.Random(9))
    settle(cluster, zk_client, "ctl", 2)
    controller = parse_controller(zk_client.get("/controller")[0])
    epoch = int(zk_client.get("/controller_epoch")[0])
    producer, consumer = run_load(cluster, "ctl", 100)
    cluster[controller].proc.kill()
    killed = time.monotonic()
    wait_until(
        lambda: (
            (data := get_data(zk_client, "/controller")) is not None and parse_controller(data) != controller
        ),
        30,
        message="another controller",
    )
    elected_s = time.monotonic() - killed
    wait_until(
        lambda: int(zk_client.get("/controller_epoch")[0]) == epoch + 1, 10, message="the epoch raised"
    )
    create_topic(zk_client, "after", 1, 2, rng=random.Random(1))  # the new controller acts
    settle(cluster, zk_client, "after")
    states = settle(cluster, zk_client, "ctl", 2)
    assert all(controller not in s.isr for s in states)
    at = len(producer.acked)
    wait_until(lambda: len(producer.acked) >= at + 100, 30, message="load carries on")
    producer.stop()
    consumer.stop()
    check_no_loss(cluster, zk_client, "ctl", producer, consumer, 2)
    print(
        f"\ncontroller kill -9 drill: broker {controller} killed, a new controller elected {elected_s:.2f} s later"
    )


def test_a_paused_follower_leaves_the_isr_produce_continues_and_it_rejoins(start_cluster, zk_client):
    # a session longer than the pause: only the leader's lag check takes the follower out
    cluster = start_cluster(zookeeper_session_timeout_ms="15000", replica_lag_time_max_ms="1500")
    create_topic(zk_client, "paused", 1, 3, rng=random.Random(10))
    first = settle(cluster, zk_client, "paused")[0]
    follower = next(b for b in first.isr if b != first.leader)
    producer, consumer = run_load(cluster, "paused", 100)
    cluster[follower].signal(signal.SIGSTOP)
    paused = time.monotonic()
    try:
        wait_until(
            lambda: follower not in zk_state(zk_client, "paused", 0).isr, 20, message="the ISR shrinks"
        )
        shrunk_s = time.monotonic() - paused
        at = len(producer.acked)
        wait_until(lambda: len(producer.acked) >= at + 200, 20, message="produce continues without it")
    finally:
        cluster[follower].signal(signal.SIGCONT)
    resumed = time.monotonic()
    wait_until(lambda: follower in zk_state(zk_client, "paused", 0).isr, 30, message="it rejoins the ISR")
    rejoined_s = time.monotonic() - resumed
    producer.stop()
    consumer.stop()
    check_no_loss(cluster, zk_client, "paused", producer, consumer)
    print(
        f"\npause drill: follower {follower} out of the ISR {shrunk_s:.2f} s after SIGSTOP (lag time 1.5 s),"
        f" back in {rejoined_s:.2f} s after SIGCONT; {len(producer.acked)} acknowledged, nothing lost"
    )


def test_a_leader_whose_session_expired_cannot_acknowledge_and_rejoins_as_follower(cluster, zk_client):
    create_topic(zk_client, "zombie", 1, 3, rng=random.Random(11))
    first = settle(cluster, zk_client, "zombie")[0]
    producer, consumer = run_load(cluster, "zombie", 100)
    cluster[first.leader].signal(signal.SIGSTOP)  # frozen past its session: ZooKeeper expires it
    try:
        wait_until(
            lambda: zk_state(zk_client, "zombie", 0).leader not in (first.leader, -1),
            30,
            message="new leader",
        )
        at = len(producer.acked)
        wait_until(lambda: len(producer.acked) >= at + 100, 60, message="acks from the new leader")
    finally:
        cluster[first.leader].signal(signal.SIGCONT)
    wait_until(
        lambda: first.leader in zk_state(zk_client, "zombie", 0).isr, 60, message="it rejoins as follower"
    )
    at = len(producer.acked)
    wait_until(lambda: len(producer.acked) >= at + 100, 30, message="load carries on")
    producer.stop()
    consumer.stop()
    state, _, _ = check_no_loss(cluster, zk_client, "zombie", producer, consumer)
    assert state.leader != first.leader
    print(
        f"\nsession expiry drill: leader {first.leader} frozen past its session, leader {state.leader} took over;"
        f" {len(producer.acked)} acknowledged (errors {sorted(set(producer.errors))}), nothing lost or truncated"
    )


def test_kafka_python_produces_with_acks_all_through_a_leader_kill(cluster, zk_client):
    kafka = pytest.importorskip("kafka")
    create_topic(zk_client, "kp3", 2, 3, rng=random.Random(12))
    states = settle(cluster, zk_client, "kp3", 2)
    bootstrap = [f"127.0.0.1:{p.port}" for p in cluster.values()]
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
    after = settle(cluster, zk_client, "kp3", 2)
    assert all(s.leader != victim for s in after)
    consumer = kafka.KafkaConsumer(
        bootstrap_servers=[f"127.0.0.1:{p.port}" for b, p in cluster.items() if b != victim],
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
    print(
        f"\nkafka-python acks=all drill: leader {victim} killed; {len(acked)} acknowledged, {failed} failed, all read back"
    )

"""The request quota (KIP-124) with a real client: ``zkafka configs`` sets a tiny ``request_percentage`` on
client id c1, and kafka-python producers as c1 and c2 write to a topic replicated on two brokers: c1's answers
carry a throttle time, c2's none. With the quota tiny for every client (``<default>``), the follower's fetches
(exempt: the cluster's own requests) are still counted apart only and the ISR stays whole."""

from __future__ import annotations

import contextlib
from time import monotonic

import kafka
import kafka.errors
import pytest

from tests.support.quotas import configs
from tests.support.replication import zk_state
from zkafka.admin.topics import create_topic_with_assignment
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration

TINY = "0.01"  # percent of one thread: any request is far over it


def throttle_max(producer: kafka.KafkaProducer) -> float:
    """The largest throttle time (ms) the producer was told, from its metrics."""
    return max(
        (
            value
            for group in producer.metrics().values()
            for name, value in group.items()
            if name == "throttle-time-max"
        ),
        default=0.0,
    )


def produce(port: int, client_id: str, count: int) -> float:
    """``count`` acks=all messages as ``client_id``, all acknowledged: the largest throttle time told."""
    producer = kafka.KafkaProducer(bootstrap_servers=f"127.0.0.1:{port}", client_id=client_id, acks="all")
    try:
        futures = [producer.send("rq", b"m%d" % i) for i in range(count)]
        deadline = monotonic() + 30
        while not all(f.is_done for f in futures):
            assert monotonic() < deadline, f"{client_id}'s messages not acknowledged within 30 s"
            with contextlib.suppress(kafka.errors.KafkaTimeoutError):
                producer.flush(timeout=0.2)  # wakes its sender: kafka-python waits on a throttled node's end
        assert all(f.get().offset >= 0 for f in futures)
        return throttle_max(producer)
    finally:
        producer.close(timeout=10)


def isr(zk_client) -> list[int] | None:
    state = zk_state(zk_client, "rq", 0)
    return list(state.isr) if state is not None else None


def test_a_client_over_its_request_quota_is_throttled_and_followers_are_not(
    start_broker08, zk_connect, zk_client
):
    quota = {"quota.window.num": "2", "quota.window.size.seconds": "1", "replica.fetch.wait.max.ms": "100"}
    leader, _ = start_broker08(0, **quota), start_broker08(1, **quota)
    create_topic_with_assignment(zk_client, "rq", "0:1")  # led by broker 0
    wait_until(lambda: isr(zk_client) == [0, 1], 20, message="both replicas in the ISR")
    request = leader.server.quota_configs.managers.request
    tiny = ("--alter", "--add-config", f"request_percentage={TINY}", "--entity-type", "clients")
    added = configs(zk_connect, *tiny, "--entity-name", "c1")
    assert added == "Completed Updating config for entity: client-id 'c1'.\n"
    wait_until(lambda: request.quota("ANONYMOUS", "c1") == float(TINY), 10, message="the broker took it")

    assert produce(leader.port, "c1", 3) > 0
    assert produce(leader.port, "c2", 3) == 0

    configs(zk_connect, *tiny, "--entity-default")
    wait_until(lambda: request.quota("ANONYMOUS", "c2") == float(TINY), 10, message="the default taken")
    assert produce(leader.port, "c2", 2) > 0  # acks=all: the follower fetched both messages meanwhile
    assert request.exempt.total(monotonic() * 1000.0) > 0  # its fetches counted apart
    measured = {client for _, client, *_ in request.measurements(monotonic() * 1000.0)}
    assert measured <= {"c1", "c2"}  # no follower's client id counted against the quota
    assert isr(zk_client) == [0, 1]

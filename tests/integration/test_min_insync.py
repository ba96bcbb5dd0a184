"""``min.insync.replicas`` end to end on three 0.8 broker processes and a real ZooKeeper: a topic on two
replicas with the override 2. A produce parked for acks=-1 when the follower freezes is answered
NOT_ENOUGH_REPLICAS_AFTER_APPEND (20) once the ISR shrinks (appended, not acknowledged, as in Kafka); with
the ISR at one replica (the leader's ``kafka_server_under_replicated_partitions`` at 1) every acks=-1 produce is refused with NOT_ENOUGH_REPLICAS (19) and nothing of it is
appended or visible; the follower back, the ISR grows and produces succeed; both replicas' logs end equal."""

from __future__ import annotations

import re
import signal

import pytest

from tests.integration.test_leader_epochs import roles, same_logs
from tests.integration.test_metrics import scrape, value
from tests.support.drills import FIGURES, settle
from tests.support.replication import produce, read_all, zk_state
from tests.support.server08 import Client08
from zkafka.admin.topics import create_topic_with_assignment
from zkafka.protocol.errors import ErrorCode
from zkafka.utils import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(180)]


def under_replicated(cluster, broker: int) -> float:
    """The broker's ``kafka_server_under_replicated_partitions`` gauge (its metrics port read from its log)."""
    port = int(re.findall(r"metrics served on [^:]+:(\d+)", cluster[broker].log_text())[-1])
    return value(scrape(port), "kafka_server_under_replicated_partitions")


def test_refused_produces_are_never_appended_and_a_parked_one_learns_the_isr_shrank(start_cluster):
    cluster = start_cluster(metrics_port="0")
    a, b, _ = roles(cluster)
    create_topic_with_assignment(cluster.zk, "minisr", f"{a}:{b}", {"min.insync.replicas": "2"})
    settle(cluster.zk, cluster.ports, "minisr", replicas=2)
    with Client08(cluster.port_of(a)) as client:
        assert [produce(client, "minisr", 0, [b"ok-%d" % i]) for i in range(3)] == [(0, 0), (0, 1), (0, 2)]
        cluster[b].signal(signal.SIGSTOP)
        # parked: the frozen follower never fetches it; the ISR shrinks after replica.lag.time.max.ms
        parked = produce(client, "minisr", 0, [b"parked"], timeout_ms=30000)[0]
        assert parked == ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
        assert zk_state(cluster.zk, "minisr", 0).isr == (a,)
        assert under_replicated(cluster, a) == 1
        refused = [produce(client, "minisr", 0, [b"refused-%d" % i])[0] for i in range(3)]
        assert refused == [ErrorCode.NOT_ENOUGH_REPLICAS] * 3
        _, log = read_all(cluster.port_of(a), "minisr", 0)
        assert [v for _, v in log] == [b"ok-0", b"ok-1", b"ok-2", b"parked"]  # nothing refused was appended
        cluster[b].signal(signal.SIGCONT)
        wait_until(lambda: len(zk_state(cluster.zk, "minisr", 0).isr) == 2, 30, message="the ISR grows back")
        wait_until(lambda: under_replicated(cluster, a) == 0, 30, message="no partition under-replicated")
        assert produce(client, "minisr", 0, [b"ok-after"]) == (0, 4)
    records = same_logs(cluster, ["minisr"], (a, b))["minisr"]
    assert [v for _, v in records] == [b"ok-0", b"ok-1", b"ok-2", b"parked", b"ok-after"]
    FIGURES.append(
        ("min.insync.replicas=2", {"refused": len(refused), "after_append": 1, "log": len(records)})
    )

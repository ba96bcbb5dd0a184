"""Network partition drills: three 0.8 broker processes, a topic with 3 replicas, min.insync.replicas=2, and
acks=-1 load on the raw wire, while iptables drops packets on loopback (tests/support/netcut.py): the leader
cut off from ZooKeeper but not from its clients or followers (once a plain leader, once also the controller),
then the leader cut off from its followers (and the controller) but not from ZooKeeper or its clients. After
healing each checks that every acknowledged message is in the log at its offset, that no consumer was given a
message later truncated away, and that every replica's log equals the leader's, record by record. Figures go
to the terminal summary ("drill figures").
"""

from __future__ import annotations

import json
import time
from collections import Counter

import pytest

from tests.support.drills import FIGURES, check_no_loss, settle
from tests.support.netcut import CLIENTS_ADDRESS
from tests.support.replication import AckedProducer, WatchingConsumer, zk_state
from zkafka.admin.topics import create_topic_with_assignment
from zkafka.utils import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(180)]

PROPS = {"min_insync_replicas": "2", "replica_socket_timeout_ms": "3000"}


def start_load(cluster, topic: str, ports=None, source: str | None = None):
    producer = AckedProducer(ports or cluster.ports, topic, source=source)
    consumer = WatchingConsumer(producer.leader_port, topic, source=source)
    producer.start()
    consumer.start()
    more_acks(producer, 100)
    return producer, consumer


def more_acks(producer: AckedProducer, count: int, timeout: float = 45) -> None:
    at = len(producer.acked)
    wait_until(
        lambda: len(producer.acked) >= at + count, timeout, interval=0.01, message=f"{count} more acks"
    )


def isr_history(cluster, topic: str, history: list[list[int]]) -> None:
    isr = list(zk_state(cluster.zk, topic, 0).isr)
    if not history or history[-1] != isr:
        history.append(isr)


def finish(cluster, producer, consumer, drill: str, **figures) -> None:
    """Stop the load; nothing acknowledged lost or consumed then truncated (``check_no_loss``); every
    replica's log, read from its files, the same as the leader's, record by record."""
    producer.stop()
    consumer.stop()
    acked = {v: o for o, v in producer.acked.items()}
    state, log_length = check_no_loss(
        cluster.zk, cluster.ports, producer.topic, acked, consumer.seen, cluster.port_of
    )
    assert cluster.logs_agree(producer.topic, state) == log_length
    figures = {
        "acked": len(acked), "consumed": len(consumer.seen), "log": log_length,
        "errors": dict(Counter(producer.errors)), **figures, "leader": state.leader, "epoch": state.leader_epoch,
    }  # fmt: skip
    FIGURES.append((drill, figures))
    print(f"\n{drill}: " + ", ".join(f"{k}={v}" for k, v in figures.items()))


@pytest.mark.parametrize("also_controller", [False, True], ids=["leader", "leader-and-controller"])
def test_a_leader_cut_off_from_zookeeper_is_fenced_and_rejoins_as_follower(
    start_cluster, netcut, also_controller
):
    cluster = start_cluster(**PROPS)
    controller = json.loads(cluster.zk.get("/controller")[0])["brokerid"]
    old = controller if also_controller else next(b for b in (1, 2, 3) if b != controller)
    others = [b for b in (1, 2, 3) if b != old]
    # the cut-off controller's session expires too: another broker takes over and elects the new leader
    create_topic_with_assignment(cluster.zk, "zkcut", ":".join(map(str, [old, *others])))
    (first,) = settle(cluster.zk, cluster.ports, "zkcut")
    assert first.leader == old
    # a client that asks the cut-off leader for metadata is told it still leads (its view is stale until
    # it hears from ZooKeeper again); this one asks the others first, as a client whose first try fails does
    others_first = lambda: sorted(cluster.ports(), key=lambda p: p == cluster.port_of(old))  # noqa: E731
    producer, consumer = start_load(cluster, "zkcut", others_first)
    netcut.isolate_port(cluster.snoops[old].port)  # its ZooKeeper connections go through this port
    cut = time.monotonic()
    state = wait_until(
        lambda: (s := zk_state(cluster.zk, "zkcut", 0)).leader not in (-1, old) and s,
        30,
        interval=0.02,
        message="a new leader",
    )
    new_leader_s = time.monotonic() - cut
    assert old not in state.isr and state.leader_epoch > first.leader_epoch
    more_acks(producer, 100)  # from the new leader; the old one acknowledged nothing it could not replicate
    acks_resumed_s = time.monotonic() - cut
    # still cut off, it believes it leads; its followers stopped fetching from it, so once their lag passes
    # replica.lag.time.max.ms it tries to take them out of the ISR: the write waits for ZooKeeper
    wait_until(lambda: "zkcut-0: ISR shrinks" in cluster[old].log_text(), 30, message="an ISR shrink tried")
    netcut.heal()
    healed = time.monotonic()
    settle(cluster.zk, cluster.ports, "zkcut")  # it registered again and follows, in the ISR
    rejoined_s = time.monotonic() - healed
    finish(
        cluster, producer, consumer, "leader" + (" and controller" if also_controller else "") + " cut off from ZooKeeper", cut_off=old,
        new_leader_after_s=round(new_leader_s, 2), acks_resumed_after_s=round(acks_resumed_s, 2),
        rejoined_after_heal_s=round(rejoined_s, 2), cut_s=round(healed - cut, 2),
    )  # fmt: skip
    assert zk_state(cluster.zk, "zkcut", 0).leader != old
    # back in touch, ZooKeeper refuses the write of the session that expired: it was fenced
    wait_until(
        lambda: "zkcut-0: ISR write failed" in cluster[old].log_text(), 30, message="a fenced ISR write"
    )


def test_a_leader_cut_off_from_its_followers_refuses_acks_all_and_they_catch_up(start_cluster, netcut):
    cluster = start_cluster(**PROPS)
    (first,) = cluster.topic("fcut", seed=6)
    producer, consumer = start_load(cluster, "fcut", source=CLIENTS_ADDRESS)  # clients are not cut off
    history: list[list[int]] = []
    isr_history(cluster, "fcut", history)
    netcut.isolate_port(cluster.port_of(first.leader))  # the brokers' connections to it: fetches, controller
    cut = time.monotonic()
    wait_until(
        lambda: isr_history(cluster, "fcut", history) or history[-1] == [first.leader],
        30,
        interval=0.02,
        message="the ISR shrinks to the leader",
    )
    shrunk_s = time.monotonic() - cut
    acked = len(producer.acked)
    wait_until(lambda: 19 in producer.errors, 20, message="NOT_ENOUGH_REPLICAS")  # min.insync.replicas=2
    assert zk_state(cluster.zk, "fcut", 0).leader == first.leader  # it still holds its ZooKeeper session
    refused_acks = len(producer.acked) - acked
    netcut.heal()
    healed = time.monotonic()
    wait_until(
        lambda: isr_history(cluster, "fcut", history) or len(history[-1]) == 3,
        45,
        interval=0.02,
        message="the followers catch up and the ISR expands",
    )
    expanded_s = time.monotonic() - healed
    more_acks(producer, 100)
    finish(
        cluster, producer, consumer, "leader cut off from its followers", cut_off=first.leader,
        isr_shrunk_after_s=round(shrunk_s, 2), acked_while_cut=refused_acks,
        isr_expanded_after_heal_s=round(expanded_s, 2), isr_history=history,
    )  # fmt: skip
    assert refused_acks == 0

"""Unclean leader election as configured, on three 0.8 broker processes and a real ZooKeeper: two topics on
the same two replicas, one with the brokers' ``unclean.leader.election.enable=false``, one with the topic
override ``true``. The follower dies (the ISR shrinks to the leader), messages are acknowledged by the leader
alone, then the leader dies and the follower returns: the clean topic stays offline (leader -1,
LEADER_NOT_AVAILABLE) and loses nothing once the old leader is back; the unclean one elects the returning
follower at once and loses exactly the messages only the dead ISR held (Kafka's documented trade). After
healing, both replicas of each topic hold the same bytes."""

from __future__ import annotations

import pytest

from tests.integration.test_leader_epochs import gone, leader_is, roles, same_logs
from tests.support.drills import FIGURES, settle
from tests.support.replication import metadata, produce, read_all, zk_state
from tests.support.server08 import Client08
from zkafka.admin.topics import create_topic_with_assignment
from zkafka.protocol.errors import ErrorCode
from zkafka.utils import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(180)]

TOPICS = {"clean": None, "unclean": {"unclean.leader.election.enable": "true"}}


def produce_all(port: int, values: list[bytes]) -> None:
    with Client08(port) as client:
        for topic in TOPICS:
            for value in values:
                assert produce(client, topic, 0, [value])[0] == ErrorCode.NONE


def test_an_offline_partition_waits_for_its_isr_unless_unclean_election_is_enabled(
    start_cluster, zookeeper_server
):
    cluster = start_cluster()  # unclean.leader.election.enable=false (DRILL_PROPS)
    a, b, _ = roles(cluster)
    for topic, config in TOPICS.items():
        create_topic_with_assignment(cluster.zk, topic, f"{a}:{b}", config)
        settle(cluster.zk, cluster.ports, topic, replicas=2)
    both = [b"both-%d" % i for i in range(3)]
    produce_all(cluster.port_of(a), both)
    gone(cluster, b, zookeeper_server)
    for topic in TOPICS:
        wait_until(lambda t=topic: zk_state(cluster.zk, t, 0).isr == (a,), 30, message=f"{topic}: ISR [{a}]")
    leader_only = [b"leader-only-%d" % i for i in range(5)]
    produce_all(cluster.port_of(a), leader_only)
    gone(cluster, a, zookeeper_server)
    cluster[b].start()
    leader_is(cluster, "unclean", b)  # elected out of the ISR as soon as it is back
    _, log = read_all(cluster.port_of(b), "unclean", 0)
    lost = [v for v in both + leader_only if v not in {value for _, value in log}]
    assert lost == leader_only  # acknowledged by the dead ISR alone: gone
    assert zk_state(cluster.zk, "clean", 0).leader == -1  # the controller acted on b's return for both
    (clean,) = metadata(cluster.port_of(b), ["clean"])
    assert [(p.error, p.leader) for p in clean.partitions] == [(ErrorCode.LEADER_NOT_AVAILABLE, -1)]
    cluster[a].start()
    leader_is(cluster, "clean", a)
    _, log = read_all(cluster.port_of(a), "clean", 0)
    assert [v for _, v in log] == both + leader_only  # nothing acknowledged lost
    for topic in TOPICS:
        settle(cluster.zk, cluster.ports, topic, replicas=2)
    records = same_logs(cluster, list(TOPICS), (a, b))
    assert [v for _, v in records["unclean"]] == both
    print(f"\nunclean election: lost {len(lost)} acknowledged messages: {lost}")
    FIGURES.append(("unclean election", {"clean_kept": len(records["clean"]), "unclean_lost": len(lost)}))

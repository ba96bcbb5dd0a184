"""KIP-101's two replica-divergence scenarios on three 0.8 broker processes and a real ZooKeeper, healed by
leader epochs (``leader-epoch-checkpoint``, OffsetForLeaderEpoch, followers truncating by epoch instead of to
their high watermark). The controller hosts no replica it would have to elect for itself, so it stays up.

1. A follower told of a new leader truncated to its high watermark (one fetch behind its log end), then became
   leader before fetching again: the acknowledged tail was lost. Here the follower keeps it.
2. After a double failure the replica that comes back first lost its unflushed tail (a power failure,
   simulated by cutting its segment) and leads; it takes new writes at the offsets the other still holds. That
   one, back later, truncated to its high watermark and kept the old tail: two replicas differed at the same
   offsets. Here it truncates where the new leader's epoch began, and every replica holds the same bytes.
"""

from __future__ import annotations

import shutil
import signal

import pytest

from tests.support.drills import FIGURES, segment_files, settle
from tests.support.replication import leaders_seen, produce, read_all, zk_state
from tests.support.server08 import Client08, fetch_request
from zkafka.admin.topics import create_topic_with_assignment
from zkafka.launch.zookeeper_server import expire_session
from zkafka.records import format08
from zkafka.utils import wait_until
from zkafka.zk.paths08 import parse_controller

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(180)]


def roles(cluster) -> tuple[int, int, int]:
    """(two brokers that are not the controller, the controller)."""
    controller = parse_controller(cluster.zk.get("/controller")[0])
    first, second = sorted(b for b in (1, 2, 3) if b != controller)
    return first, second, controller


def disk_log(cluster, broker: int, topic: str) -> tuple[bytes, list[tuple[int, bytes]]]:
    """A stopped broker's partition log: its segments' bytes, and its (offset, value)s."""
    data = b"".join(path.read_bytes() for path in segment_files(cluster[broker], topic))
    return data, cluster.replica_log(broker, topic)


def leader_is(cluster, topic: str, broker: int, frozen: bool = False) -> None:
    """Wait until ZooKeeper names ``broker`` the leader and (unless ``frozen``) it serves the partition."""
    wait_until(
        lambda: (s := zk_state(cluster.zk, topic, 0)) and s.leader == broker, 30, message=f"{broker} leads"
    )
    if not frozen:
        wait_until(lambda: serves(cluster.port_of(broker), topic), 30, message=f"{broker} serves {topic}")


def serves(port: int, topic: str) -> bool:
    try:
        with Client08(port) as client:
            return client.call(fetch_request(topic, 0, 0)).topics[0].partitions[0].error == 0
    except OSError:
        return False  # not listening yet


def same_on_every_replica(cluster, topic: str, brokers: tuple[int, ...]) -> list[tuple[int, bytes]]:
    """Stop the replicas (controlled shutdown) and compare their logs byte for byte; the records."""
    return same_logs(cluster, [topic], brokers)[topic]


def same_logs(cluster, topics: list[str], brokers: tuple[int, ...]) -> dict:
    """Stop the replicas (controlled shutdown) and compare each topic's logs byte for byte; its records."""
    for broker in brokers:
        cluster[broker].signal(signal.SIGTERM)
        assert cluster[broker].wait(60) == 0
    records = {}
    for topic in topics:
        logs = {broker: disk_log(cluster, broker, topic) for broker in brokers}
        first = logs[brokers[0]]
        for broker, log in logs.items():
            assert log[1] == first[1], f"{topic}: broker {broker}'s records differ from broker {brokers[0]}'s"
            assert log[0] == first[0], (
                f"{topic}: broker {broker}'s log bytes differ from broker {brokers[0]}'s"
            )
        records[topic] = first[1]
    return records


def gone(cluster, broker: int, zookeeper_server) -> None:
    """kill -9 ``broker`` and expire its ZooKeeper session at once (the controller acts without waiting)."""
    cluster[broker].proc.kill()
    cluster[broker].proc.wait()
    expire_session(cluster.snoops[broker].session(), zookeeper_server.connect_string)


def test_kip_101_scenario_1_a_follower_told_of_a_new_leader_keeps_its_tail(
    start_cluster, tmp_path, zookeeper_server
):
    # a follower learns the high watermark on its next fetch, parked up to replica.fetch.wait.max.ms
    cluster = start_cluster(replica_fetch_wait_max_ms="3000", replica_lag_time_max_ms="20000")
    a, b, c = roles(cluster)
    create_topic_with_assignment(cluster.zk, "epochs1", f"{a}:{b}:{c}")
    settle(cluster.zk, cluster.ports, "epochs1")
    values = [b"m%d" % i for i in range(10)]
    with Client08(cluster.port_of(a)) as client:
        for i, value in enumerate(values):
            assert produce(client, "epochs1", 0, [value]) == (0, i)
    cluster[b].signal(signal.SIGSTOP)  # frozen: the next leader cannot serve the others
    gone(cluster, a, zookeeper_server)  # dies before its followers learn that the last message is committed
    leader_is(cluster, "epochs1", b, frozen=True)
    wait_until(lambda: leaders_seen(cluster.port_of(c), "epochs1")[0][0] == b, 30, message=f"{c} follows {b}")
    gone(cluster, b, zookeeper_server)
    leader_is(cluster, "epochs1", c)
    _, log = read_all(cluster.port_of(c), "epochs1", 0)
    assert [v for _, v in log] == values, "an acknowledged message was lost"
    cluster[a].start()
    cluster[b].start()
    settle(cluster.zk, cluster.ports, "epochs1")
    records = same_on_every_replica(cluster, "epochs1", (a, b, c))
    assert [v for _, v in records] == values
    FIGURES.append(("KIP-101 scenario 1", {"acked": len(values), "on every replica": len(records)}))


def test_kip_101_scenario_2_replicas_that_diverged_after_a_double_failure_converge(
    start_cluster, tmp_path, zookeeper_server
):
    cluster = start_cluster()
    a, b, _ = roles(cluster)
    create_topic_with_assignment(cluster.zk, "epochs2", f"{a}:{b}")
    settle(cluster.zk, cluster.ports, "epochs2", replicas=2)
    before = [b"m%d" % i for i in range(10)]
    with Client08(cluster.port_of(a)) as client:
        for i, value in enumerate(before):
            assert produce(client, "epochs2", 0, [value]) == (0, i)
    checkpoint = tmp_path / f"broker08-{a}" / "replication-offset-checkpoint"
    wait_until(lambda: checkpoint.exists() and "epochs2 0 10" in checkpoint.read_text(), 30, message="HW 10")
    gone(cluster, a, zookeeper_server)
    leader_is(cluster, "epochs2", b)  # b is elected (so it stays in the ISR when it goes too)
    gone(cluster, b, zookeeper_server)
    # b's power failed: its last 3 messages were never flushed
    segment = segment_files(cluster[b], "epochs2")[-1]
    data = segment.read_bytes()
    cut = data.index(format08.build_message_set([(None, before[7])])[12:]) - 12
    segment.write_bytes(data[:cut])
    cluster[b].start()  # back first: leads with 7 messages
    leader_is(cluster, "epochs2", b)
    after = [b"n%d" % i for i in range(3)]
    with Client08(cluster.port_of(b)) as client:
        for i, value in enumerate(after):
            assert produce(client, "epochs2", 0, [value]) == (0, 7 + i)
    cluster[a].start()  # holds m7-m9 at offsets 7-9, b's n0-n2 are there
    settle(cluster.zk, cluster.ports, "epochs2", replicas=2)
    records = same_on_every_replica(cluster, "epochs2", (a, b))
    assert [v for _, v in records] == before[:7] + after
    lost = before[7:]
    print(
        f"\nKIP-101 scenario 2: lost with b's unflushed tail (acknowledged before the double failure): {lost}"
    )
    FIGURES.append(("KIP-101 scenario 2", {"records": len(records), "lost_unflushed": len(lost)}))


def test_a_follower_halts_rather_than_truncate_below_its_high_watermark(
    start_cluster, tmp_path, zookeeper_server
):
    cluster = start_cluster(unclean_leader_election_enable="true")  # the topic's override says false
    a, b, _ = roles(cluster)
    create_topic_with_assignment(cluster.zk, "halt", f"{a}:{b}", {"unclean.leader.election.enable": "false"})
    settle(cluster.zk, cluster.ports, "halt", replicas=2)
    with Client08(cluster.port_of(a)) as client:
        for i in range(10):
            assert produce(client, "halt", 0, [b"m%d" % i]) == (0, i)
    checkpoint = tmp_path / f"broker08-{b}" / "replication-offset-checkpoint"
    wait_until(lambda: checkpoint.exists() and "halt 0 10" in checkpoint.read_text(), 30, message="b's HW 10")
    gone(cluster, b, zookeeper_server)
    wait_until(lambda: zk_state(cluster.zk, "halt", 0).isr == (a,), 30, message=f"ISR [{a}]")
    gone(cluster, a, zookeeper_server)
    shutil.rmtree(tmp_path / f"broker08-{a}" / "halt-0")  # a's disk was replaced
    cluster[a].start()
    leader_is(cluster, "halt", a)  # the ISR's last member leads with an empty log
    cluster[b].start()
    assert cluster[b].wait(60) == 1
    halted = [line for line in cluster[b].log_text().splitlines() if "log truncation is not allowed" in line]
    assert (
        len(halted) == 1 and "halt-0" in halted[0] and "offset 0" in halted[0] and "watermark 10" in halted[0]
    )
    assert len(disk_log(cluster, b, "halt")[1]) == 10  # b kept its committed messages
    print(f"\n{halted[0]}")

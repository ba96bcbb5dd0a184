"""Replication on the 0.8 line with in-process brokers and a real ZooKeeper: the controller's requests over
the wire, followers fetching, the ISR and high watermark, acks=-1 and min.insync.replicas, controlled shutdown."""

from __future__ import annotations

import random

import pytest
from click.testing import CliRunner

from tests.support.replication import metadata, produce, read_all, zk_state
from tests.support.server08 import Client08
from zkafka.admin.topics import create_topic
from zkafka.cli import main
from zkafka.protocol import inter_broker as admin
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.metadata import MetadataRequestV0
from zkafka.utils import wait_until
from zkafka.zk.paths08 import parse_partition_list, parse_reassignment, parse_topic_assignment

pytestmark = pytest.mark.integration

FAST = {"replica_fetch_wait_max_ms": "100", "replica_lag_time_max_ms": "2000"}


@pytest.fixture
def cluster(start_broker08):
    brokers = {b: start_broker08(b, **FAST) for b in (1, 2, 3)}
    return brokers


def leaders(zk_client, topic, partitions):
    """The leader of each partition in its state znode (None for a partition without one yet)."""
    return [getattr(zk_state(zk_client, topic, p), "leader", None) for p in range(partitions)]


def leader_port(cluster, zk_client, topic, partition=0):
    state = wait_until(
        lambda: (s := zk_state(zk_client, topic, partition)) is not None and s.leader >= 0 and s,
        20,
        message=f"a leader for {topic}-{partition}",
    )
    port = cluster[state.leader].port

    def told():  # UpdateMetadata follows LeaderAndIsr on the controller's queue to the broker
        parts = [p for t in metadata(port, [topic]) for p in t.partitions if p.partition == partition]
        return parts and parts[0].leader == state.leader

    wait_until(told, 20, message=f"broker {state.leader} told it leads {topic}-{partition}")
    return state, port


def test_an_rf3_topic_replicates_every_acknowledged_message_to_the_whole_isr(cluster, zk_client):
    create_topic(zk_client, "r3", 1, 3, rng=random.Random(1))
    state, port = leader_port(cluster, zk_client, "r3")
    assert sorted(state.isr) == [1, 2, 3]
    wait_until(
        lambda: all(
            m.partitions and m.partitions[0].leader == state.leader
            for b in cluster.values()
            for m in metadata(b.port, ["r3"])
        ),
        20,
        message="every broker serves the leader from UpdateMetadata",
    )
    with Client08(port) as client:
        for i in range(20):
            assert produce(client, "r3", 0, [b"m%d-%d" % (i, j) for j in range(5)]) == (0, i * 5)
    for broker_id, broker in cluster.items():
        hosted = broker.server.replica_manager.partition("r3", 0)
        assert hosted.log_end_offset == 100, f"broker {broker_id}"
    high_watermark, messages = read_all(port, "r3", 0)
    assert high_watermark == 100 and [v for _, v in messages][:2] == [b"m0-0", b"m0-1"]
    assert len(messages) == 100
    assert zk_state(zk_client, "r3", 0).isr == state.isr  # nobody left the ISR


def test_a_killed_follower_leaves_the_isr_and_catches_up_when_it_returns(cluster, zk_client, start_broker08):
    create_topic(zk_client, "r3", 1, 3, rng=random.Random(2))
    state, port = leader_port(cluster, zk_client, "r3")
    follower = next(b for b in state.isr if b != state.leader)
    cluster[follower].stop()
    wait_until(lambda: follower not in zk_state(zk_client, "r3", 0).isr, 20, message="the ISR shrinks")
    with Client08(port) as client:
        for i in range(10):
            assert produce(client, "r3", 0, [b"x%d" % i] * 10)[0] == 0
    back = start_broker08(follower, **FAST)
    wait_until(
        lambda: follower in zk_state(zk_client, "r3", 0).isr, 20, message="the follower back in the ISR"
    )
    wait_until(lambda: back.server.replica_manager.partition("r3", 0).log_end_offset == 100, 10)


def test_acks_minus_1_with_an_isr_below_min_insync_replicas_is_refused(cluster, zk_client):
    create_topic(zk_client, "strict", 1, 3, config={"min.insync.replicas": "3"}, rng=random.Random(3))
    state, port = leader_port(cluster, zk_client, "strict")
    with Client08(port) as client:
        assert produce(client, "strict", 0, [b"a"]) == (0, 0)
        follower = next(b for b in state.isr if b != state.leader)
        cluster[follower].stop()
        wait_until(lambda: len(zk_state(zk_client, "strict", 0).isr) == 2, 20, message="the ISR shrinks")
        wait_until(
            lambda: len(cluster[state.leader].server.replica_manager.partition("strict", 0).isr) == 2, 10
        )
        assert produce(client, "strict", 0, [b"b"])[0] == ErrorCode.NOT_ENOUGH_REPLICAS
        assert produce(client, "strict", 0, [b"c"], acks=1)[0] == 0  # acks=1 does not care


def test_a_produce_waiting_for_a_follower_that_never_comes_times_out(cluster, zk_client):
    create_topic(zk_client, "slow", 1, 3, rng=random.Random(4))
    state, port = leader_port(cluster, zk_client, "slow")
    followers = [b for b in state.isr if b != state.leader]
    for follower in followers:
        cluster[follower].server.replica_manager.fetchers.shutdown()  # alive, registered, not fetching
    with Client08(port) as client:
        assert produce(client, "slow", 0, [b"a"], timeout_ms=300) == (ErrorCode.REQUEST_TIMED_OUT, 0)
        # the ISR shrinks past replica.lag.time.max.ms, then acks=-1 needs only the leader
        wait_until(lambda: zk_state(zk_client, "slow", 0).isr == (state.leader,), 20, message="ISR shrunk")
        assert produce(client, "slow", 0, [b"b"]) == (0, 1)


def test_controlled_shutdown_moves_leadership_before_the_broker_stops(cluster, zk_client):
    create_topic(zk_client, "moving", 4, 3, rng=random.Random(5))
    for p in range(4):
        leader_port(cluster, zk_client, "moving", p)
    controller_id = next(b for b in cluster if cluster[b].server.controller.active)
    victim = next(b for b in cluster if b != controller_id)
    # what a broker sends on SIGTERM: ControlledShutdown v0 (no client id) to the controller
    with Client08(cluster[controller_id].port) as client:
        answer = client.call(admin.ControlledShutdownRequestV0(victim))
    assert (answer.error, answer.partitions_remaining) == (0, [])
    for p in range(4):
        s = zk_state(zk_client, "moving", p)
        assert s.leader != victim and victim not in s.isr, f"moving-{p}: {s}"
    replicas = cluster[victim].server.replica_manager
    wait_until(lambda: replicas.led_partitions() == [], 10, message="the victim told it leads nothing")
    wait_until(lambda: not replicas.fetchers.fetchers(), 10, message="the victim's fetchers stopped")
    with Client08(cluster[controller_id].port) as client:
        assert client.call(admin.ControlledShutdownRequestV0(99)).error == ErrorCode.BROKER_NOT_AVAILABLE


def test_topics_describe_shows_the_leader_replicas_and_isr_the_brokers_serve(cluster, zk_client, zk_connect):
    create_topic(zk_client, "shown", 3, 3, rng=random.Random(6))
    for p in range(3):
        leader_port(cluster, zk_client, "shown", p)
    victim = zk_state(zk_client, "shown", 0).leader
    cluster[victim].stop()  # leaders move and the ISRs shrink
    wait_until(lambda: all(victim not in zk_state(zk_client, "shown", p).isr for p in range(3)), 20)

    def served():
        answers = [metadata(b.port, ["shown"])[0] for i, b in cluster.items() if i != victim]
        first = sorted(
            (p.partition, p.leader, tuple(p.replicas), tuple(p.isr)) for p in answers[0].partitions
        )
        same = all(
            sorted((p.partition, p.leader, tuple(p.replicas), tuple(p.isr)) for p in a.partitions) == first
            for a in answers
        )
        gone = all(victim not in p.replicas for p in answers[0].partitions)  # their metadata knows it died
        return same and gone and first

    partitions = wait_until(served, 20, message="the live brokers agree")
    result = CliRunner().invoke(main, ["topics", "--zookeeper", zk_connect, "--describe", "--topic", "shown"])
    assert result.exit_code == 0, result.output
    lines = [line.split("\t") for line in result.output.splitlines() if "Partition: " in line]
    described = sorted(
        (
            int(fields[2].split(": ")[1]),
            int(fields[3].split(": ")[1]),
            tuple(int(r) for r in fields[4].split(": ")[1].split(",")),
            tuple(int(r) for r in fields[5].split(": ")[1].split(",")),
        )
        for fields in lines
    )
    # Metadata leaves the dead broker out of the replica list (error 9); the ISRs and leaders are the same
    assert [(p, leader, isr) for p, leader, _, isr in described] == [
        (p, leader, isr) for p, leader, _, isr in partitions
    ]
    assert all(
        set(replicas) - {victim} == set(served_replicas)
        for (_, _, replicas, _), (_, _, served_replicas, _) in zip(described, partitions, strict=True)
    )


def test_auto_creation_uses_default_replication_factor_and_refuses_too_few_brokers(
    cluster, start_broker08, zk_client
):
    broker = start_broker08(4, default_replication_factor="3", num_partitions="2", **FAST)
    with Client08(broker.port) as client:
        wait_until(
            lambda: all(
                t.error == 0 and all(p.leader >= 0 for p in t.partitions)
                for t in client.call(MetadataRequestV0(["auto3"])).topics
            ),
            20,
            message="auto3 created with leaders",
        )
    assignment = parse_topic_assignment("auto3", zk_client.get("/brokers/topics/auto3")[0])
    assert len(assignment) == 2 and all(len(set(replicas)) == 3 for replicas in assignment.values())

    too_many = start_broker08(5, default_replication_factor="6", **FAST)
    with Client08(too_many.port) as client:
        answer = client.call(MetadataRequestV0(["auto6"]))
    assert [(t.topic, t.error, t.partitions) for t in answer.topics] == [("auto6", ErrorCode.UNKNOWN, [])]
    assert answer.brokers == []  # 0.8.2: a failed auto-creation answers no brokers
    assert zk_client.exists("/brokers/topics/auto6") is None


def test_preferred_replica_election_hands_leadership_back(cluster, zk_client, zk_connect, start_broker08):
    zk_client.create(
        "/brokers/topics/pref", b'{"version":1,"partitions":{"0":[1,2,3],"1":[2,3,1]}}', makepath=True
    )
    wait_until(lambda: leaders(zk_client, "pref", 2) == [1, 2], 20, message="preferred")
    cluster[1].stop()
    wait_until(lambda: zk_state(zk_client, "pref", 0).leader in (2, 3), 20, message="1's partition moved")
    start_broker08(1, auto_leader_rebalance_enable="false", **FAST)
    wait_until(lambda: 1 in zk_state(zk_client, "pref", 0).isr, 20, message="1 back in the ISR")
    assert (
        zk_state(zk_client, "pref", 0).leader != 1
    )  # nothing moves it back by itself (auto rebalance: 300 s)
    result = CliRunner().invoke(main, ["preferred-replica-election", "--zookeeper", zk_connect])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[1].startswith(
        "Successfully started preferred replica election for partitions"
    )
    assert "[pref,0], [pref,1]" in result.output
    wait_until(lambda: zk_state(zk_client, "pref", 0).leader == 1, 20, message="1 leads again")
    wait_until(
        lambda: not zk_client.exists("/admin/preferred_replica_election"), 10, message="the znode deleted"
    )
    assert zk_state(zk_client, "pref", 1).leader == 2


def test_an_election_file_names_partitions_and_one_in_progress_refuses_another(
    zk_client, zk_connect, tmp_path
):
    # no broker runs here: the election znode stays until a controller acts on it
    path = tmp_path / "election.json"
    path.write_text('{"partitions":[{"topic":"t","partition":1},{"topic":"u","partition":0}]}')
    args = ["preferred-replica-election", "--zookeeper", zk_connect, "--path-to-json-file", str(path)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert parse_partition_list("e", zk_client.get("/admin/preferred_replica_election")[0]) == {
        ("t", 1),
        ("u", 0),
    }
    refused = CliRunner().invoke(main, args)
    assert refused.exit_code == 1 and "currently in progress for [t,1], [u,0]" in refused.output
    path.write_text('{"partitions":[{"topic":"t","partition":1},{"topic":"t","partition":1}]}')
    duplicate = CliRunner().invoke(main, args)
    assert duplicate.exit_code == 1 and "duplicate partitions" in duplicate.output


def test_auto_leader_rebalance_hands_leadership_back_by_itself(start_broker08, zk_client):
    rebalance = {"auto_leader_rebalance_enable": "true", "leader_imbalance_check_interval_seconds": "1"}
    brokers = {b: start_broker08(b, **FAST, **rebalance) for b in (1, 2)}
    zk_client.create(
        "/brokers/topics/auto", b'{"version":1,"partitions":{"0":[1,2],"1":[2,1]}}', makepath=True
    )
    wait_until(lambda: leaders(zk_client, "auto", 2) == [1, 2], 20, message="preferred")
    brokers[1].stop()
    wait_until(lambda: zk_state(zk_client, "auto", 0).leader == 2, 20, message="2 leads both")
    start_broker08(1, **FAST, **rebalance)
    wait_until(
        lambda: zk_state(zk_client, "auto", 0).leader == 1, 30, message="the imbalance check moved it back"
    )


def test_reassign_partitions_moves_replicas_and_their_data(
    cluster, start_broker08, zk_client, zk_connect, tmp_path
):
    cluster[4] = start_broker08(4, **FAST)
    zk_client.create("/brokers/topics/mv", b'{"version":1,"partitions":{"0":[1,2],"1":[2,1]}}', makepath=True)
    _, port = leader_port(cluster, zk_client, "mv", 0)
    with Client08(port) as client:
        for i in range(10):
            assert produce(client, "mv", 0, [b"v%d" % i] * 10)[0] == 0
    topics = tmp_path / "topics.json"
    topics.write_text('{"topics":[{"topic":"mv"}],"version":1}')
    proposed = CliRunner().invoke(
        main,
        [
            "reassign-partitions",
            "--zookeeper",
            zk_connect,
            "--generate",
            "--topics-to-move-json-file",
            str(topics),
            "--broker-list",
            "3,4",
        ],
    )
    assert proposed.exit_code == 0, proposed.output
    lines = proposed.output.splitlines()
    assert lines[0] == "Current partition replica assignment"
    assert (
        lines[2]
        == '{"version":1,"partitions":[{"topic":"mv","partition":0,"replicas":[1,2]},{"topic":"mv","partition":1,"replicas":[2,1]}]}'
    )
    assert {tuple(sorted(r)) for r in parse_reassignment(lines[5]).values()} == {(3, 4)}

    moves = tmp_path / "moves.json"
    moves.write_text('{"version":1,"partitions":[{"topic":"mv","partition":0,"replicas":[3,4]}]}')
    args = ["reassign-partitions", "--zookeeper", zk_connect, "--reassignment-json-file", str(moves)]
    started = CliRunner().invoke(main, [*args, "--execute"])
    assert started.exit_code == 0, started.output
    assert "Save this to use as the --reassignment-json-file option during rollback" in started.output

    def verified():
        result = CliRunner().invoke(main, [*args, "--verify"])
        return "Reassignment of partition [mv,0] completed successfully" in result.output

    wait_until(verified, 30, message="the move completed")
    state = zk_state(zk_client, "mv", 0)
    assert state.leader in (3, 4) and sorted(state.isr) == [3, 4]
    assert parse_topic_assignment("mv", zk_client.get("/brokers/topics/mv")[0]) == {0: [3, 4], 1: [2, 1]}
    assert not zk_client.exists("/admin/reassign_partitions")
    _, port = leader_port(cluster, zk_client, "mv", 0)
    high_watermark, messages = read_all(port, "mv", 0)
    assert high_watermark == 100 and [v for _, v in messages][::10] == [b"v%d" % i for i in range(10)]
    for old in (1, 2):  # StopReplica with delete: the old replicas' logs are gone
        wait_until(
            lambda old=old: cluster[old].server.log_manager.get_log("mv", 0) is None, 10, message=f"{old}"
        )


def test_deleting_a_replicated_topic_removes_every_replica_and_its_metadata(
    start_broker08, zk_client, zk_connect
):
    brokers = {b: start_broker08(b, delete_topic_enable="true", **FAST) for b in (1, 2, 3)}
    create_topic(zk_client, "doomed", 2, 3, rng=random.Random(13))
    _, port = leader_port(brokers, zk_client, "doomed", 0)
    with Client08(port) as client:
        assert produce(client, "doomed", 0, [b"x"] * 5)[0] == 0
    result = CliRunner().invoke(main, ["topics", "--zookeeper", zk_connect, "--delete", "--topic", "doomed"])
    assert result.exit_code == 0, result.output
    for broker_id, broker in brokers.items():
        wait_until(
            lambda broker=broker: (
                not any(log.topic == "doomed" for log in broker.server.log_manager.all_logs())
            ),
            20,
            message=f"broker {broker_id} deleted its replicas",
        )
        wait_until(
            lambda broker=broker: "doomed" not in broker.server.metadata_cache.snapshot().topics,
            20,
            message=f"broker {broker_id} forgot the topic (UpdateMetadata with leader -2)",
        )
    assert not zk_client.exists("/brokers/topics/doomed")

"""What the controller tells each broker, without sockets or ZooKeeper: LeaderAndIsr to the replicas of a
changed partition, UpdateMetadata to everyone, StopReplica in controlled shutdown and deletion."""

from __future__ import annotations

from zkafka.controller.request_planner import ClusterView, RequestPlanner
from zkafka.protocol import inter_broker as admin
from zkafka.zk.paths08 import BrokerRegistration, PartitionState

CONTROLLER, EPOCH = 1, 4


def brokers(*ids, stamp="1"):
    return {b: BrokerRegistration(b, f"h{b}", 9090 + b, timestamp=stamp) for b in ids}


def view(states, assignments, live, **kw):
    return ClusterView(states, assignments, live, **kw)


def names(requests):
    return [(b, type(r).__name__) for b, r in requests]


ASSIGN = {("t", 0): (1, 2, 3), ("t", 1): (2, 3, 1)}


def states(epoch0=0, epoch1=0, version0=0, version1=0, isr0=(1, 2, 3), isr1=(2, 3, 1)):
    return {
        ("t", 0): PartitionState(1, epoch0, isr0, 3, version0),
        ("t", 1): PartitionState(2, epoch1, isr1, 3, version1),
    }


def test_a_new_controller_tells_every_broker_everything_in_0_8_order():
    planner = RequestPlanner(CONTROLLER, EPOCH)
    requests = planner.plan(view(states(), ASSIGN, brokers(1, 2, 3)))
    assert names(requests) == [
        (1, "LeaderAndIsrRequestV0"),
        (1, "UpdateMetadataRequestV0"),
        (2, "LeaderAndIsrRequestV0"),
        (2, "UpdateMetadataRequestV0"),
        (3, "LeaderAndIsrRequestV0"),
        (3, "UpdateMetadataRequestV0"),
    ]
    leader_and_isr = requests[0][1]
    assert (leader_and_isr.controller_id, leader_and_isr.controller_epoch) == (CONTROLLER, EPOCH)
    assert leader_and_isr.partition_states[0] == admin.PartitionStateEntry(
        "t", 0, admin.PartitionState(3, 1, 0, [1, 2, 3], 0, [1, 2, 3])
    )
    assert leader_and_isr.leaders == [admin.Broker(1, "h1", 9091), admin.Broker(2, "h2", 9092)]
    update = requests[1][1]
    assert [b.node_id for b in update.live_brokers] == [1, 2, 3]
    assert planner.plan(view(states(), ASSIGN, brokers(1, 2, 3))) == []  # nothing new: nothing sent


def test_a_new_leader_epoch_goes_to_the_partitions_replicas_and_metadata_to_all():
    planner = RequestPlanner(CONTROLLER, EPOCH)
    planner.plan(view(states(), ASSIGN, brokers(1, 2, 3, 4)))
    moved = states(epoch0=1, version0=1, isr0=(2, 3))
    moved[("t", 0)] = PartitionState(2, 1, (2, 3), EPOCH, 1)
    requests = planner.plan(view(moved, ASSIGN, brokers(1, 2, 3, 4)))
    assert names(requests) == [
        (1, "LeaderAndIsrRequestV0"),
        (1, "UpdateMetadataRequestV0"),
        (2, "LeaderAndIsrRequestV0"),
        (2, "UpdateMetadataRequestV0"),
        (3, "LeaderAndIsrRequestV0"),
        (3, "UpdateMetadataRequestV0"),
        (4, "UpdateMetadataRequestV0"),  # not a replica: metadata only
    ]
    assert [e.partition for e in requests[0][1].partition_states] == [0]


def test_an_isr_change_written_by_the_leader_is_metadata_only():
    planner = RequestPlanner(CONTROLLER, EPOCH)
    planner.plan(view(states(), ASSIGN, brokers(1, 2, 3)))
    requests = planner.plan(view(states(version1=1, isr1=(2, 3)), ASSIGN, brokers(1, 2, 3)))
    assert names(requests) == [
        (1, "UpdateMetadataRequestV0"),
        (2, "UpdateMetadataRequestV0"),
        (3, "UpdateMetadataRequestV0"),
    ]
    assert requests[0][1].partition_states[0].state.isr == [2, 3]


def test_a_view_older_than_what_was_told_sends_nothing():
    planner = RequestPlanner(CONTROLLER, EPOCH)
    planner.plan(view(states(epoch0=2, version0=5), ASSIGN, brokers(1, 2, 3)))
    assert planner.plan(view(states(epoch0=1, version0=4), ASSIGN, brokers(1, 2, 3))) == []


def test_a_restarted_broker_is_told_everything_again_and_the_others_learn_the_broker_list():
    planner = RequestPlanner(CONTROLLER, EPOCH)
    planner.plan(view(states(), ASSIGN, brokers(1, 2, 3)))
    live = brokers(1, 2, 3) | brokers(3, stamp="2")
    requests = planner.plan(view(states(), ASSIGN, live))
    assert names(requests) == [
        (1, "UpdateMetadataRequestV0"),
        (2, "UpdateMetadataRequestV0"),
        (3, "LeaderAndIsrRequestV0"),
        (3, "UpdateMetadataRequestV0"),
    ]
    assert requests[0][1].partition_states == []
    assert len(requests[2][1].partition_states) == 2


def test_a_broker_in_controlled_shutdown_gets_stop_replica_for_what_it_no_longer_leads():
    planner = RequestPlanner(CONTROLLER, EPOCH)
    planner.plan(view(states(), ASSIGN, brokers(1, 2, 3)))
    after = {
        ("t", 0): PartitionState(2, 1, (2, 3), EPOCH, 1),  # 1 led it: leadership moved
        ("t", 1): PartitionState(2, 1, (2, 3), EPOCH, 1),  # 1 followed it: out of the ISR
    }
    requests = planner.plan(view(after, ASSIGN, brokers(1, 2, 3), shutting_down=frozenset({1})))
    assert names(requests)[:3] == [
        (1, "UpdateMetadataRequestV0"),
        (1, "StopReplicaRequestV0"),
        (2, "LeaderAndIsrRequestV0"),
    ]
    stop = requests[1][1]
    assert stop.delete_partitions == 0
    assert stop.partitions == [admin.TopicPartition("t", 0), admin.TopicPartition("t", 1)]
    assert all(b != 1 for b, r in requests if isinstance(r, admin.LeaderAndIsrRequestV0))
    again = planner.plan(view(after, ASSIGN, brokers(1, 2, 3), shutting_down=frozenset({1})))
    assert again == []  # told once


def test_a_deleted_topic_gets_stop_replica_with_delete_then_leader_minus_2():
    planner = RequestPlanner(CONTROLLER, EPOCH)
    planner.plan(view(states(), ASSIGN, brokers(1, 2)))
    requests = planner.plan(view(states(), ASSIGN, brokers(1, 2), deleting=frozenset({"t"})))
    assert names(requests) == [(1, "StopReplicaRequestV0"), (2, "StopReplicaRequestV0")]
    assert requests[0][1].delete_partitions == 1
    requests = planner.plan(view({}, {}, brokers(1, 2)))
    assert names(requests) == [(1, "UpdateMetadataRequestV0"), (2, "UpdateMetadataRequestV0")]
    assert {e.state.leader for e in requests[0][1].partition_states} == {-2}


def test_a_stop_replica_a_broker_refused_is_sent_again_for_the_refused_partitions_only():
    planner = RequestPlanner(CONTROLLER, EPOCH)
    planner.plan(view(states(), ASSIGN, brokers(1, 2)))
    deleting = view(states(), ASSIGN, brokers(1, 2), deleting=frozenset({"t"}))
    assert names(planner.plan(deleting)) == [(1, "StopReplicaRequestV0"), (2, "StopReplicaRequestV0")]
    assert planner.plan(deleting) == []  # told once
    planner.stop_failed(2, [("t", 1)])
    ((broker, again),) = planner.plan(deleting)
    assert broker == 2 and again.delete_partitions == 1
    assert [(p.topic, p.partition) for p in again.partitions] == [("t", 1)]


def test_a_topic_deleted_and_created_again_with_the_same_replicas_is_told_in_full():
    """Its leader epochs and znode versions start at 0 again: what the old topic was told is forgotten."""
    for seen_gone in (True, False):  # the recreation seen after a view without the topic, or at once
        planner = RequestPlanner(CONTROLLER, EPOCH)
        planner.plan(view(states(), ASSIGN, brokers(1, 2, 3)))
        planner.plan(view(states(), ASSIGN, brokers(1, 2, 3), deleting=frozenset({"t"})))
        if seen_gone:
            planner.plan(view({}, {}, brokers(1, 2, 3)))
        requests = planner.plan(view(states(), ASSIGN, brokers(1, 2, 3)))
        assert names(requests) == [
            (b, name) for b in (1, 2, 3) for name in ("LeaderAndIsrRequestV0", "UpdateMetadataRequestV0")
        ]
        for _, request in requests:
            assert {(e.topic, e.partition, e.state.leader_epoch) for e in request.partition_states} == {
                ("t", 0, 0),
                ("t", 1, 0),
            }


def test_a_replica_reassigned_away_is_told_to_delete_its_log():
    planner = RequestPlanner(CONTROLLER, EPOCH)
    planner.plan(view(states(), ASSIGN, brokers(1, 2, 3, 4)))
    moved = dict(ASSIGN) | {("t", 0): (2, 4)}
    after = states(epoch0=1, version0=1, isr0=(2, 4)) | {("t", 0): PartitionState(2, 1, (2, 4), EPOCH, 1)}
    requests = planner.plan(view(after, moved, brokers(1, 2, 3, 4)))
    stops = [(b, r) for b, r in requests if isinstance(r, admin.StopReplicaRequestV0)]
    assert [(b, r.delete_partitions, r.partitions) for b, r in stops] == [
        (1, 1, [admin.TopicPartition("t", 0)]),
        (3, 1, [admin.TopicPartition("t", 0)]),
    ]
    assert (4, "LeaderAndIsrRequestV0") in names(requests)
    assert not [r for b, r in planner.plan(view(after, moved, brokers(1, 2, 3, 4)))]  # told once


def test_leader_and_isr_names_the_leaders_end_points_of_the_inter_broker_listener():
    internal = (("PLAINTEXT", "PLAINTEXT"), ("INTERNAL", "SASL_SSL"))
    live = {
        b: BrokerRegistration(
            b, f"h{b}", 9090 + b, endpoints=(f"PLAINTEXT://h{b}:{9090 + b}", f"INTERNAL://i{b}:{9190 + b}"),
            protocol_map=internal,
        )
        for b in (1, 2, 3)
    }  # fmt: skip
    requests = RequestPlanner(CONTROLLER, EPOCH, "INTERNAL").plan(view(states(), ASSIGN, live))
    assert requests[0][1].leaders == [admin.Broker(1, "i1", 9191), admin.Broker(2, "i2", 9192)]
    update = requests[1][1]
    assert type(update).__name__ == "UpdateMetadataRequestV3"
    assert [(e.listener_name, e.host, e.port) for e in update.live_brokers[0].end_points] == [
        ("PLAINTEXT", "h1", 9091),
        ("INTERNAL", "i1", 9191),
    ]

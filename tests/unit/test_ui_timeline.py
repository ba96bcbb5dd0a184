"""The web view's timeline, fed observations by hand: a member leaving opens a rebalance whose steps are the
assignment and the observed owner changes; it settles when the owners are that assignment."""

from zkafka.ui.timeline import Timeline
from zkafka.ui.zk_groups import ZkGroup

PARTS = {"t": ["0-0", "0-1", "1-0", "1-1"]}
TWO = {"g_a": {"t": ["g_a-0"]}, "g_b": {"t": ["g_b-0"]}}
ONE = {"g_a": {"t": ["g_a-0"]}}
SPLIT = {("t", "0-0"): "g_a-0", ("t", "0-1"): "g_a-0", ("t", "1-0"): "g_b-0", ("t", "1-1"): "g_b-0"}
ALL_A = {key: "g_a-0" for key in SPLIT}


def group(members, owners) -> ZkGroup:
    return ZkGroup("g", "0.7", members, dict(PARTS), dict(owners))


def test_a_member_leaving_releasing_first_then_settling():
    timeline = Timeline()
    timeline.observe_zk_group(100.0, group(TWO, SPLIT))
    assert timeline.entries == []  # a settled group as found is no rebalance
    # b releases its owner znodes, then its session ends (its /ids node vanishes), then a claims
    released = {k: v for k, v in SPLIT.items() if v == "g_a-0"}
    timeline.observe_zk_group(100.1, group(TWO, released))
    timeline.observe_zk_group(100.2, group(ONE, released))
    (entry,) = timeline.entries
    assert entry.status == "in progress"
    assert entry.title == "g: g_b left"
    timeline.observe_zk_group(100.35, group(ONE, ALL_A))
    assert entry.status == "settled" and entry.settled_after_ms == 250
    wheres = [step.where for step in entry.steps]
    assert wheres[:5] == [
        "zkafka.consumer.membership.GroupMembership.on_watch",
        "zkafka.consumer.group_view07.read_group_view",
        "zkafka.assignment.range_assignor.sort_partitions",
        "zkafka.assignment.range_assignor.sort_threads",
        "zkafka.assignment.range_assignor.range_share",
    ]
    slices = entry.steps[4].lines
    assert slices == ["g_a-0: [0, 4) -> 0-0, 0-1, 1-0, 1-1"]
    by_where = {step.where: step.lines for step in entry.steps}
    assert by_where["zkafka.consumer.ownership.release"] == ["t:1-0 (was g_b-0)", "t:1-1 (was g_b-0)"]
    assert by_where["zkafka.consumer.rebalancer.ZKRebalancer._release_and_claim"] == ["t:1-0 -> g_a-0", "t:1-1 -> g_a-0"]
    assert by_where["zkafka.consumer.rebalancer.ZKRebalancer.rebalance"] == ["none observed"]
    assert entry.events[0] == "+0.000s released t:1-0 (was g_b-0)"


def test_a_member_joining_and_a_retried_claim():
    timeline = Timeline()
    timeline.observe_zk_group(0.0, group(ONE, ALL_A))
    timeline.observe_zk_group(1.0, group(TWO, ALL_A))  # b joined; a still owns everything
    entry = timeline.entries[-1]
    assert entry.title == "g: g_b joined" and entry.status == "in progress"
    half = {k: v for k, v in SPLIT.items() if v == "g_a-0"}
    timeline.observe_zk_group(1.1, group(TWO, half))  # a released 1-0 and 1-1
    timeline.observe_zk_group(1.2, group(TWO, {**half, ("t", "1-0"): "g_b-0"}))
    timeline.observe_zk_group(1.3, group(TWO, half))  # b gave 1-0 up again (its attempt failed) ...
    timeline.observe_zk_group(1.5, group(TWO, SPLIT))  # ... and retried
    assert entry.status == "settled"
    retries = [s for s in entry.steps if s.where.endswith("ZKRebalancer.rebalance")][0]
    assert retries.lines == ["claimed more than once: t:1-0"]


def test_a_change_before_settling_supersedes_the_open_entry():
    timeline = Timeline()
    timeline.observe_zk_group(0.0, group(TWO, SPLIT))
    timeline.observe_zk_group(1.0, group(ONE, SPLIT))
    timeline.observe_zk_group(1.1, group({}, SPLIT))
    assert [e.status for e in timeline.entries] == ["superseded", "in progress"]
    timeline.observe_zk_group(1.2, group({}, {}))
    assert timeline.entries[-1].status == "settled"


def test_coordinator_rebalance_steps():
    timeline = Timeline()
    stable = {
        "name": "cg",
        "state": "Stable",
        "protocol": "range",
        "coordinator": 0,
        "generation": 1,
        "leader": "m1",
        "partition_counts": {"t": 4},
        "members": [{"id": "m1", "subscription": ["t"], "assignment": {"t": [0, 1, 2, 3]}}],
    }
    timeline.observe_coordinator_group(0.0, stable)
    preparing = {**stable, "state": "PreparingRebalance"}
    timeline.observe_coordinator_group(1.0, preparing)
    two = [
        {"id": "m1", "subscription": ["t"], "assignment": {"t": [0, 1]}},
        {"id": "m2", "subscription": ["t"], "assignment": {"t": [2, 3]}},
    ]
    timeline.observe_coordinator_group(1.5, {**stable, "generation": 2, "members": two})
    entry = timeline.entries[-1]
    assert entry.kind == "coordinator" and entry.status == "settled" and entry.settled_after_ms == 500
    assert len(timeline.entries) == 1  # the Stable group as found is no rebalance
    assert entry.measure.startswith("settled in 500 ms")
    titles = [s.title for s in entry.steps]
    assert titles[0].startswith("FindCoordinator: the group's coordinator is broker 0")
    assert titles[1].startswith("Heartbeat: members still in the group are answered REBALANCE_IN_PROGRESS")
    assert entry.steps[1].lines == ["m1"]
    assert "generation 2" in titles[2] and "leader (m1)" in titles[2]
    assert any(t.startswith("the leader's assignor: topic t") for t in titles)
    assert entry.steps[-1].lines == ["m1: t: 0, 1", "m2: t: 2, 3"]


def test_leader_moves_make_settled_election_entries():
    timeline = Timeline()
    topics = [{"name": "t", "partitions": [{"partition": 0, "leader": 1, "replicas": [1, 2], "isr": [1, 2]}]}]
    timeline.observe_partition_states(0.0, topics, {1, 2})
    assert timeline.entries == []
    moved = [
        {
            "name": "t",
            "partitions": [{"partition": 0, "leader": 2, "replicas": [1, 2], "isr": [2], "leader_epoch": 1}],
        }
    ]
    timeline.observe_partition_states(1.0, moved, {2})
    (entry,) = timeline.entries
    assert entry.title == "leader of t-0: broker 1 -> 2" and entry.status == "settled"
    assert "is gone" in entry.steps[0].title
    assert entry.steps[1].where == "zkafka.controller.leader_selector.next_partition_state"


def test_an_isr_change_is_its_own_entry_and_an_election_measures_its_delay_from_the_broker_s_end():
    timeline = Timeline()
    three = {"partition": 0, "leader": 1, "replicas": [1, 2, 3], "isr": [1, 2, 3], "leader_epoch": 0}
    timeline.observe_partition_states(0.0, [{"name": "t", "partitions": [three]}], {1, 2, 3})
    shrunk = {**three, "isr": [1, 2]}
    timeline.observe_partition_states(1.0, [{"name": "t", "partitions": [shrunk]}], {1, 2})
    (isr,) = timeline.entries
    assert isr.kind == "isr" and isr.title == "ISR of t-0: [1, 2, 3] -> [1, 2]"
    assert isr.measure == "[3] out of sync: 2 of 3 in sync" and "dead: 3" in isr.steps[0].title
    moved = {**shrunk, "leader": 2, "isr": [2], "leader_epoch": 1}
    timeline.observe_partition_states(5.5, [{"name": "t", "partitions": [moved]}], {2}, {1: 5.25})
    election = timeline.entries[-1]
    assert (
        election.kind == "leader"
        and election.measure == "leader epoch 1, elected 250 ms after broker 1's end was seen"
    )
    assert "settled in" not in election.measure

"""consumer-groups' tables (Kafka 3.4's columns) and JSON from a described group (pure)."""

from __future__ import annotations

import json

import pytest

from zkafka.tools.consumer_group_service import ConsumerGroupDescription, GroupToolError, MemberDescription
from zkafka.tools.consumer_groups import (
    GroupDescription,
    format_json,
    format_members,
    format_offsets,
    format_state,
    format_states,
    state_notice,
)
from zkafka.tools.offset_checker import OffsetReport, PartitionRow


def description() -> GroupDescription:
    member = {
        "id": "c-1",
        "client_id": "c",
        "client_host": "/10.0.0.1",
        "subscription": ["t"],
        "assignment": {"t": [0, 1]},
    }
    report = OffsetReport(
        "g",
        [
            PartitionRow("g", "t", "0", 5, 9, "c-c-1 (/10.0.0.1)"),
            PartitionRow("g", "t", "1", None, None, "c-c-1 (/10.0.0.1)", "no leader"),
        ],
    )
    return GroupDescription("g", "Stable", "range", 3, "c-1", 0, [member], report)


def test_json_names_the_log_end_and_lag_and_keeps_errors():
    value = json.loads(format_json(description()))
    assert value["generation"] == 3 and value["members"][0]["assignment"] == {"t": [0, 1]}
    assert value["partitions"][0] == {
        "topic": "t",
        "partition": 0,
        "offset": 5,
        "log_end": 9,
        "lag": 4,
        "owner": "c-c-1 (/10.0.0.1)",
    }
    assert value["partitions"][1]["error"] == "no leader" and value["partitions"][1]["lag"] is None


def described(state: str = "Stable", instance_id: str | None = None) -> ConsumerGroupDescription:
    members = [
        MemberDescription("c-1-uuid", instance_id, "/10.0.0.1", "c-1", {"t": [1, 0], "u": [2]}),
        MemberDescription("c-2-uuid", None, "/10.0.0.2", "c-2", {}),
    ]
    return ConsumerGroupDescription("g", state, "consumer", "range", (0, "localhost", 9092), members)


def test_list_with_states_is_kafkas_group_state_table():
    assert format_states([("a-rather-long-group-name", "Stable"), ("g", "Empty")]) == [
        "GROUP                    STATE",
        "a-rather-long-group-name Stable",
        "g                        Empty",
    ]


def test_the_offsets_table_has_kafkas_columns_with_dashes_for_the_unknown():
    rows = [("g", "t", 0, 5, 9, 4, "c-1-uuid", "/10.0.0.1", "c-1"), ("g", "t", 1, "-", 3, "-", "-", "-", "-")]
    lines = format_offsets(rows)
    assert lines[0] == ""
    assert lines[1].split() == [
        "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID",
    ]  # fmt: skip
    assert lines[2] == "g               t               0          5               9               4               c-1-uuid        /10.0.0.1       c-1"
    assert lines[3].split() == ["g", "t", "1", "-", "3", "-", "-", "-", "-"]


def test_members_show_instance_ids_only_when_a_member_is_static_and_assignments_with_verbose():
    plain = format_members(described())
    assert plain[1].split() == ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"]
    assert plain[2].split() == ["g", "c-1-uuid", "/10.0.0.1", "c-1", "3"]
    verbose = format_members(described(instance_id="i-1"), verbose=True)
    assert verbose[1].split() == ["GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "ASSIGNMENT"]
    assert verbose[2].split() == ["g", "c-1-uuid", "i-1", "/10.0.0.1", "c-1", "3", "t(0,1),", "u(2)"]
    assert verbose[3].split() == ["g", "c-2-uuid", "/10.0.0.2", "c-2", "0", "-"]  # no instance id: blank


def test_state_names_the_coordinator_strategy_state_and_member_count():
    assert format_state(described())[2].split() == ["g", "localhost:9092", "(0)", "range", "Stable", "2"]


@pytest.mark.parametrize(
    ("state", "notice"),
    [
        ("Stable", None),
        ("Empty", "Consumer group 'g' has no active members."),
        ("PreparingRebalance", "Warning: Consumer group 'g' is rebalancing."),
        ("CompletingRebalance", "Warning: Consumer group 'g' is rebalancing."),
    ],
)
def test_the_line_before_the_table_follows_the_state(state, notice):
    assert state_notice(described(state)) == notice


def test_a_dead_group_does_not_exist():
    with pytest.raises(GroupToolError, match="^Consumer group 'g' does not exist.$"):
        state_notice(described("Dead"))


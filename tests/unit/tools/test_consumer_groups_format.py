"""consumer-groups' text and JSON from a described group (pure)."""

from __future__ import annotations

import json

from zkafka.tools.consumer_groups import GroupDescription, format_description, format_json
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


def test_the_text_has_the_group_its_members_and_one_line_per_partition():
    lines = format_description(description())
    assert lines[0] == "GROUP g STATE Stable PROTOCOL range GENERATION 3 COORDINATOR 0"
    assert lines[2].split() == ["c-1", "c", "/10.0.0.1", "t-0,t-1"]
    assert lines[4].split() == ["t", "0", "5", "9", "4", "c-c-1", "(/10.0.0.1)"]
    assert lines[5].split() == [
        "t",
        "1",
        "unknown",
        "unknown",
        "unknown",
        "c-c-1",
        "(/10.0.0.1)",
        "(no",
        "leader)",
    ]


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

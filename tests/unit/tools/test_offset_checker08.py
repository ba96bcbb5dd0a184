"""The 0.8 offset checker's lines (pure): 0.8.2's columns, unknown values, leaderless partitions, JSON."""

from __future__ import annotations

import json

from zkafka.tools.offset_checker import BrokerInfo, OffsetReport, PartitionRow
from zkafka.tools.offset_checker08 import NO_LEADER, format_json08, format_report08


def report() -> OffsetReport:
    return OffsetReport(
        "billing",
        [
            PartitionRow("billing", "orders", "0", 212, 330, "billing_c-0"),
            PartitionRow("billing", "orders", "1", None, 440, None),
            PartitionRow("billing", "orders", "2", 5, None, None, "broker 1 unreachable: refused"),
            PartitionRow("billing", "orders", "3", 7, None, None, NO_LEADER),
        ],
        [BrokerInfo(0, "h0", 9092), BrokerInfo(1, "h1", 9093, error="unreachable: refused")],
    )


def test_lines_in_082s_columns():
    lines = format_report08(report(), broker_info=True)
    assert lines == [
        "Group           Topic                          Pid Offset          logSize         Lag             Owner",
        "billing         orders                         0   212             330             118             billing_c-0",
        "billing         orders                         1   unknown         440             unknown         none",
        "billing         orders                         2   5               unknown         unknown         none",
        "No broker for partition orders - 3",
        "BROKER INFO",
        "0 -> h0:9092",
        "1 -> h1:9093 (unreachable: refused)",
    ]
    assert "BROKER INFO" not in format_report08(report())


def test_json_names_partitions_by_id():
    value = json.loads(format_json08(report()))
    rows = value["topics"][0]["partitions"]
    assert [(r["partition"], r["offset"], r["log_size"], r["lag"]) for r in rows] == [
        (0, 212, 330, 118),
        (1, None, 440, None),
        (2, 5, None, None),
        (3, 7, None, None),
    ]

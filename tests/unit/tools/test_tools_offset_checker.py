"""ConsumerOffsetChecker's pure parts: partition order, lag and totals, the table and the JSON."""

from __future__ import annotations

import json

from zkafka.tools.offset_checker import (
    BrokerInfo,
    OffsetReport,
    PartitionRow,
    TopicTotals,
    parse_offset,
    split_topics,
)
from zkafka.tools.offset_checker07 import format_json, format_report, partitions_from_counts, sort_partitions


def test_partitions_sort_as_strings_like_0_7():
    assert sort_partitions(["2-0", "1-2", "10-0", "1-10", "1-2"]) == ["1-10", "1-2", "10-0", "2-0"]
    assert partitions_from_counts({1: 11, 2: 1})[:4] == ["1-0", "1-1", "1-10", "1-2"]
    assert partitions_from_counts({}) == []


def test_offsets_parse_or_are_unknown():
    assert parse_offset("1234") == 1234
    assert parse_offset(" 7\n") == 7
    assert parse_offset(None) is None
    assert parse_offset("x") is None


def test_topics_split_on_commas_and_repeat_without_duplicates():
    assert split_topics(["a,b", "c", " a , d ", ""]) == ["a", "b", "c", "d"]


def test_lag_is_log_size_minus_offset_and_unknown_when_either_is():
    assert PartitionRow("g", "t", "0-0", 100, 250, None).lag == 150
    assert PartitionRow("g", "t", "0-0", None, 250, None).lag is None
    assert PartitionRow("g", "t", "0-0", 100, None, None).lag is None


def test_totals_sum_known_values_and_count_unknown_partitions():
    rows = [
        PartitionRow("g", "t", "0-0", 10, 30, "c-0"),
        PartitionRow("g", "t", "0-1", 5, None, None, "broker 0 unreachable"),
        PartitionRow("g", "t", "1-0", None, 7, None),
    ]
    assert TopicTotals.of(rows) == TopicTotals(offset=15, log_size=37, lag=20, unknown=2)


def sample_report() -> OffsetReport:
    return OffsetReport(
        "group1",
        [
            PartitionRow("group1", "orders", "0-0", 120, 300, "group1_h-1-a-0"),
            PartitionRow("group1", "orders", "1-0", 55, None, None, "broker 1 is not registered (down?)"),
            PartitionRow("group1", "payments", "0-0", 0, 0, None),
            PartitionRow("group1", "payments", "0-1", None, 8, None),
        ],
        [BrokerInfo(0, "127.0.0.1", 9092), BrokerInfo(1), BrokerInfo(2, error="unreadable registration 'x'")],
    )


def test_table_has_aligned_rows_totals_per_topic_and_broker_info():
    lines = format_report(sample_report())
    assert lines[0].split() == ["Group", "Topic", "Broker-Part", "Offset", "Log", "size", "Lag", "Owner"]
    assert lines[1].split() == ["group1", "orders", "0-0", "120", "300", "180", "group1_h-1-a-0"]
    assert lines[2].split() == ["group1", "orders", "1-0", "55", "unknown", "unknown", "none"]
    assert lines[3].split() == ["orders", "total", "175", "300", "180", "(1", "partition", "unknown)"]
    assert lines[4].split() == ["group1", "payments", "0-0", "0", "0", "0", "none"]
    assert lines[5].split() == ["group1", "payments", "0-1", "none", "8", "unknown", "none"]
    assert lines[6].split() == ["payments", "total", "0", "8", "0", "(1", "partition", "unknown)"]
    assert lines[7:] == [
        "BROKER INFO",
        "0 -> 127.0.0.1:9092",
        "1 -> not registered (down?)",
        "2 -> unreadable registration 'x'",
    ]
    # Numbers are right-aligned under their header.
    offset_end = lines[0].index("Offset") + len("Offset")
    assert lines[1].index(" 120 ") + 4 == offset_end
    assert lines[2].index(" 55 ") + 3 == offset_end
    lag_end = lines[0].index("Lag") + len("Lag")
    assert lines[1].index(" 180 ") + 4 == lag_end


def test_table_of_a_group_without_offsets_says_so():
    lines = format_report(OffsetReport("nobody"))
    assert "group nobody has no offsets" in lines[1]
    assert lines[-1] == "BROKER INFO"


def test_json_has_partitions_totals_and_brokers():
    data = json.loads(format_json(sample_report()))
    assert data["group"] == "group1"
    orders, payments = data["topics"]
    assert orders["topic"] == "orders" and payments["topic"] == "payments"
    assert orders["partitions"][0] == {
        "group": "group1",
        "topic": "orders",
        "broker_part": "0-0",
        "offset": 120,
        "log_size": 300,
        "lag": 180,
        "owner": "group1_h-1-a-0",
        "error": None,
    }
    assert orders["partitions"][1]["lag"] is None and "not registered" in orders["partitions"][1]["error"]
    assert orders["totals"] == {"offset": 175, "log_size": 300, "lag": 180, "unknown": 1}
    assert data["brokers"][0] == {"id": 0, "host": "127.0.0.1", "port": 9092, "error": None}

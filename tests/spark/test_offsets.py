"""Pure offset logic: the JSON form, range planning, boundary walking, data-loss resolution."""

from __future__ import annotations

import pytest

from zkafka.records.message07 import build_message_set
from zkafka.spark.offsets import (
    EARLIEST,
    LATEST,
    OffsetRange,
    OffsetRange08,
    TopicPartition,
    TopicPartition08,
    cap_targets,
    cut_range,
    cut_targets,
    first_entry_size,
    offsets_from_json,
    offsets_to_json,
    partitions_from_json,
    resolve_range,
    split_counts,
    walk_entries,
)

pytestmark = pytest.mark.spark

A0, A1, B0 = TopicPartition("a", 0, 0), TopicPartition("a", 1, 0), TopicPartition("b", 0, 0)


def test_offsets_json_round_trip_is_sorted_and_uses_zookeeper_partition_names():
    offsets = {B0: 7, A1: 0, A0: 123456789012}
    text = offsets_to_json(offsets)
    assert text == '{"a":{"0-0":123456789012,"1-0":0},"b":{"0-0":7}}'
    assert offsets_from_json(text) == offsets
    assert offsets_from_json({"a": {"0-0": -2, "1-0": -1}}) == {A0: EARLIEST, A1: LATEST}


@pytest.mark.parametrize(
    "text, error",
    [
        ("[1]", "JSON object of topics"),
        ('{"a": 3}', "must be an object"),
        ('{"a": {"0": 3}}', "<brokerId>-<partId>"),
        ('{"a": {"0-x": 3}}', "<brokerId>-<partId>"),
        ('{"a": {"0-0": "3"}}', "must be an integer"),
        ('{"a": {"0-0": true}}', "must be an integer"),
        ('{"a": {"0-0": -3}}', "is not -2"),
    ],
)
def test_bad_offsets_json_is_rejected_with_the_reason(text, error):
    with pytest.raises(ValueError, match=error):
        offsets_from_json(text)


def test_special_offsets_are_refused_where_only_byte_offsets_make_sense():
    with pytest.raises(ValueError, match="is not a byte offset"):
        offsets_from_json('{"a": {"0-0": -1}}', allow_special=False)


def test_ranges_are_split_only_when_fewer_than_min_partitions_and_in_proportion():
    assert split_counts([100, 100], None) == [1, 1]
    assert split_counts([100, 100, 100], 3) == [1, 1, 1]
    assert split_counts([900, 100], 10) == [9, 1]
    assert split_counts([1000, 10, 10], 4) == [4, 1, 1]
    assert split_counts([0, 0], 8) == [1, 1]
    assert sum(split_counts([333, 333, 334], 7)) >= 7


def test_cut_targets_and_cut_range_keep_only_inner_distinct_cuts():
    assert cut_targets(100, 200, 4) == [125, 150, 175]
    assert cut_targets(100, 101, 4) == []
    assert cut_targets(0, 10, 1) == []
    rng = OffsetRange("a", 0, 0, 100, 200)
    pieces = cut_range(rng, [150, 100, 120, 120, 250])
    assert [(p.start, p.end) for p in pieces] == [(100, 120), (120, 150), (150, 200)]
    assert cut_range(rng, []) == [rng]


def test_cap_targets_share_the_budget_by_backlog_and_give_every_backlog_a_byte():
    backlogs = {A0: (0, 1000), A1: (500, 800), B0: (40, 40)}
    assert cap_targets(backlogs, 10_000) == {A0: 1000, A1: 800, B0: 40}
    capped = cap_targets(backlogs, 650)
    assert capped == {A0: 500, A1: 650, B0: 40}
    tiny = cap_targets({A0: (0, 10_000), A1: (0, 10)}, 50)
    assert tiny[A1] == 1 and tiny[A0] == 49


def test_walk_entries_stops_at_the_last_whole_entry_before_the_target():
    data = build_message_set([b"x" * 10, b"y" * 20, b"z" * 5])  # entries of 20, 30 and 15 bytes
    assert walk_entries(data, 1000, 10_000) == 1065
    assert walk_entries(data, 1000, 1050) == 1050
    assert walk_entries(data, 1000, 1049) == 1020
    assert walk_entries(data, 1000, 1019) == 1000
    assert walk_entries(data[:40], 1000, 10_000) == 1020  # the second entry is cut off
    with pytest.raises(ValueError, match="invalid message size"):
        walk_entries(b"\xff\xff\xff\xff" + data, 0, 100)


def test_first_entry_size_needs_only_the_length_prefix():
    data = build_message_set([b"p" * 100])
    assert first_entry_size(data[:4]) == len(data) == 110
    assert first_entry_size(data[:3]) is None
    assert first_entry_size(b"\xff\xff\xff\xff") is None


def test_resolve_range_reports_each_kind_of_loss_and_clamps():
    assert resolve_range(A0, EARLIEST, LATEST, 100, 900) == (OffsetRange("a", 0, 0, 100, 900), [])
    assert resolve_range(A0, 300, 400, 100, 900) == (OffsetRange("a", 0, 0, 300, 400), [])

    rng, problems = resolve_range(A0, 50, 400, 100, 900)
    assert rng == OffsetRange("a", 0, 0, 100, 400)
    assert problems == ["a:0-0: offsets 50 to 100 were deleted by retention (the log now starts at 100)"]

    rng, problems = resolve_range(A0, 50, 80, 100, 900)
    assert rng.size == 0 and len(problems) == 1 and "offsets 50 to 80" in problems[0]

    rng, problems = resolve_range(A0, 300, 1000, 100, 900)
    assert rng == OffsetRange("a", 0, 0, 300, 900)
    assert "log ends at offset 900, before the wanted end 1000" in problems[0]

    rng, problems = resolve_range(A0, 950, LATEST, 0, 900)
    assert rng.size == 0 and "start offset 950 is past the end offset 900" in problems[0]


def test_0_8_offsets_use_spark_kafka_source_json_and_logical_ranges():
    t0, t1 = TopicPartition08("t", 0), TopicPartition08("t", 1)
    text = offsets_to_json({t1: 5, t0: 123456789012})
    assert text == '{"t":{"0":123456789012,"1":5}}'
    assert offsets_from_json(text, kind=TopicPartition08) == {t0: 123456789012, t1: 5}
    assert str(t1) == "t-1" and t1.name == "1"
    with pytest.raises(ValueError, match="is not -2 \\(earliest\\), -1 \\(latest\\) or an? offset"):
        offsets_from_json('{"t": {"0": -3}}', kind=TopicPartition08)
    with pytest.raises(ValueError, match="<partition>: offset"):
        offsets_from_json('{"t": 3}', kind=TopicPartition08)
    assert partitions_from_json('{"t": [1, 0, 1]}', TopicPartition08) == [t0, t1]

    rng = OffsetRange08("t", 0, 10, 20)
    assert [(p.start, p.end) for p in cut_range(rng, cut_targets(10, 20, 3))] == [
        (10, 13),
        (13, 17),
        (17, 20),
    ]
    assert all(isinstance(p, OffsetRange08) and p.key == t0 for p in cut_range(rng, [15]))
    resolved, problems = resolve_range(t0, EARLIEST, 30, 5, 25)
    assert resolved == OffsetRange08("t", 0, 5, 25) and problems == [
        "t-0: the log ends at offset 25, before the wanted end 30 (the broker lost data, or its log was replaced)"
    ]

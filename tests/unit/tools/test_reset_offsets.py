"""consumer-groups --reset-offsets planned as Kafka 3.4's tool plans it (pure)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from zkafka.tools.reset_offsets import (
    LogRange,
    ResetError,
    Scenario,
    export_csv,
    format_plan,
    parse_datetime,
    parse_duration,
    parse_topic_partitions,
    plan,
)

T0, T1, T2 = ("t", 0), ("t", 1), ("t", 2)
LOGS = {T0: LogRange(10, 100), T1: LogRange(0, 50)}  # t-2 has no leader
COMMITTED = {T0: 40}


@pytest.mark.parametrize(
    ("scenario", "expected"),
    [
        (Scenario("earliest"), {T0: 10, T1: 0}),
        (Scenario("latest"), {T0: 100, T1: 50}),
        (Scenario("current"), {T0: 40, T1: 50}),  # no committed offset: the log end
        (Scenario("offset", 30), {T0: 30, T1: 30}),
        (Scenario("offset", 5), {T0: 10, T1: 5}),  # below the log start: the start
        (Scenario("datetime", 123), {T0: 77, T1: 50}),  # nothing that late: the log end
    ],
)
def test_each_scenario(scenario, expected):
    offsets, warnings = plan(scenario, [T0, T1, T2], COMMITTED, LOGS, {T0: 77})
    assert offsets == expected
    assert warnings[-1] == "Warn: Partition t-2 has no leader; it is not reset."


def test_shift_by_moves_the_committed_offset_within_the_log_and_warns_when_clamped():
    offsets, warnings = plan(Scenario("shift", 100), [T0], COMMITTED, LOGS)
    assert offsets == {T0: 100}
    assert warnings == ["New offset (140) is higher than latest offset for topic partition t-0. Value will be set to 100"]
    assert plan(Scenario("shift", -35), [T0], COMMITTED, LOGS)[0] == {T0: 10}
    with pytest.raises(ResetError, match="Cannot shift offset for partition t-1 since there is no current committed"):
        plan(Scenario("shift", 1), [T1], COMMITTED, LOGS)


def test_the_plan_and_its_csv():
    assert format_plan("g", {T1: 5, T0: 7})[1:] == [
        "GROUP                          TOPIC                          PARTITION  NEW-OFFSET     ",
        "g                              t                              0          7              ",
        "g                              t                              1          5              ",
    ]
    assert export_csv({T1: 5, T0: 7}) == ["t,0,7", "t,1,5"]


def test_topics_times_and_durations_parse_as_kafkas_tool_reads_them():
    assert parse_topic_partitions("t") == ("t", None)
    assert parse_topic_partitions("t:2,0,2") == ("t", [0, 2])
    for bad in ("t:", ":1", "t:x"):
        with pytest.raises(ResetError, match="--topic"):
            parse_topic_partitions(bad)
    assert parse_datetime("2020-01-02T03:04:05.678Z") == int(
        datetime(2020, 1, 2, 3, 4, 5, 678000, tzinfo=UTC).timestamp() * 1000
    )
    assert parse_datetime("2020-01-02T03:04:05.678+01:00") == parse_datetime("2020-01-02T02:04:05.678Z")
    assert parse_datetime("2020-01-02T03:04:05.678") == int(datetime(2020, 1, 2, 3, 4, 5, 678000).timestamp() * 1000)
    assert parse_duration("PT1H30M") == 5_400_000
    assert parse_duration("P1DT2.5S") == 86_402_500
    for bad in ("1H", "P", "PT", "PTXS"):
        with pytest.raises(ResetError, match="--by-duration"):
            parse_duration(bad)
    with pytest.raises(ResetError, match="--to-datetime"):
        parse_datetime("yesterday")

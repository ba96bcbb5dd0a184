"""``zkafka.explain``: the steps shown match the real assignors' results, and the what-ifs name exactly the
partitions that change hands."""

import json

import pytest
from click.testing import CliRunner

from zkafka.assignment import range_assignor, roundrobin_assignor
from zkafka.cli import main
from zkafka.consumer.group import assignors
from zkafka.explain import (
    Move,
    diff_owners,
    explain_assignment,
    explain_zk_rebalance,
    members_from_streams,
    parse_counted,
    parse_partitions,
    share_text,
    zk_assign,
)


def test_range_steps_sort_partitions_as_strings_and_slice_them_per_thread():
    members = members_from_streams({"c1": 1, "c2": 2}, ["orders"])
    explanation = explain_zk_rebalance(members, {"orders": parse_partitions("0:2,1:3,1-10")})
    titles = [step.title for step in explanation.steps]
    assert "topic orders: sort its partitions" in titles[1]
    assert explanation.steps[1].lines == ["0-0, 0-1, 1-0, 1-1, 1-10, 1-2"]  # "1-10" before "1-2"
    assert explanation.steps[1].where == "zkafka.assignment.range_assignor.sort_partitions"
    assert explanation.steps[2].lines == ["c1-0, c2-0, c2-1"]
    assert explanation.steps[3].where == "zkafka.assignment.range_assignor.range_share"
    assert explanation.steps[3].lines == [
        "c1-0: [0, 2) -> 0-0, 0-1",
        "c2-0: [2, 4) -> 1-0, 1-1",
        "c2-1: [4, 6) -> 1-10, 1-2",
    ]
    assert explanation.steps[-1].where == "zkafka.consumer.rebalancer.ZKRebalancer._release_and_claim"
    # the owners shown are the ones the consumers compute
    computed = range_assignor.assign(
        {"orders": ["c1-0", "c2-0", "c2-1"]}, {"orders": parse_partitions("0:2,1:3,1-10")}
    )
    assert explanation.owners == {f"{t}:{p}": tid for (t, p), tid in computed.items()}


def test_zk_what_ifs_list_the_partitions_that_move():
    members = members_from_streams({"a": 1, "b": 1}, ["t"])
    explanation = explain_zk_rebalance(members, {"t": ["0-0", "0-1", "0-2"]}, joining="c")
    # a: 0-0, 0-1; b: 0-2
    assert explanation.what_if["a left"] == [Move("t", "0-0", "a", "b"), Move("t", "0-1", "a", "b")]
    assert explanation.what_if["b left"] == [Move("t", "0-2", "b", "a")]
    # a, b, c get one each: 0-1 goes from a to b, 0-2 from b to c
    assert explanation.what_if["c joined"] == [Move("t", "0-1", "a", "b"), Move("t", "0-2", "b", "c")]
    assert "if a left: 2 partitions move" in explanation.render()


def test_more_threads_than_partitions_leaves_threads_without_any():
    members = members_from_streams({"a": 2, "b": 1}, ["t"])
    explanation = explain_zk_rebalance(members, {"t": ["0-0"]})
    assert explanation.steps[3].lines[1:] == [
        "a-1: [1, 1) -> (nothing: more threads than partitions)",
        "b-0: [1, 1) -> (nothing: more threads than partitions)",
    ]


def test_roundrobin_for_the_08_zk_consumer_deals_by_java_hash():
    members = members_from_streams({"c1": 1, "c2": 1}, ["orders", "x"])
    partitions = {"orders": [0, 1, 2], "x": [0, 1]}
    explanation = explain_zk_rebalance(members, partitions, strategy="roundrobin")
    assert explanation.steps[2].where == "zkafka.assignment.roundrobin_assignor.roundrobin_assign"
    expected = roundrobin_assignor.roundrobin_assign({"orders": ["c1-0", "c2-0"], "x": ["c1-0", "c2-0"]}, partitions)
    assert explanation.owners == {f"{t}:{p}": tid for (t, p), tid in expected.items()}
    assert zk_assign(members, partitions, "roundrobin") == expected


@pytest.mark.parametrize("strategy", ["range", "roundrobin", "sticky"])
def test_coordinator_explanation_matches_the_assignor(strategy):
    counts = {"a": 3, "b": 2}
    subs = {"m1": ["a", "b"], "m2": ["a"], "m3": ["a", "b"]}
    explanation = explain_assignment(strategy, counts, subs, joining="m4")
    real = assignors.get_assignor(strategy).assign(
        counts, {m: assignors.Subscription(ts) for m, ts in subs.items()}
    )
    assert explanation.owners == {f"{t}:{p}": m for (t, p), m in assignors.owners(real).items()}
    assert set(explanation.what_if) == {"m1 left", "m2 left", "m3 left", "m4 joined"}
    assert explanation.steps[-1].where == "zkafka.consumer.group.assignors.assign_group"


def test_coordinator_range_step_names_each_members_range():
    explanation = explain_assignment("range", {"t": 5}, {"m2": ["t"], "m1": ["t"]})
    step = explanation.steps[1]
    assert (
        step.title
        == "topic t, members sorted by id: 5 partitions / 2 members = 2 each, the first 1 get one more"
    )
    assert step.where == "zkafka.consumer.group.assignors.RangeAssignor.assign"
    assert step.lines == ["m1: 0, 1, 2", "m2: 3, 4"]
    assert explanation.what_if["m1 left"] == [Move("t", str(p), "m1", "m2") for p in range(3)]


def test_diff_owners_reports_partitions_appearing_and_vanishing():
    before = {("t", 0): "a", ("t", 1): "b"}
    after = {("t", 1): "a", ("t", 2): "b"}
    assert diff_owners(before, after) == [
        Move("t", "0", "a", None),
        Move("t", "1", "b", "a"),
        Move("t", "2", None, "b"),
    ]


def test_share_text():
    assert share_text(5, 2, "threads") == "5 partitions / 2 threads = 2 each, the first 1 get one more"
    assert share_text(4, 2, "members") == "4 partitions / 2 members = 2 each"
    assert share_text(4, 0, "threads") == "4 partitions, no threads"


def test_parse_partitions_and_counted():
    assert parse_partitions("0:2, 1-5") == ["0-0", "0-1", "1-5"]
    assert parse_partitions("2,0,1") == [2, 0, 1]
    with pytest.raises(ValueError, match="mixes"):
        parse_partitions("0,1-1")
    with pytest.raises(ValueError):
        parse_partitions("1-2-3")
    assert parse_counted("c1") == ("c1", 1)
    assert parse_counted("c1:3") == ("c1", 3)
    with pytest.raises(ValueError, match="NAME or NAME:COUNT"):
        parse_counted("c1:x")


def test_cli_explain_rebalance_and_assignment():
    runner = CliRunner()
    result = runner.invoke(
        main, ["explain", "rebalance", "--partitions", "0:2,1:2", "--consumer", "a", "--consumer", "b:2"]
    )
    assert result.exit_code == 0, result.output
    assert "0-0, 0-1, 1-0, 1-1" in result.output
    assert "a-0: [0, 2) -> 0-0, 0-1" in result.output
    assert "if new-consumer joined: 2 partitions move" in result.output
    result = runner.invoke(
        main,
        [
            "explain",
            "assignment",
            "--strategy",
            "roundrobin",
            "--topic",
            "t:3",
            "--member",
            "m1",
            "--member",
            "m2",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    value = json.loads(result.output)
    assert value["owners"] == {"t:0": "m1", "t:1": "m2", "t:2": "m1"}
    result = runner.invoke(main, ["explain", "assignment", "--topic", "t:3", "--member", "m1=nope"])
    assert result.exit_code == 2 and "nope" in result.output
    result = runner.invoke(main, ["explain", "rebalance", "--consumer", "a"])
    assert result.exit_code == 2 and "--partitions" in result.output

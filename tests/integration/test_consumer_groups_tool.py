"""The coordinator-group tools against a real ZooKeeper, a real 0.8 broker with a group coordinator and
zkafka GroupConsumer members: ``consumer-groups --list/--describe`` (members, assignment, committed offsets,
log ends and lags that match what was produced and committed), ``offset-checker --bootstrap-server`` and
``console-consumer --bootstrap-server`` (reads everything and commits what it printed)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

pytest.importorskip("kafka")

from click.testing import CliRunner  # noqa: E402

from tests.integration.test_coordinator_kafka_python import TOPIC, produce, start_with_topic  # noqa: E402
from tests.integration.test_group_consumer import consumer, poll_until  # noqa: E402
from zkafka.cli import main  # noqa: E402
from zkafka.consumer.group import TopicPartition  # noqa: E402

pytestmark = pytest.mark.integration

GROUP = "zgroup"  # test_group_consumer's members


@pytest.fixture
def bootstrap(start_broker08):
    return f"127.0.0.1:{start_with_topic(start_broker08).port}"


def cli(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, (result.output, result.exception)
    return result.output


def test_list_and_describe_show_members_assignments_and_lags(bootstrap):
    a, b = consumer(bootstrap, client_id="member-a"), consumer(bootstrap, client_id="member-b")
    a.subscribe([TOPIC])
    b.subscribe([TOPIC])
    try:
        poll_until([a, b], lambda r: len(a.assignment()) == len(b.assignment()) == 2)
        sent = produce(bootstrap, 120)
        received = poll_until([a, b], lambda r: sum(map(len, r)) >= len(sent))
        ends = Counter(p for got in received for p, _, _ in got)  # every partition starts at offset 0
        a.commit()  # a: everything read, lag 0
        b.commit({tp: 1 for tp in b.assignment()})  # b: lag = log end - 1
        committed = {tp.partition: ends[tp.partition] for tp in a.assignment()}
        committed |= {tp.partition: 1 for tp in b.assignment()}

        assert GROUP in cli("consumer-groups", "--bootstrap-server", bootstrap, "--list").split()
        assert GROUP in json.loads(
            cli("consumer-groups", "--bootstrap-server", bootstrap, "--list", "--json")
        )
        described = json.loads(
            cli("consumer-groups", "--bootstrap-server", bootstrap, "--describe", "--group", GROUP, "--json")
        )
        assert (described["state"], described["protocol"], described["coordinator"]) == ("Stable", "range", 0)
        assert described["generation"] >= 1
        members = {m["client_id"]: m for m in described["members"]}
        assert sorted(members) == ["member-a", "member-b"]
        for name, c in (("member-a", a), ("member-b", b)):
            assert members[name]["assignment"] == {TOPIC: sorted(tp.partition for tp in c.assignment())}
            assert members[name]["client_host"].endswith("127.0.0.1")
        rows = {r["partition"]: r for r in described["partitions"] if r["topic"] == TOPIC}
        assert sorted(rows) == [0, 1, 2, 3]
        for p, row in rows.items():
            assert (row["offset"], row["log_end"], row["lag"]) == (
                committed[p],
                ends[p],
                ends[p] - committed[p],
            )
            owner = "member-a" if TopicPartition(TOPIC, p) in a.assignment() else "member-b"
            assert row["owner"] == f"{owner}_{members[owner]['client_host']}"  # 0.9's clientId_clientHost

        text = cli("consumer-groups", "--bootstrap-server", bootstrap, "--describe", "--group", GROUP)
        assert text.splitlines()[1].split()[:3] == ["GROUP", "TOPIC", "PARTITION"]

        lines = cli("offset-checker", "--bootstrap-server", bootstrap, "--group", GROUP).splitlines()
        assert lines[0].split() == ["Group", "Topic", "Pid", "Offset", "logSize", "Lag", "Owner"]
        table = {int(f[2]): f for f in (line.split() for line in lines[1:])}
        for p in range(4):
            assert table[p][:6] == [
                GROUP,
                TOPIC,
                str(p),
                str(committed[p]),
                str(ends[p]),
                str(ends[p] - committed[p]),
            ]
    finally:
        a.close()
        b.close()


def test_describe_of_an_unknown_group_is_a_one_line_error(bootstrap):
    result = CliRunner().invoke(
        main, ["consumer-groups", "--bootstrap-server", bootstrap, "--describe", "--group", "nobody"]
    )
    assert result.exit_code == 1
    assert result.output.strip() == "zkafka: error: Consumer group 'nobody' does not exist."


def test_console_consumer_with_bootstrap_server_reads_everything_and_commits(bootstrap):
    sent = produce(bootstrap, 80)
    output = cli(
        "console-consumer",
        "--bootstrap-server",
        bootstrap,
        "--topic",
        TOPIC,
        "--group",
        "console",
        "--from-beginning",
        "--max-messages",
        str(len(sent)),
    )
    assert sorted(line.encode() for line in output.splitlines() if line.startswith("m-")) == sorted(sent)
    described = json.loads(
        cli(
            "consumer-groups",
            "--bootstrap-server",
            bootstrap,
            "--describe",
            "--group",
            "console",
            "--topic",
            TOPIC,
            "--json",
        )
    )
    assert (described["state"], described["members"]) == ("Empty", [])  # no members left; offsets stay
    rows = [r for r in described["partitions"] if r["topic"] == TOPIC]
    assert len(rows) == 4 and sum(r["log_end"] for r in rows) == len(sent)
    assert all(r["offset"] == r["log_end"] and r["lag"] == 0 for r in rows)


def test_perf_consume_with_bootstrap_server_counts_every_message(bootstrap):
    sent = produce(bootstrap, 150)
    output = cli(
        "perf", "consume", "--bootstrap-server", bootstrap, "--topic", TOPIC, "--messages", "150", "--json"
    )
    result = json.loads(output.strip().splitlines()[-1])
    assert result["total_messages"] == len(sent) and result["threads"] == 1
    assert result["total_bytes"] == sum(len(v) for v in sent)

"""``zkafka consumer-groups`` as kafka-consumer-groups.sh, against a real 0.8 broker with a group coordinator
and a kafka-python consumer (unpinned, with group.instance.id) as the group's member: --list (--state),
--describe (offsets, --members --verbose, --state), --reset-offsets (refused while the group is active,
--dry-run changes nothing, --execute commits what a restarted consumer then reads from, --export), --delete
(refused while not empty), --delete-offsets; errors are one line and exit status 1."""

from __future__ import annotations

import pytest

pytest.importorskip("kafka")

from datetime import datetime  # noqa: E402

from click.testing import CliRunner  # noqa: E402
from kafka import KafkaConsumer  # noqa: E402

from tests.integration.test_coordinator_kafka_python import TOPIC, produce, start_with_topic  # noqa: E402
from zkafka.cli import main  # noqa: E402
from zkafka.utils import now_ms, wait_until  # noqa: E402

pytestmark = pytest.mark.integration

GROUP = "tools"


@pytest.fixture
def bootstrap(start_broker08):
    return f"127.0.0.1:{start_with_topic(start_broker08).port}"


def run(*args: str, code: int = 0) -> str:
    """What the command printed: stdout when it succeeds, stdout and stderr when it fails."""
    result = CliRunner().invoke(main, ["consumer-groups", *args])
    assert result.exit_code == code, (result.output, result.exception)
    return result.stdout if code == 0 else result.output


def member(bootstrap: str, **config) -> KafkaConsumer:
    consumer = KafkaConsumer(
        TOPIC, bootstrap_servers=bootstrap, group_id=GROUP, client_id="tool-test", auto_offset_reset="earliest",
        enable_auto_commit=False, session_timeout_ms=10000, heartbeat_interval_ms=500, consumer_timeout_ms=200,
        **config,
    )  # fmt: skip
    return consumer


def consume(consumer: KafkaConsumer, count: int) -> list:
    got: list = []
    wait_until(lambda: got.extend(consumer.poll(200).values()) or sum(map(len, got)) >= count, 60,
               message=f"{count} records")  # fmt: skip
    return [r for batch in got for r in batch]


def table(output: str, header: str) -> list[list[str]]:
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:1] == [header])
    return [line.split() for line in lines[start + 1 :] if line.strip()]


def test_every_option_against_a_real_group(bootstrap):
    produce(bootstrap, 40)
    consumer = member(bootstrap, group_instance_id="static-1")
    try:
        records = consume(consumer, 40)
        consumer.commit()
        ends = {p: 1 + max(r.offset for r in records if r.partition == p) for p in range(4)}
        wait_until(lambda: "Stable" in run("--bootstrap-server", bootstrap, "--list", "--state"), 10)
        assert GROUP in run("--bootstrap-server", bootstrap, "--list").split()
        listed = run("--bootstrap-server", bootstrap, "--list", "--state", "Stable,Empty")
        assert ["GROUP", "STATE"] == listed.splitlines()[0].split() and [GROUP, "Stable"] in table(listed, "GROUP")
        assert run("--bootstrap-server", bootstrap, "--list", "--state", "dead").split() == ["GROUP", "STATE"]
        assert "Invalid state list 'Sleeping'" in run("--bootstrap-server", bootstrap, "--list", "--state", "Sleeping", code=1)

        offsets = run("--bootstrap-server", bootstrap, "--describe", "--group", GROUP)
        rows = table(offsets, "GROUP")
        assert offsets.splitlines()[1].split() == [
            "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID",
        ]  # fmt: skip
        assert sorted((int(r[2]), int(r[3]), int(r[4]), int(r[5])) for r in rows) == [(p, e, e, 0) for p, e in ends.items()]
        assert {r[8] for r in rows} == {"tool-test"} and all(r[7].endswith("127.0.0.1") for r in rows)

        members = run("--bootstrap-server", bootstrap, "--describe", "--group", GROUP, "--members", "--verbose")
        header = members.splitlines()[1].split()
        assert header == ["GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "ASSIGNMENT"]
        (row,) = table(members, "GROUP")
        assert row[2] == "static-1" and row[5] == "4" and " ".join(row[6:]) == f"{TOPIC}(0,1,2,3)"

        state = table(run("--bootstrap-server", bootstrap, "--describe", "--group", GROUP, "--state"), "GROUP")
        assert state == [[GROUP, f"{bootstrap}", "(0)", "range", "Stable", "1"]]

        refused = run("--bootstrap-server", bootstrap, "--reset-offsets", "--group", GROUP, "--topic", TOPIC,
                      "--to-earliest", "--execute", code=1)  # fmt: skip
        assert refused.strip() == (f"zkafka: error: Assignments can only be reset if the group '{GROUP}' is "
                                   "inactive, but the current state is Stable.")  # fmt: skip
        deleted = run("--bootstrap-server", bootstrap, "--delete", "--group", GROUP, code=1)
        assert f"* Group '{GROUP}' could not be deleted due to: " in deleted and "GroupNotEmptyException" in deleted
    finally:
        consumer.close()  # a static member sends no LeaveGroup: the coordinator removes it after its session

    wait_until(lambda: "Empty" in run("--bootstrap-server", bootstrap, "--describe", "--group", GROUP, "--state"), 30)
    reset = ["--bootstrap-server", bootstrap, "--reset-offsets", "--group", GROUP]
    planned = table(run(*reset, "--topic", f"{TOPIC}:0,1", "--shift-by", "-3", "--dry-run"), "GROUP")
    assert planned == [[GROUP, TOPIC, str(p), str(ends[p] - 3)] for p in (0, 1)]
    assert table(run("--bootstrap-server", bootstrap, "--describe", "--group", GROUP), "GROUP")[0][3] == str(ends[0])

    assert run(*reset, "--all-topics", "--to-offset", "2", "--export").split() == [f"{TOPIC},{p},2" for p in range(4)]
    run(*reset, "--all-topics", "--to-offset", "2", "--execute")
    restarted = member(bootstrap)
    try:
        again = consume(restarted, sum(ends.values()) - 8)
        assert {p: min(r.offset for r in again if r.partition == p) for p in range(4)} == dict.fromkeys(range(4), 2)
    finally:
        restarted.close()
    assert [r[3] for r in table(run(*reset, "--all-topics", "--to-current"), "GROUP")] == ["2"] * 4
    assert [r[3] for r in table(run(*reset, "--topic", TOPIC, "--to-earliest", "--dry-run"), "GROUP")] == ["0"] * 4
    assert [r[3] for r in table(run(*reset, "--topic", f"{TOPIC}:1", "--to-offset", "0"), "GROUP")] == ["0"]
    assert table(run(*reset, "--topic", TOPIC, "--to-latest", "--execute"), "GROUP")[0][3] == str(ends[0])

    removed = run("--bootstrap-server", bootstrap, "--delete-offsets", "--group", GROUP, "--topic", f"{TOPIC}:3")
    assert removed.splitlines()[0] == f"Request succeed for deleting offsets with topic {TOPIC} group {GROUP}"
    assert table(removed, "TOPIC") == [[TOPIC, "3", "Successful"]]
    assert run("--bootstrap-server", bootstrap, "--delete", "--group", GROUP).strip() == (
        f"Deletion of requested consumer groups ('{GROUP}') was successful."
    )
    missing = run("--bootstrap-server", bootstrap, "--describe", "--group", GROUP, code=1)
    assert missing.strip() == f"zkafka: error: Consumer group '{GROUP}' does not exist."


def test_errors_are_one_line(bootstrap):
    port = bootstrap.rsplit(":", 1)[1]
    assert run("--bootstrap-server", "127.0.0.1:1", "--list", code=1).startswith(
        "zkafka: error: cannot reach the broker 127.0.0.1:1: "
    )
    by_time = run("--bootstrap-server", bootstrap, "--reset-offsets", "--group", "idle", "--topic", TOPIC,
                   "--to-datetime", "2020-01-01T00:00:00.000", code=1)  # fmt: skip
    assert len(by_time.strip().splitlines()) == 1 and port in by_time  # a magic-0 log has no timestamps
    assert "UNSUPPORTED_FOR_MESSAGE_FORMAT (the topic's messages have no timestamps" in by_time
    assert "--by-duration 'bad'" in run("--bootstrap-server", bootstrap, "--reset-offsets", "--group", "g",
                                        "--topic", TOPIC, "--by-duration", "bad", code=1)  # fmt: skip


def test_to_datetime_and_by_duration_find_offsets_by_time(start_broker08):
    """A log that keeps timestamps (message format 2.1, stamped at append): ListOffsets v1 finds the first
    offset at or after the time."""
    broker = start_with_topic(
        start_broker08, **{"log.message.format.version": "2.1", "log.message.timestamp.type": "LogAppendTime"}
    )
    bootstrap = f"127.0.0.1:{broker.port}"
    produce(bootstrap, 20)
    reset = ["--bootstrap-server", bootstrap, "--reset-offsets", "--group", "by-time", "--topic", TOPIC]
    first_round_ends = table(run(*reset, "--to-latest"), "GROUP")
    between = now_ms() + 1
    wait_until(lambda: now_ms() > between, 5)
    produce(bootstrap, 20, start=20)
    moment = datetime.fromtimestamp(between / 1000).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]  # local time
    assert table(run(*reset, "--to-datetime", moment), "GROUP") == first_round_ends
    assert [r[3] for r in table(run(*reset, "--by-duration", "PT1H"), "GROUP")] == ["0"] * 4


"""Bad input at the command line, as a new user meets it: each command ends with ONE line saying what failed
(exit status 1; click's usage errors keep status 2), the traceback only with --verbose, and a tool that could
not deliver everything it read says how many messages were lost.

Real commands in child processes, a real ZooKeeper and broker; "unreachable" is a closed local port.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from zkafka.launch.zookeeper_server import free_port

pytestmark = pytest.mark.integration

BAD_TOPIC_LINE = (
    "zkafka: error: InvalidTopicError: topic name '../evil' contains the character U+002F at index 2;"
    " '/' and control, private-use and surrogate characters are not allowed"
)


def zkafka(*args: str, stdin: str = "", timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "zkafka.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def closed_port() -> int:
    return free_port()  # bound and released: nothing listens there


def assert_one_line(result: subprocess.CompletedProcess, line: str, status: int = 1) -> None:
    assert result.returncode == status, result.stderr
    assert result.stderr.splitlines() == [line]


# -- a topic no broker could hold: refused before anything is sent ----------------------------------------


def test_console_producer_refuses_a_bad_topic_before_connecting(
    start_broker, zk_connect, zk_client, tmp_path
):
    start_broker(0)
    result = zkafka("console-producer", "--zookeeper", zk_connect, "--topic", "../evil", stdin="x\n")
    assert_one_line(result, BAD_TOPIC_LINE)
    assert zk_client.get_children("/brokers/topics") == []
    assert [p.name for p in (tmp_path / "broker-0").iterdir() if p.is_dir()] == []


@pytest.mark.parametrize(
    "command",
    [
        ["perf", "produce", "--messages", "1", "--topic", "../evil"],
        ["perf", "consume", "--messages", "1", "--topic", "../evil"],
        ["console-consumer", "--topic", "../evil"],
        ["offset-checker", "--group", "g", "--topic", "t,../evil"],
        ["update-offsets", "--group", "g", "--latest", "--topic", "../evil"],
    ],
    ids=lambda command: " ".join(command[:2]),
)
def test_every_topic_option_refuses_a_bad_topic_in_one_line(command):
    assert_one_line(zkafka(*command, "--zookeeper", f"127.0.0.1:{closed_port()}"), BAD_TOPIC_LINE)


# -- an unreachable ZooKeeper -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        # the consumers work out the cluster's line in a session with the consumer's ZooKeeper timeouts
        ["console-consumer", "--consumer-property", "zookeeper.connection.timeout.ms=500"],
        ["perf", "consume", "--messages", "1", "--consumer-property", "zookeeper.connection.timeout.ms=500"],
        ["console-producer", "--producer-property", "zk.connectiontimeout.ms=500"],
        ["perf", "produce", "--messages", "1", "--producer-property", "zk.connectiontimeout.ms=500"],
        [
            "perf",
            "consume",
            "--line",
            "0.7",
            "--messages",
            "1",
            "--consumer-property",
            "zk.connectiontimeout.ms=500",
        ],
    ],
    ids=lambda command: f"{command[0]} {command[1]} {command[-1].split('=')[0]}",
)
@pytest.mark.parametrize("given", ["property", "config-file"])
def test_clients_name_an_unreachable_zookeeper_in_one_line(command, given, tmp_path):
    if given == "config-file":  # the same property from --producer.config / --consumer.config
        option, setting = command[-2:]
        (tmp_path / "client.properties").write_text(f"{setting}\n")
        command = [*command[:-2], option.replace("-property", ".config"), str(tmp_path / "client.properties")]
    nowhere = f"127.0.0.1:{closed_port()}/chroot"
    result = zkafka(*command, "--topic", "t", "--zookeeper", nowhere, stdin="x\n")
    assert_one_line(
        result,
        f"zkafka: error: ZooKeeperUnreachableError: cannot connect to ZooKeeper at {nowhere} within 0.5s",
    )


def test_verbose_adds_the_traceback_before_the_same_line():
    nowhere = f"127.0.0.1:{closed_port()}"
    result = zkafka(
        "--verbose", "console-producer", "--zookeeper", nowhere, "--topic", "t",
        "--producer-property", "zk.connectiontimeout.ms=500", stdin="x\n",
    )  # fmt: skip
    assert result.returncode == 1
    assert "Traceback (most recent call last):" in result.stderr
    assert result.stderr.splitlines()[-1] == (
        f"zkafka: error: ZooKeeperUnreachableError: cannot connect to ZooKeeper at {nowhere} within 0.5s"
    )


# -- an unreachable broker: what was read and not delivered is counted --------------------------------------


def test_console_producer_0_7_async_counts_the_dropped_batch():
    port = closed_port()
    result = zkafka(
        "console-producer", "--broker-list", f"0:127.0.0.1:{port}", "--topic", "t",
        "--producer-property", "connect.timeout.ms=300", stdin="a\nb\n",
    )  # fmt: skip
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines[-1] == "zkafka: error: 2 of 2 messages were not delivered"
    assert f"dropping a batch of 2 events: SyncProducer(127.0.0.1:{port})" in result.stderr
    assert "Traceback" not in result.stderr


def test_console_producer_0_7_sync_stops_at_the_first_failure_in_one_line():
    port = closed_port()
    result = zkafka(
        "console-producer", "--sync", "--broker-list", f"0:127.0.0.1:{port}", "--topic", "t",
        "--producer-property", "connect.timeout.ms=300", stdin="a\nb\n",
    )  # fmt: skip
    assert_one_line(
        result,
        f"zkafka: error: 1 of 1 messages were not delivered: ProducerConnectionError: SyncProducer(127.0.0.1:{port}):"
        f" no connection within connect.timeout.ms=300: [Errno 111] Connection refused (connecting to"
        f" 127.0.0.1:{port})",
    )


def test_console_producer_0_8_counts_what_it_could_not_deliver_and_names_the_cause_in_one_line():
    nowhere = f"127.0.0.1:{closed_port()}"
    result = zkafka("console-producer", "--broker-list", nowhere, "--topic", "t", stdin="a\nb\nc\n")
    assert_one_line(
        result,
        "zkafka: error: 3 of 3 messages were not delivered: FailedToSendMessageError: 3 of 3 messages to t not"
        " delivered after 3 retries; the last error: fetching metadata for topics ['t'] from"
        f" [{nowhere}] failed: [Errno 111] Connection refused (connecting to {nowhere})",
    )


def test_console_consumer_names_unreachable_bootstrap_servers_in_one_line():
    nowhere = f"127.0.0.1:{closed_port()}"
    result = zkafka("console-consumer", "--bootstrap-server", nowhere, "--topic", "t")
    assert_one_line(
        result,
        f"zkafka: error: BrokerNotAvailableError: fetching metadata for topics ['t'] from [{nowhere}] failed:"
        f" [Errno 111] Connection refused (connecting to {nowhere})",
    )


def test_reassign_partitions_refuses_a_broker_that_does_not_exist(
    start_broker08, zk_connect, zk_client, tmp_path
):
    start_broker08(0)
    created = zkafka(
        "topics", "--create", "--zookeeper", zk_connect, "--topic", "mv", "--partitions", "1",
        "--replication-factor", "1",
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    moves = tmp_path / "moves.json"
    moves.write_text('{"version":1,"partitions":[{"topic":"mv","partition":0,"replicas":[0,7]}]}')
    result = zkafka(
        "reassign-partitions", "--zookeeper", zk_connect, "--reassignment-json-file", str(moves), "--execute"
    )
    assert_one_line(
        result,
        "zkafka: error: AdminOperationError: The proposed assignment contains non-existent brokerIDs: 7",
    )
    assert not zk_client.exists("/admin/reassign_partitions")


def test_offset_checker_says_a_group_has_no_offsets(zk_connect):
    result = zkafka("offset-checker", "--zookeeper", zk_connect, "--group", "nobody")
    assert_one_line(result, "zkafka: error: group nobody has no offsets: no /consumers/nobody in ZooKeeper")
    assert result.stdout == ""


def test_perf_produce_0_7_async_fails_when_its_batches_were_dropped():
    result = zkafka(
        "perf", "produce", "--async", "--messages", "10", "--topic", "t",
        "--broker-list", f"0:127.0.0.1:{closed_port()}", "--producer-property", "connect.timeout.ms=300",
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (
        "zkafka: error: FailedToSendMessageError: 10 of 10 messages were not delivered (see the errors logged)"
    )
    assert result.stdout == ""  # no result line as if they had been sent


def test_a_consumer_that_cannot_reach_the_registered_broker_names_it(zk_connect, zk_client):
    port = closed_port()
    zk_client.create("/brokers/ids/0", f"127.0.0.1-1:127.0.0.1:{port}".encode(), makepath=True)
    zk_client.create("/brokers/topics/t/0", b"1", makepath=True)
    result = zkafka(
        "console-consumer", "--zookeeper", zk_connect, "--topic", "t", "--from-beginning",
        "--consumer-timeout-ms", "500", "--consumer-property", "rebalance.retries.max=1",
    )  # fmt: skip
    assert result.returncode == 1
    last = result.stderr.splitlines()[-1]
    assert last.startswith("zkafka: error: ConsumerRebalanceFailedError: ")
    assert last.endswith(
        f"can't rebalance after 1 retries; the last attempt failed: [Errno 111] Connection refused"
        f" (connecting to 127.0.0.1:{port})"
    )


# -- files and option values ------------------------------------------------------------------------------


def test_a_missing_file_is_a_usage_error():
    result = zkafka("dump-log-segments", "/nonexistent/00000000000000000000.kafka")
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        "Error: Invalid value for '[PATHS]...': File '/nonexistent/00000000000000000000.kafka' does not exist."
    )


def test_a_properties_file_without_a_required_key_is_one_line(tmp_path):
    props = tmp_path / "server.properties"
    props.write_text("port=9092\n")
    assert_one_line(
        zkafka("broker", "start", str(props)),
        "zkafka: error: InvalidConfigError: brokerid: required broker key is missing",
    )


def test_a_bad_property_value_is_one_line():
    result = zkafka(
        "console-producer", "--broker-list", "0:127.0.0.1:1", "--topic", "t",
        "--producer-property", "queue.size=-5", stdin="x\n",
    )  # fmt: skip
    assert_one_line(
        result, "zkafka: error: InvalidConfigError: queue.size: -5 is not in the range [1, 2147483647]"
    )


# -- the sweep: every command meets an unreachable ZooKeeper, an unreachable broker, a server that is not Kafka --

ZK_COMMANDS = {  # "{zk}": the ZooKeeper; each gives up after 0.5 s
    "consumer-groups": ["consumer-groups", "--list"],
    "export-offsets": ["export-offsets", "--output-file", "-"],
    "import-offsets": ["import-offsets", "--input-file", "{offsets_file}"],
    "offset-checker": ["offset-checker", "--group", "g"],
    "preferred-replica-election": ["preferred-replica-election"],
    "reassign-partitions --generate": [
        "reassign-partitions", "--generate", "--topics-to-move-json-file", "{topics_file}", "--broker-list", "0",
    ],
    "reassign-partitions --verify": ["reassign-partitions", "--verify", "--reassignment-json-file", "{moves_file}"],
    "topics --list": ["topics", "--list"],
    "topics --create": ["topics", "--create", "--topic", "t", "--partitions", "1", "--replication-factor", "1"],
    "update-offsets": ["update-offsets", "--group", "g", "--latest", "--topic", "t"],
    "zk-tree": ["zk-tree"],
}  # fmt: skip

BROKER_COMMANDS = {  # "{broker}": the broker list
    "console-consumer": ["console-consumer", "--bootstrap-server", "{broker}", "--topic", "t"],
    "console-producer": ["console-producer", "--broker-list", "{broker}", "--topic", "t"],
    "consumer-groups --list": ["consumer-groups", "--bootstrap-server", "{broker}", "--list"],
    "consumer-groups --describe": ["consumer-groups", "--bootstrap-server", "{broker}", "--describe", "--group", "g"],
    "offset-checker": ["offset-checker", "--bootstrap-server", "{broker}", "--group", "g"],
    "get-offsets": ["get-offsets", "--bootstrap-server", "{broker}", "--topic", "t"],
    "perf produce": ["perf", "produce", "--broker-list", "{broker}", "--topic", "t", "--messages", "10"],
    "perf consume --bootstrap-server": ["perf", "consume", "--bootstrap-server", "{broker}", "--topic", "t"],
    "perf consume --broker-list": ["perf", "consume", "--broker-list", "{broker}", "--topic", "t"],
}  # fmt: skip


def assert_ends_in_one_line(args: list[str]) -> str:
    """The command ends (30 s: a hang detector, not a speed bound) with status 1 and one line; the line."""
    result = zkafka(*args, stdin="x\n", timeout=30)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("zkafka: error: "), result.stderr
    return lines[0]


@pytest.mark.parametrize("command", ZK_COMMANDS.values(), ids=ZK_COMMANDS.keys())
def test_sweep_an_unreachable_zookeeper(command, tmp_path):
    files = {"offsets_file": "/consumers/g/offsets/t/0-0:5\n", "topics_file": '{"topics":[{"topic":"t"}]}'}
    files["moves_file"] = '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[0]}]}'
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    nowhere = f"127.0.0.1:{closed_port()}"
    args = [a.format(**{n: tmp_path / n for n in files}) for a in command]
    line = assert_ends_in_one_line([*args, "--zookeeper", nowhere, "--connection-timeout-ms", "500"])
    assert (
        line
        == f"zkafka: error: ZooKeeperUnreachableError: cannot connect to ZooKeeper at {nowhere} within 0.5s"
    )


@pytest.mark.parametrize("command", BROKER_COMMANDS.values(), ids=BROKER_COMMANDS.keys())
def test_sweep_an_unreachable_broker(command):
    nowhere = f"127.0.0.1:{closed_port()}"
    line = assert_ends_in_one_line([a.format(broker=nowhere) for a in command])
    assert nowhere in line and "Connection refused" in line


@pytest.mark.parametrize("command", BROKER_COMMANDS.values(), ids=BROKER_COMMANDS.keys())
def test_sweep_a_zookeeper_port_given_as_a_broker(command, zookeeper_server):
    line = assert_ends_in_one_line([a.format(broker=zookeeper_server.connect_string) for a in command])
    assert zookeeper_server.connect_string in line or "closed" in line or "timed out" in line

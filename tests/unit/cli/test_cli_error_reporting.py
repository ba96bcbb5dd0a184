"""How the ``zkafka`` group reports what escapes a command: one line, exit status 1, the traceback only with
--verbose; click's own usage errors, exits and aborts pass through untouched."""

from __future__ import annotations

import click
import gevent
import pytest
from click.testing import CliRunner

from zkafka.cli import main as zkafka_main
from zkafka.cli.command import (
    ZkafkaGroup,
    checked_topic,
    checked_topic_lists,
    client_properties,
    describe,
    not_delivered,
)
from zkafka.errors import ZooKeeperUnreachableError


class _Undocumented(Exception):
    pass


class _Documented(Exception):
    """The broker said no,
    in two lines.

    More detail that is not part of the message."""


def make_group() -> click.Group:
    """A group of the same class as ``zkafka``, with commands that fail in each way."""

    @click.group(cls=ZkafkaGroup)
    @click.option("--verbose", is_flag=True)
    def cli(verbose: bool) -> None:
        from zkafka.cli.command import Context

        Context.verbose = verbose

    failures = {
        "kafka": lambda: ZooKeeperUnreachableError("cannot connect to ZooKeeper at h:1 within 0.5s"),
        "timeout": lambda: gevent.Timeout(0.1),  # a BaseException, as kazoo's gevent timeout is
        "multiline": lambda: ValueError("first\nsecond"),
        "empty": lambda: _Documented(),
        "bare": lambda: _Undocumented(),
        "usage": lambda: click.UsageError("give --x"),
        "exit": lambda: SystemExit(3),
    }
    for name, failure in failures.items():

        def command(failure=failure) -> None:
            raise failure()

        cli.command(name)(command)

    @cli.command("topic")
    @click.option("--topic", callback=checked_topic)
    @click.option("--topics", multiple=True, callback=checked_topic_lists)
    def topic(topic, topics) -> None:
        click.echo(f"ok {topic} {topics}")

    return cli


def invoke(*args: str):
    from zkafka.cli.command import Context

    try:
        return CliRunner().invoke(make_group(), list(args))
    finally:
        Context.verbose = False


@pytest.mark.parametrize(
    "command, line",
    [
        ("kafka", "zkafka: error: ZooKeeperUnreachableError: cannot connect to ZooKeeper at h:1 within 0.5s"),
        ("timeout", "zkafka: error: Timeout: 0.1 seconds"),
        ("multiline", "zkafka: error: ValueError: first second"),
        ("empty", "zkafka: error: _Documented: The broker said no, in two lines."),
        ("bare", "zkafka: error: _Undocumented"),
    ],
)
def test_an_error_is_one_line_and_status_1(command, line):
    result = invoke(command)
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [line]
    assert result.stdout == ""


def test_verbose_prints_the_traceback_before_the_line():
    result = invoke("--verbose", "kafka")
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[-1] == (
        "zkafka: error: ZooKeeperUnreachableError: cannot connect to ZooKeeper at h:1 within 0.5s"
    )


def test_click_usage_errors_and_exits_pass_through():
    usage = invoke("usage")
    assert usage.exit_code == 2 and "Error: give --x" in usage.stderr and "zkafka: error" not in usage.stderr
    assert invoke("exit").exit_code == 3


def test_a_topic_option_refuses_a_name_no_broker_could_hold_before_the_command_runs():
    result = invoke("topic", "--topic", "../evil")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "zkafka: error: InvalidTopicError: topic name '../evil' contains the character U+002F at index 2;"
        " '/' and control, private-use and surrogate characters are not allowed"
    ]
    listed = invoke("topic", "--topics", "a, b", "--topics", "c,,d/e")
    assert listed.exit_code == 1 and "topic name 'd/e'" in listed.stderr
    assert invoke("topic", "--topic", "ok.topic-1", "--topics", "a, b").stdout == "ok ok.topic-1 ('a, b',)\n"


def test_not_delivered_names_the_count_and_the_cause():
    assert str(not_delivered(2, 5)) == "2 of 5 messages were not delivered"
    cause = ConnectionRefusedError(111, "Connection refused (connecting to h:1)")
    assert describe(not_delivered(1, 1, cause)) == (
        "1 of 1 messages were not delivered: ConnectionRefusedError: [Errno 111] Connection refused"
        " (connecting to h:1)"
    )


def test_the_zkafka_group_is_the_reporting_group():
    assert isinstance(zkafka_main, ZkafkaGroup)


def test_client_properties_are_the_config_files_under_the_key_value_overrides(tmp_path):
    path = tmp_path / "producer.properties"
    path.write_text("# a comment\nacks = all\nclient.id=from-file\n")
    assert client_properties(str(path), ("client.id=given", "linger.ms=5")) == {
        "acks": "all",
        "client.id": "given",
        "linger.ms": "5",
    }
    assert client_properties(None, ("acks=1",)) == {"acks": "1"}


def test_an_option_typed_on_the_command_line_wins_over_the_client_properties_its_default_does_not(tmp_path):
    path = tmp_path / "producer.properties"
    path.write_text("request.required.acks=1\nbatch.num.messages=500\nclient.id=from-file\n")

    @click.command()
    @click.option("--request-required-acks", type=int, default=0)
    @click.option("--batch-size", type=int, default=200)
    @click.option("--producer-property", "properties", multiple=True)
    def tool(request_required_acks: int, batch_size: int, properties: tuple[str, ...]) -> None:
        options = {"request_required_acks": ("request.required.acks",), "batch_size": ("batch.num.messages",)}
        click.echo(sorted(client_properties(str(path), properties, options).items()))

    typed = CliRunner().invoke(tool, ["--request-required-acks", "-1", "--producer-property", "linger.ms=5"])
    assert typed.exit_code == 0, typed.output
    # the typed acks option wins (its key left to the option); --batch-size at its default yields to the file
    assert typed.output.strip() == str(
        [("batch.num.messages", "500"), ("client.id", "from-file"), ("linger.ms", "5")]
    )
    untyped = CliRunner().invoke(tool, [])
    assert "('request.required.acks', '1')" in untyped.output

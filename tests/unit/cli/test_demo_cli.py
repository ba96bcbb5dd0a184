"""The demo command's scripting inputs: ``--action SECONDS:ACTION`` and actions read from stdin."""

import os
import sys

import click
import pytest

from zkafka.cli.demo import _Lines, parse_action


def test_parse_action_reads_seconds_and_a_known_action():
    assert parse_action("5:stop-consumer") == (5.0, "stop-consumer")
    assert parse_action("0.5:pause-producer") == (0.5, "pause-producer")


@pytest.mark.parametrize("value", ["stop-consumer", "-1:stop-consumer", "x:stop-consumer", "5:explode"])
def test_parse_action_rejects_what_is_not_seconds_and_an_action(value):
    with pytest.raises(click.BadParameter):
        parse_action(value)


def test_stdin_lines_come_one_action_a_read_and_end_quietly(monkeypatch):
    read_end, write_end = os.pipe()
    monkeypatch.setattr(sys, "stdin", os.fdopen(read_end))
    lines = _Lines()
    assert lines.read(0.01) is None  # nothing written yet
    os.write(write_end, b"stop-consumer\n\npause-pro")
    assert lines.read(1) == "stop-consumer"
    assert lines.read(0.01) is None  # a partial line waits for its end
    os.write(write_end, b"ducer\nquit\n")
    assert [lines.read(1), lines.read(1)] == ["pause-producer", "quit"]
    os.close(write_end)
    assert lines.read(0.01) is None and lines.read(0.01) is None  # end of input: no more actions
    sys.stdin.close()

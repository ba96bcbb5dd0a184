"""`zkafka broker start` picks the line from the properties' keys."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration


def start(props_path):
    return subprocess.run(
        [sys.executable, "-m", "zkafka.cli", "broker", "start", str(props_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_file_mixing_both_lines_fails_in_one_line_naming_the_keys(tmp_path):
    props = tmp_path / "server.properties"
    props.write_text(f"brokerid=0\nzookeeper.connect=127.0.0.1:1\nlog.dir={tmp_path}\nlog.dirs={tmp_path}\n")
    result = start(props)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert all(key in lines[0] for key in ("brokerid", "zookeeper.connect", "log.dir", "log.dirs"))


def test_a_bad_0_8_value_names_the_key(tmp_path):
    props = tmp_path / "server.properties"
    props.write_text(
        f"broker.id=0\nzookeeper.connect=127.0.0.1:1\nlog.dirs={tmp_path}\nlog.segment.bytes=big\n"
    )
    result = start(props)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "log.segment.bytes" in lines[0]

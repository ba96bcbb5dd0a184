"""`zkafka broker start` picks the line from the properties' keys."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from zkafka.broker.start import KAFKA_SERVER08_MODULE

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


@pytest.mark.skipif(
    importlib.util.find_spec(KAFKA_SERVER08_MODULE) is not None, reason="the 0.8 broker exists"
)
def test_a_0_8_file_says_the_0_8_broker_is_not_built_yet(tmp_path):
    props = tmp_path / "server.properties"
    props.write_text(f"broker.id=0\nzookeeper.connect=127.0.0.1:1\nlog.dirs={tmp_path}\n")
    result = start(props)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "0.8 line's broker is not built yet" in lines[0]


def test_a_bad_0_8_value_names_the_key(tmp_path):
    props = tmp_path / "server.properties"
    props.write_text(
        f"broker.id=0\nzookeeper.connect=127.0.0.1:1\nlog.dirs={tmp_path}\nlog.segment.bytes=big\n"
    )
    result = start(props)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "log.segment.bytes" in lines[0]

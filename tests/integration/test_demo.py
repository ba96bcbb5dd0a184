"""`zkafka demo --no-ui`: the whole cluster starts, settles, reacts to a scripted change and stops cleanly."""

import os
import re
import subprocess
import sys
import time

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def snapshots(stdout: str) -> list[str]:
    return [block for block in stdout.split("\n\n") if block.startswith("zkafka demo")]


def processes_mentioning(text: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if text.encode() in handle.read():
                    found.append(int(pid))
        except OSError:
            continue
    return found


def test_demo_settles_rebalances_on_a_stopped_consumer_and_exits_cleanly():
    started = time.monotonic()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "zkafka.cli",
            "demo",
            "--no-ui",
            "--duration",
            "16",
            "--consumers",
            "3",
            "--rate",
            "30",
            "--action",
            "5:stop-consumer",
            "--action",
            "9:pause-producer",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - started < 16 + 40
    root = re.search(r"starting ZooKeeper in (\S+)", result.stderr).group(1)
    assert not os.path.exists(root)
    assert processes_mentioning(root) == []  # no stray ZooKeeper or broker

    blocks = snapshots(result.stdout)
    assert len(blocks) >= 10
    first_settled = next(
        b for b in blocks if "owner=(none)" not in b and "rebalance: every partition owned" in b
    )
    assert first_settled.count("broker 0 running") == 1 and first_settled.count("broker 1 running") == 1
    assert len(re.findall(r"^  demo \d-\d ", first_settled, re.M)) == 4  # 2 brokers x 2 partitions
    last = blocks[-1]
    # the stopped consumer's partitions moved to the others, with the stop as the trigger
    assert "rebalance: partitions changed owners (trigger: consumer demo-group_consumer-3 left)" in last
    assert "demo-group_consumer-3-0" not in last.split("events:")[0]
    # with the producer paused, every partition's lag drained to zero
    assert re.findall(r"committed=\S+\s+lag=(\d+)", last) == ["0"] * 4
    assert "total lag=0" in last
    produced = int(re.search(r"produced (\d+)", result.stderr).group(1))
    consumed = int(re.search(r"consumed (\d+)", result.stderr).group(1))
    assert produced > 100 and consumed >= produced

"""A full disk halts a 0.8 broker process with ONE line naming the file and the errno, exit status 1: at start
(an index to rebuild after kill -9; its mapping must never fault: a SIGBUS kills with no word) and while idle
(a checkpoint write). The log directory is a small tmpfs mounted for the test (the tests run as root).
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.integration.test_broker08_process import connected, log_dir, produce
from tests.support.server08 import wait_for_leaders

pytestmark = pytest.mark.integration

NO_SPACE = os.strerror(errno.ENOSPC)


@pytest.fixture
def small_disk(tmp_path: Path):
    """Broker 0's log directory on a 4 MB tmpfs, unmounted at the end."""
    mount_point = log_dir(tmp_path)
    mount_point.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount_point)], check=True)
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=True)


def fill(disk: Path) -> None:
    """Write a file until the disk is full."""
    with open(disk / "filler", "wb", buffering=0) as filler:
        try:
            while True:
                filler.write(b"\xff" * 65536)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    with pytest.raises(OSError):  # not even a page left
        (disk / "probe").write_bytes(b"x")


def halt_line(broker) -> str:
    """The broker's exit status is 1 and its log ends in one line, with no traceback or fault."""
    assert broker.wait(30) == 1
    text = broker.log_text()
    assert "Traceback" not in text and "Fatal Python error" not in text, text
    return text.splitlines()[-1]


def test_a_full_disk_at_start_halts_naming_the_index(broker08_process, small_disk):
    broker = broker08_process(0, log_index_interval_bytes="1")
    with connected(broker) as client:
        wait_for_leaders(client, ["t"])
        produce(client, "t", [b"m%d" % i for i in range(1000)])  # rebuilt: 1000 entries, two pages
    broker.signal(signal.SIGKILL)  # the active index stays pre-allocated: it is rebuilt at the restart
    broker.wait(30)
    fill(small_disk)
    broker.start()
    index = small_disk / "t-0" / "00000000000000000000.index"
    assert halt_line(broker) == f"zkafka: error: OSError: [Errno 28] {NO_SPACE}: '{index}'"


def test_a_full_disk_while_idle_halts_naming_the_checkpoint(broker08_process, small_disk):
    broker = broker08_process(
        0,
        log_flush_offset_checkpoint_interval_ms="100",
        replica_high_watermark_checkpoint_interval_ms="100",
    )
    with connected(broker) as client:
        wait_for_leaders(client, ["t"])
        produce(client, "t", [b"a"])
    fill(small_disk)
    line = halt_line(broker)
    assert f"I/O error on the log of broker 0, halting: [Errno 28] {NO_SPACE}: '{small_disk}/" in line
    assert "-offset-checkpoint.tmp'" in line

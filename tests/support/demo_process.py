"""``zkafka demo --no-ui --actions-from-stdin`` as a child process, for the demo's integration tests."""

import os
import re
import subprocess
import sys
import threading

from zkafka.utils import wait_until


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


class DemoProcess:
    """``zkafka demo --no-ui --actions-from-stdin``: its snapshots as they come, actions sent on stdin."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "zkafka.cli", "demo", "--no-ui", "--actions-from-stdin", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self.readers = [
            threading.Thread(target=self._drain, args=(stream, into))
            for stream, into in ((self.proc.stdout, self.stdout), (self.proc.stderr, self.stderr))
        ]
        for reader in self.readers:
            reader.start()

    @staticmethod
    def _drain(stream, into: list[str]) -> None:
        for line in stream:
            into.append(line)

    def blocks(self) -> list[str]:
        """The complete snapshots printed so far."""
        text = "".join(self.stdout)
        return snapshots(text[: text.rfind("\n\n") + 1])

    def wait_for(self, condition, what: str, timeout: float = 60.0) -> str:
        """The first snapshot printed from now on that meets ``condition``."""
        seen = len(self.blocks())

        def found():
            if self.proc.poll() is not None:
                raise AssertionError(f"the demo exited ({self.proc.returncode}): {''.join(self.stderr)}")
            return next((b for b in self.blocks()[seen:] if condition(b)), None)

        return wait_until(found, timeout, message=what)

    def act(self, action: str) -> None:
        self.proc.stdin.write(action + "\n")
        self.proc.stdin.flush()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        for reader in self.readers:
            reader.join(10)


def assert_cleaned_up(demo: DemoProcess) -> str:
    """The demo removed its directory and left no ZooKeeper or broker running; its stderr."""
    stderr = "".join(demo.stderr)
    root = re.search(r"starting ZooKeeper in (\S+)", stderr).group(1)
    assert not os.path.exists(root)
    assert processes_mentioning(root) == []  # no stray ZooKeeper or broker
    return stderr

"""Run the zkafka CLI on a stand-in disk: every ``os.fsync`` takes ``DELAY_MS`` longer, and with
``--fsync-on-loop`` the broker's disk pool runs its tasks in place, so every flush fsyncs on the event loop (the
broker before issue 14: the "before" figure of ``benchmarks/flush_latency.py``).

    python -m benchmarks.slow_disk DELAY_MS [--fsync-on-loop] broker start server.properties

The delay is a sleep before the real fsync, on whichever thread calls it, as a slow device would block it.
Code that looks up ``os.fsync`` when it calls it, or after this module patched it, gets the slow one.
"""

from __future__ import annotations

import os
import sys
import time

ON_LOOP = "--fsync-on-loop"


def slow_fsync(delay_s: float):
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        time.sleep(delay_s)
        real_fsync(fd)

    return fsync


def main() -> None:
    delay_ms, *args = sys.argv[1:]
    if float(delay_ms):
        os.fsync = slow_fsync(float(delay_ms) / 1000)
    if args[:1] == [ON_LOOP]:
        args = args[1:]
        from zkafka.server.server_base import DiskPool

        DiskPool.run = lambda self, task: task()  # type: ignore[method-assign]
    from zkafka.cli import main as cli

    cli(args, prog_name="zkafka")


if __name__ == "__main__":
    main()

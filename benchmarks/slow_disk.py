"""Run the zkafka CLI on a slow disk: every ``os.fsync`` takes ``DELAY_MS`` longer (a benchmark's stand-in).

    python -m benchmarks.slow_disk DELAY_MS broker start server.properties

The delay is a sleep before the real fsync, on whichever thread calls it, as a slow device would block it.
Code that looks up ``os.fsync`` when it calls it, or after this module patched it, gets the slow one.
"""

from __future__ import annotations

import os
import sys
import time


def slow_fsync(delay_s: float):
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        time.sleep(delay_s)
        real_fsync(fd)

    return fsync


def main() -> None:
    delay_ms, *args = sys.argv[1:]
    os.fsync = slow_fsync(float(delay_ms) / 1000)
    from zkafka.cli import main as cli

    cli(args, prog_name="zkafka")


if __name__ == "__main__":
    main()

"""The 0.8 line's clients against the 0.7 line's, same machine, same run: ``zkafka perf produce`` and
``zkafka perf consume`` with 100-byte messages, batch 200, one broker and one partition on loopback.

Starts its own ZooKeeper and two brokers as child processes (a 0.7 one under the chroot ``/k07``, a 0.8 one
under ``/k08``), then runs each perf command in a fresh process: produce on the 0.7 line (``--broker-list
0:host:port``, sync, no acks exist), produce on the 0.8 line (``--broker-list host:port``, sync, acks 0, 1
and -1), consume on the 0.7 line (a ZooKeeper group, one stream) and on the 0.8 line (SimpleConsumer08).

    python benchmarks/clients08_perf.py --messages 500000
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.broker_process import start_broker, start_broker08  # noqa: E402
from zkafka.launch.zookeeper_server import ZooKeeperServer  # noqa: E402

CLI = [sys.executable, "-m", "zkafka.cli"]


def perf(*args: str) -> dict:
    done = subprocess.run([*CLI, "perf", *args, "--json", "--no-progress"], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"zkafka perf {' '.join(args)} failed: {done.stderr}")
    return json.loads(done.stdout)


def measure(zk_connect: str, work: str, procs: list, common: tuple, sizes: tuple) -> list:
    proc07, port07 = start_broker(work, zk_connect + "/k07", 1, "broker07")
    procs.append(proc07)
    proc08, port08 = start_broker08(work, zk_connect + "/k08", 1)
    procs.append(proc08)
    rows = []
    result = perf("produce", "--broker-list", f"0:127.0.0.1:{port07}", "--topic", "p07", *common, *sizes)
    rows.append(("produce", "0.7 sync (no acks)", result))
    for acks in ("0", "1", "-1"):
        brokers = f"127.0.0.1:{port08}"
        acks_option = ("--request-required-acks", acks)
        result = perf(
            "produce", "--broker-list", brokers, "--topic", f"p08{acks}", *common, *sizes, *acks_option
        )
        rows.append(("produce", f"0.8 sync acks={acks}", result))
    result = perf("consume", "--zookeeper", zk_connect + "/k07", "--topic", "p07", *common, "--threads", "1")
    rows.append(("consume", "0.7 group, 1 stream", result))
    result = perf("consume", "--broker-list", f"127.0.0.1:{port08}", "--topic", "p081", *common)
    rows.append(("consume", "0.8 SimpleConsumer08", result))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=500_000)
    parser.add_argument("--message-size", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=200)
    options = parser.parse_args()
    common = ("--messages", str(options.messages))
    sizes = ("--message-size", str(options.message_size), "--batch-size", str(options.batch_size))
    work = tempfile.mkdtemp(prefix="clients08-perf-")
    procs: list[subprocess.Popen] = []
    rows = []
    try:
        with ZooKeeperServer(os.path.join(work, "zk")) as zk:
            try:
                rows = measure(zk.connect_string, work, procs, common, sizes)
            finally:
                for proc in procs:  # before ZooKeeper goes: a clean stop closes their sessions
                    os.killpg(proc.pid, signal.SIGTERM)
                    proc.wait(60)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("| what | line | messages | MB/s | messages/s |\n|---|---|---|---|---|")
    for what, line, result in rows:
        print(
            f"| {what} | {line} | {result['total_messages']} | {result['mb_per_sec']:.2f} "
            f"| {result['messages_per_sec']:.0f} |"
        )


if __name__ == "__main__":
    main()

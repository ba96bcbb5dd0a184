"""Producer throughput table: ``zkafka perf produce`` against one local broker, per configuration.

For every (message size, batch size, codec, sync/async) a fresh broker is started as a child process
(``enable.zookeeper=false``, ``log.flush.interval=10000``, ``log.default.flush.interval.ms=1000``, its own
log directory, removed afterwards) and the perf tool runs in another child process in ``broker.list`` mode,
so producer and broker each have a core. Prints a Markdown table (and writes JSON with ``--json-out``).

    python benchmarks/producer_perf.py                      # the full table (about 3 minutes)
    python benchmarks/producer_perf.py --sizes 100 --batches 200 --codecs none --modes sync
    python benchmarks/producer_perf.py --log-root /dev/shm  # logs in memory: no disk in the way
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

CLI = [sys.executable, "-m", "zkafka.cli"]
BROKER_PROPS = {
    "brokerid": "0",
    "hostname": "127.0.0.1",
    "num.partitions": "1",
    "enable.zookeeper": "false",
    "log.flush.interval": "10000",
    "log.default.flush.interval.ms": "1000",
    "log.default.flush.scheduler.interval.ms": "1000",
    "socket.send.buffer": "1048576",
    "socket.receive.buffer": "1048576",
}
# Messages per run: enough for a few seconds at the rates seen here.
MESSAGES = {(1, "sync"): 200_000, (1, "async"): 100_000}
MESSAGES_DEFAULT = 2_000_000


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Broker:
    """A ``zkafka broker start`` child with a fresh log directory."""

    def __init__(self, log_root: str) -> None:
        self.dir = tempfile.mkdtemp(prefix="zkafka-perf-", dir=log_root)
        self.port = free_port()
        props = {**BROKER_PROPS, "port": str(self.port), "log.dir": os.path.join(self.dir, "logs")}
        path = os.path.join(self.dir, "server.properties")
        with open(path, "w") as handle:
            handle.writelines(f"{k}={v}\n" for k, v in props.items())
        self.log = open(os.path.join(self.dir, "broker.log"), "wb")
        self.proc = subprocess.Popen(
            [*CLI, "broker", "start", path], stdout=self.log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"broker did not start; see {self.dir}/broker.log") from None
                time.sleep(0.05)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def run_one(log_root: str, size: int, batch: int, codec: str, mode: str, scale: float) -> dict:
    messages = int(MESSAGES.get((batch, mode), MESSAGES_DEFAULT) * scale)
    broker = Broker(log_root)
    try:
        command = [
            *CLI,
            "perf",
            "produce",
            "--broker-list",
            f"0:127.0.0.1:{broker.port}",
            "--topic",
            "perf",
            "--messages",
            str(messages),
            "--message-size",
            str(size),
            "--batch-size",
            str(batch),
            "--compression",
            codec,
            "--json",
            "--no-progress",
        ]
        if mode == "async":
            command.append("--async")
        out = subprocess.run(command, capture_output=True, text=True, check=True, timeout=600).stdout
        return json.loads(out)
    finally:
        broker.stop()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="100,200")
    parser.add_argument("--batches", default="1,50,200")
    parser.add_argument("--codecs", default="none,gzip,snappy")
    parser.add_argument("--modes", default="sync,async")
    parser.add_argument("--repeat", type=int, default=1, help="Runs per configuration; the best is reported.")
    parser.add_argument("--scale", type=float, default=1.0, help="Multiply the message counts.")
    parser.add_argument("--log-root", default=None, help="Where the brokers' log directories go.")
    parser.add_argument("--json-out", default=None)
    args = parser.parse_args()

    rows = []
    print("| msg size | batch | codec | mode | messages | msg/s | MB/s |")
    print("|---:|---:|---|---|---:|---:|---:|")
    for size in map(int, args.sizes.split(",")):
        for batch in map(int, args.batches.split(",")):
            for codec in args.codecs.split(","):
                for mode in args.modes.split(","):
                    runs = [
                        run_one(args.log_root, size, batch, codec, mode, args.scale)
                        for _ in range(args.repeat)
                    ]
                    best = max(runs, key=lambda r: r["messages_per_sec"])
                    rows.append(best)
                    print(
                        f"| {size} | {batch} | {codec} | {mode} | {best['total_messages']:,} "
                        f"| {best['messages_per_sec']:,.0f} | {best['mb_per_sec']:.1f} |",
                        flush=True,
                    )
    if args.json_out:
        with open(args.json_out, "w") as handle:
            json.dump(rows, handle, indent=1)


if __name__ == "__main__":
    main()

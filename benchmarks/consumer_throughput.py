"""Consumer throughput: fill a broker's log with N messages, then read them back with ``zkafka perf consume``.

Starts its own ZooKeeper (``zkafka.launch.zookeeper_server.ZooKeeperServer``) and one broker as a child process
(``zkafka broker start``, so the broker's work is not on the consumer's GIL), fills one topic per message
size with raw PRODUCE requests, and runs ``zkafka perf consume --json`` in a fresh process several times.
It also measures, in this process, the raw rates of the pieces under it: SimpleConsumer fetches, the
stream's chunk decoding and ``zkafka.records.format07.iter_messages``.

    python benchmarks/consumer_throughput.py --messages 1000000 --sizes 100 200 --runs 3
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.broker_process import start_broker  # noqa: E402
from zkafka.consumer.simple07 import SimpleConsumer  # noqa: E402
from zkafka.consumer.stream07 import decode_chunk  # noqa: E402
from zkafka.launch.zookeeper_server import ZooKeeperServer  # noqa: E402
from zkafka.protocol import LATEST_TIME  # noqa: E402
from zkafka.protocol.v07 import OffsetRequest, ProducerRequest, encode_request  # noqa: E402
from zkafka.records.format07 import iter_messages  # noqa: E402
from zkafka.records.message07 import build_message_set  # noqa: E402
from zkafka.zk.paths07 import BrokerPartition  # noqa: E402

BATCH = 5000
FETCH_SIZE = 1024 * 1024


def log_end(sock: socket.socket, topic: str, partition: int) -> int:
    sock.sendall(encode_request(OffsetRequest(topic, partition, LATEST_TIME, 1)))
    header = sock.recv(6, socket.MSG_WAITALL)
    size, _ = struct.unpack(">ih", header)
    body = sock.recv(size - 2, socket.MSG_WAITALL)
    return struct.unpack_from(">q", body, 4)[0] if struct.unpack_from(">i", body)[0] else 0


def fill(port: int, topic: str, size: int, messages: int, partitions: int) -> int:
    """Append ``messages`` payloads of ``size`` bytes round-robin by batch; return the bytes written."""
    batch = build_message_set([b"x" * size] * BATCH)
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sent = 0
        part = 0
        expected = [0] * partitions
        while sent < messages:
            n = min(BATCH, messages - sent)
            data = batch if n == BATCH else build_message_set([b"x" * size] * n)
            sock.sendall(encode_request(ProducerRequest(topic, part, data)))
            expected[part] += len(data)
            sent += n
            part = (part + 1) % partitions
        deadline = time.monotonic() + 60
        while any(log_end(sock, topic, p) != expected[p] for p in range(partitions)):
            if time.monotonic() > deadline:
                raise RuntimeError("the log was not flushed in time")
            time.sleep(0.2)
    return sum(expected)


def perf_command(zk_connect: str, topic: str, messages: int, threads: int) -> list[str]:
    return [sys.executable, "-m", "zkafka.cli", "perf", "consume", "--zookeeper", zk_connect, "--topic", topic] + [
        "--messages", str(messages), "--threads", str(threads), "--fetch-size", str(FETCH_SIZE), "--json",
    ]  # fmt: skip


def perf_consume(zk_connect: str, topic: str, messages: int, threads: int) -> dict:
    command = perf_command(zk_connect, topic, messages, threads)
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def profile(zk_connect: str, topic: str, messages: int, threads: int, top: int = 25) -> None:
    """Sample one ``perf consume`` run with py-spy and print where the consuming time goes, by source line."""
    if shutil.which("py-spy") is None:
        print("  (py-spy is not installed: pip install py-spy, to see the profile)")
        return
    with tempfile.NamedTemporaryFile(suffix=".txt") as raw:
        subprocess.run(
            ["py-spy", "record", "-r", "1000", "-f", "raw", "-o", raw.name, "--"]
            + perf_command(zk_connect, topic, messages, threads),
            cwd=ROOT, capture_output=True, check=True,
        )  # fmt: skip
        samples: collections.Counter[str] = collections.Counter()
        for line in open(raw.name):
            stack, _, count = line.rpartition(" ")
            frames = stack.split(";")
            # the consuming phase only: start-up (imports, ZooKeeper connect) is left out
            if not any("_Reader.__call__" in f or "Fetcher._run" in f or "Hub.run" in f for f in frames):
                continue
            if any("threadpool" in f for f in frames):
                continue
            samples[frames[-1]] += int(count)
    total = sum(samples.values()) or 1
    print(f"  profile of the consuming phase ({total} samples at 1 kHz), self time by source line:")
    for frame, count in samples.most_common(top):
        print(f"    {100 * count / total:5.1f}%  {frame[:80]:80s} {_source_line(frame)[:70]}")


def _source_line(frame: str) -> str:
    try:
        _, location = frame.rsplit("(", 1)
        path, line = location.rstrip(")").rsplit(":", 1)
        if path.startswith("zkafka"):
            with open(os.path.join(ROOT, path)) as f:
                return f.read().splitlines()[int(line) - 1].strip()
    except (ValueError, OSError, IndexError):
        pass
    return ""


def raw_rates(port: int, topic: str, partitions: int, limit_bytes: int) -> dict[str, float]:
    """msg/s of: fetch only; fetch + decode_chunk; fetch + iter_messages (the message.py path)."""
    out = {}
    for mode in ("fetch", "decode_chunk", "iter_messages"):
        count = 0
        started = time.perf_counter()
        with SimpleConsumer("127.0.0.1", port, buffer_size=2 * 1024 * 1024) as consumer:
            for p in range(partitions):
                offset = 0
                part = BrokerPartition(0, p)
                while offset < limit_bytes // partitions:
                    messages = consumer.fetch(topic, p, offset, FETCH_SIZE)
                    if not len(messages.buffer):
                        break
                    valid = messages.valid_bytes
                    if mode == "fetch":
                        count += sum(1 for _ in _entry_count(messages.buffer, valid))
                    elif mode == "decode_chunk":
                        count += len(decode_chunk(messages.buffer[:valid], offset, topic, part)[0])
                    else:
                        count += sum(1 for _ in iter_messages(messages.buffer[:valid], offset))
                    offset += valid
        out[mode] = count / (time.perf_counter() - started)
    return out


def _entry_count(buf, valid):
    pos = 0
    while pos < valid:
        yield pos
        pos += 4 + struct.unpack_from(">i", buf, pos)[0]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 200])
    parser.add_argument("--partitions", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1, help="streams of the perf consumer")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="also sample one run with py-spy")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="zkafka-consumer-bench-") as work:
        with ZooKeeperServer(os.path.join(work, "zk")) as zk:
            broker, port = start_broker(work, zk.connect_string, args.partitions)
            try:
                for size in args.sizes:
                    topic = f"perf-{size}"
                    t = time.perf_counter()
                    written = fill(port, topic, size, args.messages, args.partitions)
                    print(f"filled {topic}: {args.messages} x {size} B ({written / 2**20:.0f} MiB) "
                          f"in {time.perf_counter() - t:.1f}s")  # fmt: skip
                    rates = []
                    for _ in range(args.runs):
                        result = perf_consume(zk.connect_string, topic, args.messages, args.threads)
                        rates.append(result["messages_per_sec"])
                        print(f"  perf consume: {result['total_messages']} msgs in {result['elapsed_s']:.2f}s = "
                              f"{result['messages_per_sec']:,.0f} msg/s, {result['mb_per_sec']:.1f} MB/s "
                              f"(first rebalance {result['rebalance_s'] * 1000:.0f} ms)")  # fmt: skip
                    print(f"  best {max(rates):,.0f} msg/s, median {statistics.median(rates):,.0f} msg/s")
                    if args.profile:
                        profile(zk.connect_string, topic, args.messages, args.threads)
                    raw = raw_rates(port, topic, args.partitions, written)
                    print("  in-process, SimpleConsumer fetch loop: "
                          + ", ".join(f"{k} {v:,.0f} msg/s" for k, v in raw.items()))  # fmt: skip
            finally:
                broker.terminate()
                broker.wait(30)


if __name__ == "__main__":
    main()

"""Spark read rates on both lines: the zkafka batch source and the loader against the plain SimpleConsumer.

Starts its own ZooKeeper and, on two chroots, a 0.7 broker and a 0.8 broker as child processes (``zkafka
broker start``; ``--line`` picks one). Fills one topic of ``--partitions`` partitions on each with
``--messages`` messages of ``--size`` bytes (0.7: raw PRODUCE requests of about 1 MB; 0.8: Produce requests
of 5,000 messages), then reads them all back, in this order and from the same logs:

- ``consumer``: SimpleConsumer fetches of 1 MiB and 0.7 deep iteration (0.8: SimpleConsumer08 and
  ``decode_chunk08``), one partition after the other in this process (one core);
- ``consumer x2``: the same in two processes, partitions shared out (two cores, like ``local[2]``);
- ``source #1..3``: ``spark.read.format("zkafka")`` into Spark's ``noop`` sink (every row reaches the JVM),
  three times in a row, the lines taking turns: the first run still pays for the JVM's JIT warming up;
- ``loader``: ``zkafka.spark.load`` into Parquet (read, write, commit), after those.

Spark's start-up (the JVM and the session) and the first query (which starts the Python planner and
worker processes; it reads one message per partition) are reported on their own and left out of the
rates. MB are 10^6 bytes of log (entries with their headers).

    python benchmarks/spark_load.py [--messages 1000000] [--size 200] [--partitions 4] [--master local[2]]
                                    [--line both|0.7|0.8]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.broker_process import start_broker, start_broker08  # noqa: E402
from benchmarks.consumer08_throughput import fill as fill08  # noqa: E402
from zkafka.admin.topics import create_topic  # noqa: E402
from zkafka.consumer.simple07 import SimpleConsumer  # noqa: E402
from zkafka.consumer.simple08 import SimpleConsumer08  # noqa: E402
from zkafka.consumer.stream08 import decode_chunk08  # noqa: E402
from zkafka.launch.zookeeper_server import ZooKeeperServer  # noqa: E402
from zkafka.protocol import LATEST_TIME  # noqa: E402
from zkafka.protocol.v07 import ProducerRequest, encode_request  # noqa: E402
from zkafka.records.message07 import build_message_set  # noqa: E402
from zkafka.utils import wait_until  # noqa: E402
from zkafka.zk.client import make_zk_client, start_zk_client  # noqa: E402

TOPIC = "bench"
FETCH_SIZE = 1024 * 1024
SET_BYTES = 1_000_000


def fill(port: int, messages: int, size: int, partitions: int) -> int:
    """Produce the messages round-robin over the partitions; returns the log bytes written."""
    per_set = max(1, SET_BYTES // (size + 10))
    filler = b"abcdefghijklmnopqrstuvwxyz0123456789" * (size // 36 + 1)
    ends = [0] * partitions
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sent = 0
        while sent < messages:
            n = min(per_set, messages - sent)
            payloads = [(b"%012d|" % (sent + i) + filler)[:size] for i in range(n)]
            data = build_message_set(payloads)
            partition = (sent // per_set) % partitions
            sock.sendall(encode_request(ProducerRequest(TOPIC, partition, data)))
            ends[partition] += len(data)
            sent += n
    with SimpleConsumer("127.0.0.1", port) as consumer:
        for p in range(partitions):
            wait_until(
                lambda p=p: consumer.get_offsets_before(TOPIC, p, LATEST_TIME, 1) == [ends[p]],
                60,
                0.1,
                "flushed",
            )
    return sum(ends)


def consume_partitions(port: int, partitions: list[int]) -> tuple[int, int]:
    """Read the partitions with SimpleConsumer and deep iteration: (messages, payload bytes)."""
    count = payload = 0
    with SimpleConsumer("127.0.0.1", port, buffer_size=FETCH_SIZE) as consumer:
        for p in partitions:
            end = consumer.get_offsets_before(TOPIC, p, LATEST_TIME, 1)[0]
            offset = 0
            while offset < end:
                messages = consumer.fetch(TOPIC, p, offset, FETCH_SIZE)
                for message, _ in messages:
                    count += 1
                    payload += len(message.payload)
                offset += messages.valid_bytes
    return count, payload


def consume_partitions08(port: int, partitions: list[int]) -> tuple[int, int]:
    """Read the partitions with SimpleConsumer08 and ``decode_chunk08``: (messages, payload bytes)."""
    count = payload = 0
    with SimpleConsumer08("127.0.0.1", port, buffer_size=FETCH_SIZE) as consumer:
        for p in partitions:
            end, offset = consumer.latest_offset(TOPIC, p), 0
            while offset < end:
                data = consumer.fetch(TOPIC, p, offset, FETCH_SIZE).data
                items, error, _, offset = decode_chunk08(bytes(data), offset, TOPIC, p)
                assert error is None, error
                count += len(items)
                payload += sum(len(m.message) for m in items)
    return count, payload


def start_line(line: str, work: str, zk_root: str, args) -> tuple:
    """The line's broker on its own chroot, filled: (process, port, ZooKeeper connect string, log bytes)."""
    root = start_zk_client(make_zk_client(zk_root))
    root.ensure_path(f"/{line}")
    root.stop()
    root.close()
    zk_connect = f"{zk_root}/{line}"
    os.makedirs(work, exist_ok=True)
    began = time.monotonic()
    if line == "0.7":
        proc, port = start_broker(work, zk_connect, args.partitions)
        log_bytes = fill(port, args.messages, args.size, args.partitions)
    else:
        proc, port = start_broker08(work, zk_connect, args.partitions)
        client = start_zk_client(make_zk_client(zk_connect))
        last = f"/brokers/topics/{TOPIC}/partitions/{args.partitions - 1}/state"
        try:
            wait_until(lambda: client.exists("/brokers/ids/0"), 30, 0.1, "broker registered")
            create_topic(client, TOPIC, args.partitions, 1)
            wait_until(lambda: client.exists(last), 30, 0.1, "leaders elected")
        finally:
            client.stop()
            client.close()
        fill08(port, TOPIC, args.partitions, args.messages, args.size)
        log_bytes = args.messages * (args.size + 26)  # offset, size, crc, magic, attributes, key, value
    print(f"{line}: filled {args.messages} x {args.size} B in {time.monotonic() - began:.1f}s", flush=True)
    return proc, port, zk_connect, log_bytes


def noop_rows(df) -> int:
    """Write a DataFrame to Spark's noop sink (every row is produced and reaches the JVM); its row count."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    rows = Observation("rows")
    df.observe(rows, F.count(F.lit(1)).alias("n")).write.format("noop").mode("overwrite").save()
    return rows.get["n"]


def timed(label: str, rows: int, log_bytes: int, fn) -> dict:
    began = time.monotonic()
    got = fn()
    secs = time.monotonic() - began
    result = {
        "reader": label,
        "rows": got,
        "seconds": round(secs, 2),
        "rows_per_s": round(rows / secs),
        "MB_per_s": round(log_bytes / 1e6 / secs, 1),
    }
    assert result["rows"] == rows, f"{label} read {result['rows']} rows, not {rows}"
    print(json.dumps(result), flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--line", choices=["both", "0.7", "0.8"], default="both")
    args = parser.parse_args()
    lines = ["0.7", "0.8"] if args.line == "both" else [args.line]

    with tempfile.TemporaryDirectory(prefix="zkafka-bench-") as work:
        zk = ZooKeeperServer(os.path.join(work, "zookeeper"))
        zk.start()
        clusters, results = {}, []
        try:
            for line in lines:
                clusters[line] = start_line(line, os.path.join(work, line), zk.connect_string, args)
            for line, (_, port, _, log_bytes) in clusters.items():
                results += consumers(line, args, port, log_bytes)
            results += spark_runs(args, {line: (c[2], c[3]) for line, c in clusters.items()}, work)
        finally:
            for proc, *_ in clusters.values():
                proc.terminate()
                proc.wait(30)
            zk.stop()
    print(json.dumps({"messages": args.messages, "size": args.size, "partitions": args.partitions}))
    for row in results:
        print(
            f"{row['reader']:<18} {row['rows_per_s']:>10} rows/s {row['MB_per_s']:>7} MB/s  {row['seconds']:>6} s"
        )


def consumers(line: str, args, port: int, log_bytes: int) -> list[dict]:
    n, parts = args.messages, list(range(args.partitions))
    consume = consume_partitions if line == "0.7" else consume_partitions08
    results = [timed(f"{line} consumer", n, log_bytes, lambda: consume(port, parts)[0])]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        pool.starmap(consume, [(port, []), (port, [])])  # start both workers first
        results.append(
            timed(
                f"{line} consumer x2",
                n,
                log_bytes,
                lambda: sum(c for c, _ in pool.starmap(consume, [(port, parts[0::2]), (port, parts[1::2])])),
            )
        )
    return results


def spark_runs(args, clusters: dict[str, tuple[str, int]], work: str) -> list[dict]:
    """The source three times per line, the lines taking turns, then the loader per line."""
    from zkafka.spark import load, spark_session

    n, parts = args.messages, list(range(args.partitions))
    began = time.monotonic()
    spark = spark_session(
        args.master, "zkafka-bench", {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false"}
    )
    spark.sparkContext.setLogLevel("ERROR")
    print(f"spark session {time.monotonic() - began:.1f}s", flush=True)
    results = []
    try:

        def source(zk_connect: str, **options):  # a fresh reader each time: .option() changes it in place
            reader = spark.read.format("zkafka").option("zookeeper.connect", zk_connect)
            return reader.option("subscribe", TOPIC).options(**options).load()

        for line, (zk_connect, _) in clusters.items():
            # The first query starts the Python planner and worker processes: timed apart, on one message each.
            name = (lambda p: f"0-{p}") if line == "0.7" else str
            end = args.size + 10 if line == "0.7" else 1
            first = json.dumps({TOPIC: {name(p): end for p in parts}})
            timed(
                f"{line} first query",
                len(parts),
                0,
                lambda z=zk_connect, f=first: source(z, endingOffsets=f).count(),
            )
        for run in (1, 2, 3):  # the JVM's JIT warms up over the first runs
            for line, (zk_connect, log_bytes) in clusters.items():
                results.append(
                    timed(f"{line} source #{run}", n, log_bytes, lambda z=zk_connect: noop_rows(source(z)))
                )
        for line, (zk_connect, log_bytes) in clusters.items():
            out = os.path.join(work, f"table-{line}")
            results.append(
                timed(
                    f"{line} loader",
                    n,
                    log_bytes,
                    lambda z=zk_connect, o=out: load(spark, z, [TOPIC], o).rows,
                )
            )
    finally:
        spark.stop()
    return results


if __name__ == "__main__":
    main()

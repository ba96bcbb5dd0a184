"""Spark read rates: the zkafka batch source and the loader against the plain SimpleConsumer, same messages.

Starts its own ZooKeeper and one broker as a child process (``zkafka broker start``), fills one topic of
``--partitions`` partitions with ``--messages`` messages of ``--size`` bytes (raw PRODUCE requests of about
1 MB), then reads them all back, in this order and from the same logs:

- ``consumer``: SimpleConsumer fetches of 1 MiB and 0.7 deep iteration, one partition after the other in
  this process (one core);
- ``consumer x2``: the same in two processes, partitions shared out (two cores, like ``local[2]``);
- ``source #1..3``: ``spark.read.format("zkafka")`` into Spark's ``noop`` sink (every row reaches the JVM),
  three times in a row: the first run still pays for the JVM's JIT warming up;
- ``loader``: ``zkafka.spark.load`` into Parquet (read, write, commit), after those.

Spark's start-up (the JVM and the session) and the first query (which starts the Python planner and
worker processes; it reads one message per partition) are reported on their own and left out of the
rates. MB are 10^6 bytes of log (entries with their headers).

    python benchmarks/spark_load.py [--messages 1000000] [--size 200] [--partitions 4] [--master local[2]]
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
from benchmarks.broker_process import start_broker  # noqa: E402
from zkafka.consumer.simple import SimpleConsumer
from zkafka.launch.zookeeper_server import ZooKeeperServer
from zkafka.protocol.v07 import LATEST_TIME, ProducerRequest, encode_request
from zkafka.records.message import build_message_set
from zkafka.utils import wait_until

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
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="zkafka-bench-") as work:
        zk = ZooKeeperServer(os.path.join(work, "zookeeper"))
        zk.start()
        broker, port = start_broker(work, zk.connect_string, args.partitions)
        try:
            began = time.monotonic()
            log_bytes = fill(port, args.messages, args.size, args.partitions)
            print(f"filled {args.messages} x {args.size} B in {time.monotonic() - began:.1f}s", flush=True)
            results = [run_all(args, zk.connect_string, port, log_bytes, work)]
        finally:
            broker.terminate()
            broker.wait(30)
            zk.stop()
    print(json.dumps({"messages": args.messages, "size": args.size, "log_MB": round(log_bytes / 1e6, 1)}))
    for row in results[0]:
        print(
            f"{row['reader']:<12} {row['rows_per_s']:>10} rows/s {row['MB_per_s']:>7} MB/s  {row['seconds']:>6} s"
        )


def run_all(args, zk_connect: str, port: int, log_bytes: int, work: str) -> list[dict]:
    n, parts = args.messages, list(range(args.partitions))
    results = [timed("consumer", n, log_bytes, lambda: consume_partitions(port, parts)[0])]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        pool.starmap(consume_partitions, [(port, []), (port, [])])  # start both workers first
        results.append(
            timed(
                "consumer x2",
                n,
                log_bytes,
                lambda: sum(
                    c for c, _ in pool.starmap(consume_partitions, [(port, parts[0::2]), (port, parts[1::2])])
                ),
            )
        )

    from zkafka.spark import load, spark_session

    began = time.monotonic()
    spark = spark_session(
        args.master, "zkafka-bench", {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false"}
    )
    spark.sparkContext.setLogLevel("ERROR")
    print(f"spark session {time.monotonic() - began:.1f}s", flush=True)
    try:

        def source(**options):  # a fresh DataFrameReader each time: .option() changes the reader in place
            reader = (
                spark.read.format("zkafka").option("zookeeper.connect", zk_connect).option("subscribe", TOPIC)
            )
            return reader.options(**options).load()

        # The first query starts the Python planner and worker processes: timed apart, on one message each.
        first = json.dumps({TOPIC: {f"0-{p}": args.size + 10 for p in parts}})
        timed("first query", len(parts), 0, lambda: source(endingOffsets=first).count())
        for run in (1, 2, 3):  # the JVM's JIT warms up over the first runs
            results.append(timed(f"source #{run}", n, log_bytes, lambda: noop_rows(source())))
        out = os.path.join(work, "table")
        results.append(timed("loader", n, log_bytes, lambda: load(spark, zk_connect, [TOPIC], out).rows))
    finally:
        spark.stop()
    return results


if __name__ == "__main__":
    main()

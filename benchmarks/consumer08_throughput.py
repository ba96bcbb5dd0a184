"""0.8 consumer throughput: fill a 0.8 broker with N messages, read them back with ``zkafka perf consume``.

Starts its own ZooKeeper and one 0.8 broker as a child process (``zkafka broker start`` of a 0.8 properties
file), creates one topic, fills it with raw Produce requests (acks=1), then runs ``zkafka perf consume
--json`` in fresh processes: through the 0.8 high-level consumer (``--zookeeper``: a group, leaders from
the metadata, long-poll fetches) and, for comparison, through SimpleConsumer08 (``--broker-list``). It also
measures ``decode_chunk08`` (the streams' decoding) on a fetched megabyte in this process.

    python benchmarks/consumer08_throughput.py --messages 1000000 --size 100 --partitions 4 --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.broker_process import start_broker08  # noqa: E402
from zkafka.admin.topics import create_topic  # noqa: E402
from zkafka.client08.channel import broker_channel  # noqa: E402
from zkafka.consumer.simple08 import SimpleConsumer08  # noqa: E402
from zkafka.consumer.stream08 import decode_chunk08  # noqa: E402
from zkafka.launch.zookeeper_server import ZooKeeperServer, free_port  # noqa: E402
from zkafka.protocol.errors import ErrorCode  # noqa: E402
from zkafka.protocol.produce import (  # noqa: E402
    ProduceRequestPartition,
    ProduceRequestTopic,
    ProduceRequestV0,
)
from zkafka.records.format08 import build_message_set  # noqa: E402
from zkafka.utils import wait_until  # noqa: E402
from zkafka.zk.client import make_zk_client, start_zk_client  # noqa: E402

BATCH = 5000
FETCH_SIZE = 1024 * 1024


def fill(port: int, topic: str, partitions: int, messages: int, size: int) -> None:
    batch = build_message_set([(None, b"x" * size)] * BATCH)
    channel = broker_channel("127.0.0.1", port, "filler", socket_timeout_ms=60000)
    try:
        sent = part = 0
        deadline = time.monotonic() + 30
        while sent < messages:
            n = min(BATCH, messages - sent)
            data = batch if n == BATCH else build_message_set([(None, b"x" * size)] * n)
            request = ProduceRequestV0(
                1, 10000, [ProduceRequestTopic(topic, [ProduceRequestPartition(part, data)])]
            )
            error = channel.request(request).topics[0].partitions[0].error
            if error == ErrorCode.NOT_LEADER_FOR_PARTITION and time.monotonic() < deadline:
                time.sleep(0.1)  # the broker has not taken up its leadership yet
                continue
            if error:
                raise RuntimeError(f"produce to {topic}-{part}: error {error}")
            sent += n
            part = (part + 1) % partitions
    finally:
        channel.close()


def perf_consume(args: list[str]) -> dict:
    command = [sys.executable, "-m", "zkafka.cli", "perf", "consume", *args, "--json", "--no-progress"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if result.returncode:
        raise RuntimeError(result.stderr)
    return json.loads(result.stdout.strip().splitlines()[-1])


def decode_rate(port: int, topic: str) -> float:
    with SimpleConsumer08("127.0.0.1", port) as consumer:
        data = bytes(consumer.fetch(topic, 0, 0, FETCH_SIZE).data)
    count = len(decode_chunk08(data, 0, topic, 0)[0])
    began = time.perf_counter()
    for _ in range(20):
        decode_chunk08(data, 0, topic, 0)
    return 20 * count / (time.perf_counter() - began)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--runs", type=int, default=3)
    opts = parser.parse_args()
    work = tempfile.mkdtemp(prefix="zkafka-consumer08-")
    zookeeper = ZooKeeperServer(os.path.join(work, "zk"), port=free_port())
    zookeeper.start()
    broker = None
    try:
        zk_connect = f"127.0.0.1:{zookeeper.port}"
        broker, port = start_broker08(work, zk_connect, opts.partitions)
        client = start_zk_client(make_zk_client(zk_connect))
        wait_until(lambda: client.exists("/brokers/ids/0"), 30, 0.1, "broker registered")
        create_topic(client, "perf08", opts.partitions, 1)
        wait_until(
            lambda: client.exists(f"/brokers/topics/perf08/partitions/{opts.partitions - 1}/state"), 30
        )
        client.stop()
        client.close()
        began = time.perf_counter()
        fill(port, "perf08", opts.partitions, opts.messages, opts.size)
        print(f"filled {opts.messages} x {opts.size} B in {time.perf_counter() - began:.1f} s")
        print(f"decode_chunk08: {decode_rate(port, 'perf08'):,.0f} messages/s (one 1 MiB fetch, in process)")
        common = ["--topic", "perf08", "--messages", str(opts.messages), "--fetch-size", str(FETCH_SIZE)]
        for name, args in (
            ("high-level 0.8 consumer", ["--zookeeper", zk_connect, "--threads", str(opts.threads)]),
            ("SimpleConsumer08", ["--broker-list", f"127.0.0.1:{port}"]),
        ):
            rates = []
            for _ in range(opts.runs):
                result = perf_consume([*args, *common])
                assert result["total_messages"] == opts.messages, result
                rates.append(result["messages_per_sec"])
            print(
                f"{name}: median {statistics.median(rates):,.0f} messages/s "
                f"({statistics.median(rates) * opts.size / 1e6:.1f} MB/s payload) over {opts.runs} runs: "
                + ", ".join(f"{r:,.0f}" for r in rates)
            )
    finally:
        if broker is not None:
            broker.terminate()
            broker.wait(30)
        zookeeper.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

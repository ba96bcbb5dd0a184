"""Mirroring rate: MirrorMaker copying one topic between two clusters on loopback.

Starts a ZooKeeper (two chroots stand for two clusters) and a broker per cluster as child processes, fills
the source topic, then runs MirrorMaker in this process until the target holds every message.

    python benchmarks/mirror_rate.py [--messages 200000] [--message-size 100] [--codec 0|1|2]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.broker_process import start_broker  # noqa: E402
from zkafka.config07 import ConsumerConfig, ProducerConfig
from zkafka.consumer.simple07 import SimpleConsumer
from zkafka.launch.zookeeper_server import ZooKeeperServer
from zkafka.protocol import LATEST_TIME
from zkafka.protocol.v07 import ProducerRequest, encode_request
from zkafka.records.message07 import build_message_set
from zkafka.tools.mirror_maker import MirrorMaker
from zkafka.topic_count import Whitelist
from zkafka.utils import wait_until

PARTITIONS = 4


def log_end(port: int) -> int:
    with SimpleConsumer("127.0.0.1", port) as consumer:
        return sum(consumer.get_offsets_before("mirrored", p, LATEST_TIME, 1)[0] for p in range(PARTITIONS))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--message-size", type=int, default=100)
    parser.add_argument("--codec", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root, ZooKeeperServer(os.path.join(root, "zk")) as zk:
        source_zk, target_zk = zk.connect_string + "/source", zk.connect_string + "/target"
        brokers = [
            start_broker(root, source_zk, PARTITIONS, name="source", log_default_flush_interval_ms="200"),
            start_broker(root, target_zk, PARTITIONS, name="target", log_default_flush_interval_ms="200"),
        ]
        try:
            source_port, target_port = brokers[0][1], brokers[1][1]
            wait_until(lambda: _answers(source_port) and _answers(target_port), timeout=30)
            import socket

            per_set = 200
            sets = args.messages // per_set
            payload = b"m" * args.message_size
            with socket.create_connection(("127.0.0.1", source_port)) as sock:
                for i in range(sets):
                    data = build_message_set([payload] * per_set, args.codec)
                    sock.sendall(encode_request(ProducerRequest("mirrored", i % PARTITIONS, data)))
            total = len(build_message_set([payload] * per_set, args.codec)) * sets
            wait_until(lambda: log_end(source_port) >= total, timeout=120, message="source filled")
            mirror = MirrorMaker(
                [
                    ConsumerConfig(
                        {"zk.connect": source_zk, "groupid": "mirror", "autooffset.reset": "smallest"}
                    )
                ],
                ProducerConfig({"zk.connect": target_zk}),
                Whitelist("mirrored"),
            )
            start = time.perf_counter()
            mirror.run(until=lambda: mirror.stats.messages >= (sets if args.codec else args.messages))
            handed = time.perf_counter() - start
            mirror.close()
            wait_until(lambda: log_end(target_port) >= total, timeout=120, message="target filled")
            elapsed = time.perf_counter() - start
            print(
                json.dumps(
                    {
                        "messages": args.messages,
                        "message_size": args.message_size,
                        "codec": args.codec,
                        "seconds_until_handed_to_producer": round(handed, 2),
                        "seconds_until_flushed_on_target": round(elapsed, 2),
                        "messages_per_sec": round(args.messages / handed),
                        "mb_per_sec": round(total / handed / 1e6, 1),
                    },
                    indent=2,
                )
            )
        finally:
            for proc, _ in brokers:
                proc.terminate()
                proc.wait(20)


def _answers(port: int) -> bool:
    try:
        with SimpleConsumer("127.0.0.1", port, socket_timeout_ms=1000) as consumer:
            consumer.get_offsets_before("mirrored", 0, LATEST_TIME, 1)
        return True
    except OSError:
        return False


if __name__ == "__main__":
    main()

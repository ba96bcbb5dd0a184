"""Produce-path ingest rate of one broker: 100-byte messages in 1 MB message sets over loopback.

Starts its own standalone broker (no ZooKeeper) with the sample server.properties flush policy
(``log.flush.interval=10000``, ``log.default.flush.interval.ms=1000``), sends PRODUCE requests from one
raw socket, and stops the clock when the broker's flushed end (OFFSETS -1) covers every byte sent, so the
figure includes validation (a CRC per message), the append and the fsyncs. Also times the broker-side
steps alone (FORMAT07.validate, Log.append) to show where the time goes.

    python benchmarks/broker_ingest.py [--messages 2000000] [--message-size 100] [--set-bytes 1000000]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import tempfile
import time

from zkafka.config07 import BrokerConfig
from zkafka.consumer.simple07 import SimpleConsumer
from zkafka.log.log07 import Log
from zkafka.protocol import LATEST_TIME
from zkafka.protocol.v07 import ProducerRequest, encode_request
from zkafka.records.format07 import FORMAT07
from zkafka.records.message07 import build_message_set
from zkafka.server.start import BrokerThread
from zkafka.utils import wait_until


def message_sets(messages: int, message_size: int, set_bytes: int) -> tuple[list[bytes], int]:
    per_set = max(1, set_bytes // (message_size + 10))
    payload = b"x" * message_size
    full = encode_request(ProducerRequest("ingest", 0, build_message_set([payload] * per_set)))
    frames, left = [], messages
    while left > 0:
        n = min(per_set, left)
        frames.append(
            full
            if n == per_set
            else encode_request(ProducerRequest("ingest", 0, build_message_set([payload] * n)))
        )
        left -= n
    return frames, per_set


def run(messages: int, message_size: int, set_bytes: int) -> dict:
    frames, per_set = message_sets(messages, message_size, set_bytes)
    total_bytes = sum(len(f) - 24 for f in frames)  # frame header: size, type, topic, partition, set size
    with tempfile.TemporaryDirectory() as log_dir:
        config = BrokerConfig(
            {
                "brokerid": "0",
                "port": "0",
                "hostname": "127.0.0.1",
                "log.dir": log_dir,
                "enable.zookeeper": "false",
                "log.flush.interval": "10000",
                "log.default.flush.interval.ms": "1000",
                "log.default.flush.scheduler.interval.ms": "1000",
                "socket.receive.buffer": "1048576",
            }
        )
        with BrokerThread(config) as broker:
            consumer = SimpleConsumer("127.0.0.1", broker.port)
            sock = socket.create_connection(("127.0.0.1", broker.port))
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
            start = time.perf_counter()
            for frame in frames:
                sock.sendall(frame)
            sent = time.perf_counter()
            wait_until(
                lambda: consumer.get_offsets_before("ingest", 0, LATEST_TIME, 1)[0] >= total_bytes,
                timeout=120,
                interval=0.005,
                message="all bytes flushed",
            )
            end = time.perf_counter()
            sock.close()
            consumer.close()
    elapsed = end - start
    return {
        "messages": messages,
        "message_size": message_size,
        "messages_per_set": per_set,
        "set_bytes": len(frames[0]) - 24,
        "seconds": round(elapsed, 3),
        "send_seconds": round(sent - start, 3),
        "messages_per_sec": round(messages / elapsed),
        "mb_per_sec": round(total_bytes / elapsed / 1e6, 1),
        "payload_mb_per_sec": round(messages * message_size / elapsed / 1e6, 1),
    }


def broker_side_steps(message_size: int, set_bytes: int, sets: int = 50) -> dict:
    per_set = max(1, set_bytes // (message_size + 10))
    data = build_message_set([b"x" * message_size] * per_set)
    start = time.perf_counter()
    for _ in range(sets):
        FORMAT07.validate(data, 1000000)
    validate_s = (time.perf_counter() - start) / sets
    with tempfile.TemporaryDirectory() as log_dir:
        os.makedirs(f"{log_dir}/ingest-0")
        log = Log(
            f"{log_dir}/ingest-0",
            "ingest",
            0,
            max_segment_size=1 << 30,
            roll_ms=1 << 40,
            flush_interval=10000,
            max_message_size=1000000,
            need_recovery=False,
        )
        start = time.perf_counter()
        for _ in range(sets):
            log.append(data)
        append_s = (time.perf_counter() - start) / sets
        log.close()
    return {
        "validate_us_per_message": round(validate_s / per_set * 1e6, 3),
        "append_us_per_message": round(append_s / per_set * 1e6, 3),
        "append_messages_per_sec": round(per_set / append_s),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2_000_000)
    parser.add_argument("--message-size", type=int, default=100)
    parser.add_argument("--set-bytes", type=int, default=1_000_000)
    args = parser.parse_args()
    result = run(args.messages, args.message_size, args.set_bytes)
    result.update(broker_side_steps(args.message_size, args.set_bytes))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

"""Produce round-trip latency of one 0.7 broker while its flusher fsyncs large amounts of unflushed data.

Starts a standalone broker as a child process (no ZooKeeper; ``log.flush.interval`` out of reach, so only the
time-based flusher fsyncs, every ``--flush-ms``). A writer thread streams ack-less PRODUCE requests of large
messages (cheap to validate, so the broker's time goes to the disk) at ``--write-mb-per-s`` into topic
``bulk``; the probe, on its own connection, sends one small PRODUCE to topic ``probe`` followed by an OFFSETS
request and times the round trip, ``--probe-hz`` times a second. Prints p50/p99/max of the probe and its
p99/p50 ratio. ``--broker-pythonpath`` runs the broker from another checkout (compare before and after);
``--slow-fsync-ms`` adds that delay to every fsync of the broker (``benchmarks.slow_disk``).

The probe is closed-loop: a stall of the broker shows as ONE slow sample, so compare the max and the count of
slow samples too, not only the p99.

    python benchmarks/flush_latency.py [--seconds 20] [--write-mb-per-s 40] [--flush-ms 1000] [--slow-fsync-ms 0]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import tempfile
import threading
import time

from benchmarks.broker_process import start_broker
from zkafka.protocol.v07 import LATEST_TIME, OffsetRequest, ProducerRequest, encode_request
from zkafka.records.message import build_message_set

MESSAGE_SIZE = 64 * 1024  # one message a request: each costs the broker little, so the flush stands out


def recv_exact(sock: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("broker closed the connection")
        data += chunk
    return bytes(data)


def write(port: int, mb_per_s: float, stop: threading.Event, sent: list[int]) -> None:
    """Stream 64 KB produce requests at a steady rate until ``stop``."""
    frame = encode_request(ProducerRequest("bulk", 0, build_message_set([b"w" * MESSAGE_SIZE])))
    interval = len(frame) / (mb_per_s * 1e6)
    with socket.create_connection(("127.0.0.1", port)) as sock:
        next_at = time.perf_counter()
        while not stop.is_set():
            sock.sendall(frame)
            sent[0] += len(frame)
            next_at += interval
            delay = next_at - time.perf_counter()
            if delay > 0:
                stop.wait(delay)


def probe(port: int, seconds: float, hz: float) -> list[float]:
    """Round trips of (one small PRODUCE, one OFFSETS) in milliseconds."""
    produce = encode_request(ProducerRequest("probe", 0, build_message_set([b"p" * 100])))
    offsets = encode_request(OffsetRequest("probe", 0, LATEST_TIME, 1))
    samples = []
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            start = time.perf_counter()
            sock.sendall(produce + offsets)
            recv_exact(sock, int.from_bytes(recv_exact(sock, 4), "big"))
            samples.append((time.perf_counter() - start) * 1000)
            time.sleep(max(0.0, 1 / hz - (time.perf_counter() - start)))
    return samples


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(
    seconds: float,
    write_mb_per_s: float,
    flush_ms: int,
    probe_hz: float,
    broker_pythonpath: str | None,
    slow_fsync_ms: float = 0,
) -> dict:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    # The broker runs that checkout's zkafka (default: this one), and this checkout's benchmarks.
    os.environ["PYTHONPATH"] = os.pathsep.join([broker_pythonpath or here, here])
    launcher = ("-m", "benchmarks.slow_disk", str(slow_fsync_ms)) if slow_fsync_ms else ("-m", "zkafka.cli")
    with tempfile.TemporaryDirectory(dir=os.environ.get("FLUSH_BENCH_DIR")) as work:
        proc, port = start_broker(
            work,
            "127.0.0.1:1",
            1,
            launcher=launcher,
            enable_zookeeper="false",
            log_flush_interval=str(10**9),
            log_default_flush_interval_ms=str(flush_ms),
            log_default_flush_scheduler_interval_ms=str(min(flush_ms, 100)),
            max_socket_request_bytes=str(4 << 20),
        )
        try:
            idle = probe(port, min(3.0, seconds / 4), probe_hz)
            stop, sent = threading.Event(), [0]
            writer = threading.Thread(target=write, args=(port, write_mb_per_s, stop, sent), daemon=True)
            writer.start()
            loaded = probe(port, seconds, probe_hz)
            stop.set()
            writer.join(10)
        finally:
            proc.terminate()
            proc.wait(60)
    p50, p99 = percentile(loaded, 0.5), percentile(loaded, 0.99)
    return {
        "broker_code": broker_pythonpath or here,
        "slow_fsync_ms": slow_fsync_ms,
        "written_mb": round(sent[0] / 1e6, 1),
        "probes": len(loaded),
        "idle_p50_ms": round(statistics.median(idle), 3),
        "p50_ms": round(p50, 3),
        "p99_ms": round(p99, 3),
        "p999_ms": round(percentile(loaded, 0.999), 3),
        "max_ms": round(max(loaded), 3),
        "over_10ms": sum(sample > 10 for sample in loaded),
        "p99_over_p50": round(p99 / p50, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--write-mb-per-s", type=float, default=40.0)
    parser.add_argument("--flush-ms", type=int, default=1000)
    parser.add_argument("--probe-hz", type=float, default=200.0)
    parser.add_argument("--broker-pythonpath", help="run the broker from this checkout (default: this one)")
    parser.add_argument("--slow-fsync-ms", type=float, default=0, help="add this delay to every fsync")
    args = parser.parse_args()
    result = run(
        args.seconds,
        args.write_mb_per_s,
        args.flush_ms,
        args.probe_hz,
        args.broker_pythonpath,
        args.slow_fsync_ms,
    )
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

"""0.8 broker under many producing connections: a fresh client's Metadata round trip.

Starts its own ZooKeeper and a 0.8 broker process (``zkafka broker start``), then ``--processes`` producing
processes holding ``--connections`` sockets between them; each socket sends the same acks=1 produce request
(``--batch`` messages of 100 bytes to one of the topic's partitions) in a loop, ``--in-flight`` requests
awaiting their answers at once (pipelined, as the new producer's max.in.flight.requests.per.connection).
Measured: ``--samples`` times, a fresh client connects, sends one Metadata request for the topic and reads
the answer (p50/p99/max of connect to answer), first with no load, then with every producing connection
busy; and the produce requests the broker answered a second meanwhile, with its CPU time per request.

    python benchmarks/fairness.py [--connections 1000] [--processes 4] [--in-flight 5] [--samples 300]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import resource
import selectors
import socket
import struct
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.broker_process import start_broker08  # noqa: E402
from benchmarks.latency08 import cpu_seconds, percentiles  # noqa: E402
from tests.support.server08 import Client08, produce_request, wait_for_leaders  # noqa: E402
from tests.support.wire import recv_exact  # noqa: E402
from zkafka.launch.zookeeper_server import ZooKeeperServer  # noqa: E402
from zkafka.protocol import v08  # noqa: E402
from zkafka.protocol.metadata import MetadataRequestV0  # noqa: E402
from zkafka.records import format08  # noqa: E402

TOPIC = "fairness"
PARTITIONS = 8
WARM_UP_S = 2.0


def raise_open_files(wanted: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, wanted), hard))


def produce_bytes(partition: int, batch: int) -> bytes:
    messages = format08.build_message_set([(None, bytes(100))] * batch)
    return v08.encode_request(produce_request(TOPIC, partition, messages), 1, "fairness-producer")


def produce(port: int, first: int, count: int, in_flight: int, batch: int, answered, connected, stop) -> None:
    """Keep ``in_flight`` produce requests outstanding on each of ``count`` sockets until ``stop``."""
    raise_open_files(count + 100)
    requests = [produce_bytes(p, batch) for p in range(PARTITIONS)]
    answer_size = _answer_size(port, requests[0])
    selector = selectors.DefaultSelector()
    for n in range(first, first + count):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        # [request bytes, received bytes, answers counted, bytes waiting to be sent]
        state = [requests[n % PARTITIONS], 0, 0, bytearray(requests[n % PARTITIONS] * in_flight)]
        selector.register(sock, selectors.EVENT_READ | selectors.EVENT_WRITE, state)
        with connected.get_lock():
            connected.value += 1
    done = 0
    while not stop.is_set():
        for key, events in selector.select(0.1):
            sock, state = key.fileobj, key.data
            if events & selectors.EVENT_READ:
                data = sock.recv(1 << 16)
                if not data:
                    raise ConnectionError("the broker closed a producing connection")
                state[1] += len(data)
                new = state[1] // answer_size - state[2]
                state[2] += new
                done += new
                state[3] += state[0] * new
            if state[3]:
                try:
                    sent = sock.send(state[3])
                except BlockingIOError:
                    sent = 0
                del state[3][:sent]
            selector.modify(sock, selectors.EVENT_READ | (selectors.EVENT_WRITE if state[3] else 0), state)
            if done >= 100:
                with answered.get_lock():
                    answered.value += done
                done = 0


def _answer_size(port: int, request: bytes) -> int:
    """The size of one produce answer (all are alike: one topic, one partition), from one round trip."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(request)
        (size,) = struct.unpack(">i", recv_exact(sock, 4))
        return 4 + size


def metadata_round_trips(port: int, samples: int) -> list[float]:
    """``samples`` times: connect, one Metadata request, its answer; seconds each (a pause between)."""
    request = v08.encode_request(MetadataRequestV0([TOPIC]), 1, "fairness-probe")
    times = []
    for _ in range(samples):
        started = time.perf_counter()
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.sendall(request)
            (size,) = struct.unpack(">i", recv_exact(sock, 4))
            recv_exact(sock, size)
        times.append(time.perf_counter() - started)
        time.sleep(random.uniform(0.005, 0.015))
    return times


def run(args: argparse.Namespace) -> dict:
    raise_open_files(args.connections + 1000)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory() as work, ZooKeeperServer(os.path.join(work, "zk")) as zookeeper:
        broker, port = start_broker08(work, zookeeper.connect_string, PARTITIONS)
        try:
            return measure(args, broker.pid, port)
        finally:
            broker.terminate()
            broker.wait(30)


def measure(args: argparse.Namespace, broker_pid: int, port: int) -> dict:
    with Client08(port) as client:
        wait_for_leaders(client, [TOPIC])
    idle = percentiles(metadata_round_trips(port, args.samples // 3))
    answered, connected = multiprocessing.Value("q", 0), multiprocessing.Value("q", 0)
    stop = multiprocessing.Event()
    share = args.connections // args.processes
    producers = [
        multiprocessing.Process(
            target=produce,
            args=(port, i * share, share, args.in_flight, args.batch, answered, connected, stop),
            daemon=True,
        )
        for i in range(args.processes)
    ]
    for process in producers:
        process.start()
    try:
        deadline = time.monotonic() + 60
        while connected.value < share * args.processes:
            if time.monotonic() > deadline or any(p.exitcode is not None for p in producers):
                raise RuntimeError(f"only {connected.value} producing connections opened")
            time.sleep(0.05)
        time.sleep(WARM_UP_S)
        before, started, cpu_before = answered.value, time.monotonic(), cpu_seconds(broker_pid)
        loaded = metadata_round_trips(port, args.samples)
        requests, cpu = answered.value - before, cpu_seconds(broker_pid) - cpu_before
        rate = requests / (time.monotonic() - started)
        if any(p.exitcode is not None for p in producers):
            raise RuntimeError("a producing process failed")
    finally:
        stop.set()
        for process in producers:
            process.join(10)
            if process.is_alive():
                process.kill()
    return {
        "connections": share * args.processes,
        "in_flight": args.in_flight,
        "batch": args.batch,
        "metadata_idle": idle,
        "metadata_loaded": percentiles(loaded),
        "produce_requests_per_s": round(rate),
        "messages_per_s": round(rate * args.batch),
        "broker_cpu_us_per_request": round(cpu * 1e6 / max(requests, 1), 1),
        "load_average": os.getloadavg()[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=1000)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--in-flight", type=int, default=5)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--samples", type=int, default=300)
    print(json.dumps(run(parser.parse_args()), indent=2))


if __name__ == "__main__":
    main()

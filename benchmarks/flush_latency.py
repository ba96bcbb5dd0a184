"""Produce latency of a broker (0.7 and 0.8 line) while a bulk writer fills it and its flusher fsyncs: does a
flush make the produce latency spike?

The measurement, for each line and each flush mode:

- broker: one ``zkafka broker start`` child process with a fresh log directory (0.7 without ZooKeeper; 0.8 with
  a ZooKeeper this benchmark starts, shared by its 0.8 runs). Segments are ``--segment-mb`` (rolls happen);
- load: a bulk writer in a process of its own (so it never holds the probe's GIL), rate-limited to
  ``--write-mb-per-s`` of single-message produce requests of ``--bulk-kb`` (64 KB: each costs the broker
  little, so a flush stands out) without acknowledgement (0.7 PRODUCE, 0.8 acks=0) to topic ``bulk``;
  ``--writer-nice`` runs it at a lower CPU priority;
- probe: on its own connection, one small (100-byte) produce at a time to topic ``probe``, ``--probe-hz``
  times a second, closed loop (a stall shows as ONE slow sample: look at the max and the count over 10 ms
  too). 0.7: a PRODUCE then an OFFSETS request, timed to the OFFSETS answer (a 0.7 produce has no answer);
  0.8: a Produce with acks=1, timed to its answer. The probe starts after one second of writing and lasts
  ``--seconds``;
- modes. ``idle``: no writer and no flush, the machine's own noise (the probe alone). ``none``: the writer,
  no flush during the run (intervals out of reach: nothing is fsynced). ``pool``: the writer, and the
  time-based flusher fsyncs every log every ``--flush-ms`` (0.7 ``log.default.flush.interval.ms``, 0.8
  ``log.flush.interval.ms``) on the broker's disk pool, as shipped. ``loop``: the same flushes with the
  fsyncs run in place on the event loop (``benchmarks.slow_disk --fsync-on-loop``): the broker before issue
  14. Flushes are time-based only, so the probe's produce never waits for an fsync of its own (a
  ``flush.messages`` flush makes the produce that triggers it wait for it, by design, as in Kafka);
- fairness on a shared machine: each round runs every mode once, in turn, and the samples of all rounds are
  pooled per line and mode, so background load falls on all modes alike;
- the rig (``--rig``), which separates the machine's noise from the broker's. ``pinned`` (the default): the
  broker process, every thread of it, runs on CPU ``--broker-cpu`` alone (its affinity is set before it
  starts); this benchmark, its probe, its bulk writer and the 0.8 ZooKeeper run on the other CPUs, the writer
  at nice ``--writer-nice`` (default 10 in this rig) so that the probe's wake-ups preempt it. On a 2-core
  machine three busy processes otherwise share two cores, and most of a slow probe's time was the broker's
  event loop waiting in the runqueue, not broker work. ``--keep-awake broker`` (or ``all``) adds, on the broker's
  CPU (or on every CPU), a spinning process at the idle scheduling class (``SCHED_IDLE``, in a session of its
  own whose autogroup has nice 19: it runs only when nothing else wants the CPU), so a wake-up never waits for a halted virtual CPU to
  resume.
  ``--realtime`` (root only) starts the broker at ``SCHED_FIFO`` priority 1, every thread of it, and runs the
  probe at that priority while it measures, so that no other process of the machine (other users' test
  runs: a process's nice does not count across sessions when autogroups are on) delays their wake-ups; the
  writer and ZooKeeper stay at normal priority, and the kernel's real-time throttling leaves others 5%.
  ``shared``: no pinning (the scheduler places everything; the writer at ``--writer-nice``, default 0), as
  the runs before the rig were made.

Reported per line and mode: the probe's p50/p99/p99.9/max (ms), p99/p50, samples over 10 ms, the broker's
CPU share and the share of the time its event-loop thread was runnable but waiting for a CPU (runqueue
wait, /proc schedstat: CPU competition, not the broker's work), and the load average around the runs. The
target of issue 14 is about the flush not causing spikes: compare ``pool`` with ``none`` (same load, no
flush; ``p99_vs_none`` is the ratio of the p99s) and with ``loop``. A mode's own p99/p50 also moves with its
median, which load lowers: on a virtual machine a busy CPU wakes sooner than one that halted, so the idle
probe's median is the highest. ``p99_vs_idle_p50`` puts every mode's p99 over the idle median (the broker's
unloaded round trip). ``--broker-pythonpath`` runs the broker
from another checkout; ``--slow-fsync-ms`` adds that delay to every fsync of the broker
(``benchmarks.slow_disk``).

    python benchmarks/flush_latency.py [--lines 07,08] [--modes idle,none,loop,pool] [--rounds 2] [--seconds 10]
        [--write-mb-per-s 20] [--bulk-kb 64] [--flush-ms 100] [--segment-mb 64] [--rig pinned|shared]
        [--broker-cpu 0] [--keep-awake off|broker|all] [--realtime] [--writer-nice N] [--slow-fsync-ms 0]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.broker_process import start_broker, start_broker08  # noqa: E402
from tests.support.server08 import Client08, wait_for_leaders  # noqa: E402
from zkafka.launch.zookeeper_server import ZooKeeperServer  # noqa: E402
from zkafka.protocol import LATEST_TIME, v07, v08  # noqa: E402
from zkafka.protocol.produce import (  # noqa: E402
    ProduceRequestPartition,
    ProduceRequestTopic,
    ProduceRequestV0,
)
from zkafka.records import format08  # noqa: E402
from zkafka.records.message07 import build_message_set  # noqa: E402

NEVER_MS = str(2**31 - 1)  # an int on both lines: about 25 days
MODES = ("idle", "none", "loop", "pool")


def recv_exact(sock: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("broker closed the connection")
        data += chunk
    return bytes(data)


def read_frame(sock: socket.socket) -> bytes:
    return recv_exact(sock, int.from_bytes(recv_exact(sock, 4), "big"))


# -- what the two lines send ------------------------------------------------------------------------------------


def bulk_frame(line: str, size: int) -> bytes:
    """One message of ``size`` bytes to topic ``bulk``, no answer expected."""
    payload = b"w" * size
    if line == "07":
        return v07.encode_request(v07.ProducerRequest("bulk", 0, build_message_set([payload])))
    return v08.encode_request(
        _produce08("bulk", format08.build_message_set([(None, payload)]), acks=0), 1, "w"
    )


def probe_exchange(line: str) -> tuple[bytes, int]:
    """The probe's bytes and how many answer frames they get."""
    if line == "07":
        produce = v07.encode_request(v07.ProducerRequest("probe", 0, build_message_set([b"p" * 100])))
        offsets = v07.encode_request(v07.OffsetRequest("probe", 0, LATEST_TIME, 1))
        return produce + offsets, 1
    message = format08.build_message_set([(None, b"p" * 100)])
    return v08.encode_request(_produce08("probe", message, acks=1), 1, "probe"), 1


def _produce08(topic: str, message_set: bytes, acks: int):
    partition = ProduceRequestPartition(0, message_set)
    return ProduceRequestV0(acks, 5000, [ProduceRequestTopic(topic, [partition])])


# -- load and probe ---------------------------------------------------------------------------------------------


def write(port: int, line: str, mb_per_s: float, message_size: int, nice: int, stop) -> None:
    """Stream bulk requests at a steady rate until ``stop`` (in a process of its own)."""
    if nice:
        os.nice(nice)
    frame = bulk_frame(line, message_size)
    interval = len(frame) / (mb_per_s * 1e6)
    with socket.create_connection(("127.0.0.1", port)) as sock:
        next_at = time.perf_counter()
        while not stop.is_set():
            sock.sendall(frame)
            next_at += interval
            delay = next_at - time.perf_counter()
            if delay > 0:
                time.sleep(delay)


def probe(port: int, line: str, seconds: float, hz: float) -> list[float]:
    """Round trips of the line's probe exchange in milliseconds."""
    request, answers = probe_exchange(line)
    samples = []
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            start = time.perf_counter()
            sock.sendall(request)
            for _ in range(answers):
                read_frame(sock)
            samples.append((time.perf_counter() - start) * 1000)
            time.sleep(max(0.0, 1 / hz - (time.perf_counter() - start)))
    return samples


class ThreadClock:
    """CPU time and runqueue wait (ns) of a process and of its main thread, from /proc."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.started = self.read()

    def read(self) -> tuple[float, int, int]:
        with open(f"/proc/{self.pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        process_cpu_ns = (int(fields[11]) + int(fields[12])) * 1e9 / os.sysconf("SC_CLK_TCK")
        with open(f"/proc/{self.pid}/task/{self.pid}/schedstat") as handle:
            loop_cpu_ns, loop_wait_ns = (int(value) for value in handle.read().split()[:2])
        return time.monotonic_ns(), process_cpu_ns, loop_wait_ns

    def shares(self) -> dict[str, float]:
        (t0, cpu0, wait0), (t1, cpu1, wait1) = self.started, self.read()
        wall = t1 - t0
        return {"broker_cpu": (cpu1 - cpu0) / wall, "loop_runqueue_wait": (wait1 - wait0) / wall}


# -- the rig ------------------------------------------------------------------------------------------------------

SPIN = "import os\nos.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))\nwhile True:\n    pass\n"


class Rig:
    """Which CPUs the broker and the client side (this process, probe, writer, ZooKeeper) run on."""

    def __init__(self, name: str, broker_cpu: int, keep_awake: str, realtime: bool = False) -> None:
        self.name = name
        self.realtime = realtime
        self.all_cpus = os.sched_getaffinity(0)
        self.keep_awake = keep_awake
        if name == "pinned":
            if broker_cpu not in self.all_cpus or len(self.all_cpus) < 2:
                raise SystemExit(f"--rig pinned needs CPU {broker_cpu} and another one, have {self.all_cpus}")
            self.broker_cpus = {broker_cpu}
            self.client_cpus = self.all_cpus - self.broker_cpus
        else:
            self.broker_cpus = self.client_cpus = self.all_cpus
        self._spinners: list[subprocess.Popen] = []

    def describe(self) -> str:
        realtime = ", broker and probe at SCHED_FIFO 1" if self.realtime else ""
        if self.name != "pinned":
            return "shared: no CPU pinning" + realtime
        text = f"pinned: broker on CPU {sorted(self.broker_cpus)}, probe/writer/ZooKeeper on {sorted(self.client_cpus)}"
        if self.keep_awake != "off":
            text += f", SCHED_IDLE spinner on {'the broker' if self.keep_awake == 'broker' else 'every'} CPU"
        return text + realtime

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """For the whole benchmark: this process (and what it forks) on the client CPUs, the spinner if asked."""
        os.sched_setaffinity(0, self.client_cpus)
        try:
            spin_on = {"off": set(), "broker": self.broker_cpus, "all": self.all_cpus}[self.keep_awake]
            for cpu in sorted(spin_on):
                os.sched_setaffinity(0, {cpu})
                spinner = subprocess.Popen([sys.executable, "-c", SPIN], start_new_session=True)
                self._spinners.append(spinner)
                _lowest_autogroup(spinner.pid)
            os.sched_setaffinity(0, self.client_cpus)
            yield
        finally:
            for spinner in self._spinners:
                spinner.kill()
                spinner.wait()
            os.sched_setaffinity(0, self.all_cpus)

    @contextlib.contextmanager
    def probing(self) -> Iterator[None]:
        """This process (and what it starts) at real-time priority for the block with ``--realtime``."""
        if self.realtime:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
        try:
            yield
        finally:
            if self.realtime:
                os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))

    @contextlib.contextmanager
    def broker_side(self) -> Iterator[None]:
        """Processes started in this block run on the broker's CPUs (a child inherits its parent's affinity), at
        real-time priority with ``--realtime`` (and its scheduling policy)."""
        os.sched_setaffinity(0, self.broker_cpus)
        try:
            with self.probing():
                yield
        finally:
            os.sched_setaffinity(0, self.client_cpus)


def _lowest_autogroup(pid: int) -> None:
    """With autogroups on, CPU time is shared between sessions first: SCHED_IDLE alone does not make a process
    in a session of its own yield to the broker's (also a session of its own). Its session gets nice 19 too."""
    with contextlib.suppress(OSError), open(f"/proc/{pid}/autogroup", "w") as handle:
        handle.write("19")


# -- one run ------------------------------------------------------------------------------------------------------


def launcher(mode: str, slow_fsync_ms: float) -> tuple[str, ...]:
    if mode != "loop" and not slow_fsync_ms:
        return ("-m", "zkafka.cli")
    return (
        "-m",
        "benchmarks.slow_disk",
        str(slow_fsync_ms),
        *(("--fsync-on-loop",) if mode == "loop" else ()),
    )


def start(line: str, mode: str, work: str, zk: str | None, args: argparse.Namespace, rig: Rig):
    """The broker of a run: (process, port)."""
    with rig.broker_side():
        return _start(line, mode, work, zk, args)


def _start(line: str, mode: str, work: str, zk: str | None, args: argparse.Namespace):
    flush_ms = NEVER_MS if mode in ("idle", "none") else str(args.flush_ms)
    tick_ms = str(min(args.flush_ms, 100))
    segment_bytes = str(args.segment_mb << 20)
    run_with = launcher(mode, args.slow_fsync_ms)
    if line == "07":
        return start_broker(
            work,
            "127.0.0.1:1",
            1,
            launcher=run_with,
            enable_zookeeper="false",
            log_flush_interval=str(2**31 - 1),
            log_default_flush_interval_ms=flush_ms,
            log_default_flush_scheduler_interval_ms=tick_ms,
            log_file_size=segment_bytes,
            max_socket_request_bytes=str(4 << 20),
        )
    assert zk is not None
    proc, port = start_broker08(
        work,
        zk,
        1,
        launcher=run_with,
        log_flush_interval_ms=flush_ms,
        log_flush_scheduler_interval_ms=tick_ms,
        log_segment_bytes=segment_bytes,
    )
    with Client08(port) as client:
        wait_for_leaders(client, ["bulk", "probe"], timeout=30)
    return proc, port


def run_one(
    line: str, mode: str, zk: str | None, args: argparse.Namespace, rig: Rig
) -> tuple[list[float], dict]:
    """The probe's samples under load and the broker's CPU figures for one broker run."""
    with tempfile.TemporaryDirectory(dir=os.environ.get("FLUSH_BENCH_DIR")) as work:
        proc, port = start(line, mode, work, zk, args, rig)
        try:
            probe(port, line, 0.5, args.probe_hz)  # creates the 0.7 log, warms the connection path
            stop = multiprocessing.Event()
            writer = multiprocessing.Process(
                target=write,
                args=(port, line, args.write_mb_per_s, args.bulk_kb << 10, args.writer_nice, stop),
                daemon=True,
            )
            if mode != "idle":
                writer.start()
                time.sleep(1.0)
            clock = ThreadClock(proc.pid)
            with rig.probing():
                samples = probe(port, line, args.seconds, args.probe_hz)
            shares = clock.shares()
            stop.set()
            if writer.is_alive():
                writer.join(10)
        finally:
            proc.terminate()
            proc.wait(60)
    return samples, shares


# -- figures ---------------------------------------------------------------------------------------------------


def percentile(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summary(samples: list[float], shares: list[dict]) -> dict:
    ordered = sorted(samples)
    p50, p99 = percentile(ordered, 0.5), percentile(ordered, 0.99)
    return {
        "probes": len(ordered),
        "p50_ms": round(p50, 3),
        "p99_ms": round(p99, 3),
        "p999_ms": round(percentile(ordered, 0.999), 3),
        "max_ms": round(ordered[-1], 3),
        "p99_over_p50": round(p99 / p50, 1),
        "over_10ms": sum(sample > 10 for sample in ordered),
        "broker_cpu": round(sum(s["broker_cpu"] for s in shares) / len(shares), 3),
        "loop_runqueue_wait": round(sum(s["loop_runqueue_wait"] for s in shares) / len(shares), 3),
    }


@contextlib.contextmanager
def zookeeper_for(lines: list[str]) -> Iterator[str | None]:
    if "08" not in lines:
        yield None
        return
    with tempfile.TemporaryDirectory() as work, ZooKeeperServer(os.path.join(work, "zk")) as zk:
        yield zk.connect_string


def run(args: argparse.Namespace, report: Callable[[str], None] = print) -> dict:
    here = ROOT
    # The broker runs that checkout's zkafka (default: this one), and this checkout's benchmarks.
    os.environ["PYTHONPATH"] = os.pathsep.join([args.broker_pythonpath or here, here])
    lines, modes = args.lines.split(","), args.modes.split(",")
    samples = {(line, mode): [] for line in lines for mode in modes}
    shares = {(line, mode): [] for line in lines for mode in modes}
    if args.writer_nice is None:
        args.writer_nice = 10 if args.rig == "pinned" else 0
    rig = Rig(args.rig, args.broker_cpu, args.keep_awake, args.realtime)
    report(f"rig {rig.describe()}, writer nice {args.writer_nice}")
    load_before = os.getloadavg()
    with rig.running(), zookeeper_for(lines) as zk:
        for round_no in range(args.rounds):
            for line in lines:
                for mode in modes:
                    got, share = run_one(line, mode, zk if line == "08" else None, args, rig)
                    samples[line, mode] += got
                    shares[line, mode].append(share)
                    ordered = sorted(got)
                    report(
                        f"round {round_no + 1} {line} {mode}: p50 {percentile(ordered, 0.5):.2f} ms,"
                        f" p99 {percentile(ordered, 0.99):.2f} ms, max {ordered[-1]:.1f} ms,"
                        f" loop runqueue wait {share['loop_runqueue_wait']:.1%}, load {os.getloadavg()[0]:.2f}"
                    )
    results = {
        line: {mode: summary(samples[line, mode], shares[line, mode]) for mode in modes} for line in lines
    }
    for by_mode in results.values():
        for base, key, compared in (
            ("none", "p99_vs_none", ("loop", "pool")),
            ("idle", "p99_vs_idle_p50", MODES),
        ):
            if base in by_mode:
                reference = by_mode[base]["p99_ms" if base == "none" else "p50_ms"]
                for mode in compared:
                    if mode in by_mode:
                        by_mode[mode][key] = round(by_mode[mode]["p99_ms"] / reference, 2)
    return {
        "settings": {
            key: getattr(args, key)
            for key in (
                "seconds",
                "rounds",
                "write_mb_per_s",
                "bulk_kb",
                "flush_ms",
                "segment_mb",
                "writer_nice",
                "probe_hz",
            )
        }
        | {
            "rig": rig.describe(),
            "slow_fsync_ms": args.slow_fsync_ms,
            "broker_code": args.broker_pythonpath or here,
        },
        "load_average_before": [round(value, 2) for value in load_before],
        "load_average_after": [round(value, 2) for value in os.getloadavg()],
        "results": results,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", default="07,08", help="comma-separated: 07, 08")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated: idle, none, loop, pool")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--write-mb-per-s", type=float, default=20.0)
    parser.add_argument("--flush-ms", type=int, default=100)
    parser.add_argument("--segment-mb", type=int, default=64)
    parser.add_argument("--writer-nice", type=int, help="the writer's nice (default: 10 pinned, 0 shared)")
    parser.add_argument("--rig", choices=("pinned", "shared"), default="pinned")
    parser.add_argument("--broker-cpu", type=int, default=0, help="the broker's CPU in the pinned rig")
    parser.add_argument("--realtime", action="store_true", help="the broker at SCHED_FIFO priority 1 (root)")
    parser.add_argument(
        "--keep-awake",
        choices=("off", "broker", "all"),
        default="off",
        help="a SCHED_IDLE spinner on the broker's CPU or on every CPU",
    )
    parser.add_argument(
        "--bulk-kb", type=int, default=64, help="the bulk writer's message size (one a request)"
    )
    parser.add_argument("--probe-hz", type=float, default=200.0)
    parser.add_argument("--broker-pythonpath", help="run the broker from this checkout (default: this one)")
    parser.add_argument("--slow-fsync-ms", type=float, default=0, help="add this delay to every fsync")
    args = parser.parse_args()
    print(json.dumps(run(args, report=lambda text: print(text, file=sys.stderr)), indent=2))


if __name__ == "__main__":
    main()

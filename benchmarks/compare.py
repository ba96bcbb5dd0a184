"""Side-by-side throughput in one run: both lines, the native and the pure codec, zkafka's clients next to
third-party clients against the same zkafka broker.

Starts a real ZooKeeper, then for each line (0.7, 0.8) and codec (native core, pure Python:
``ZKAFKA_NO_EXTENSIONS=1`` for the broker and the clients alike) one broker as a child process on a fresh
chroot and log directory; ``zkafka perf produce`` sends MESSAGES messages of SIZE bytes, BATCH a request
(sync; 0.7 has no acks: requests stream with no answer; on 0.8 once with acks=1 and
``--max-in-flight`` requests awaiting their answers at once (max.in.flight.requests.per.connection, 5 unless
told: the new producer's default, which kafka-python keeps too; librdkafka's is 1000000; 1 is 0.8.2's Scala
producer, a round trip a request), and once with acks=0, 0.8.2's producer default, which streams as 0.7 does,
to a topic of its own), and ``zkafka perf consume`` reads them back through the high-level consumer with
1 MiB fetches. On the 0.8 line kafka-python and confluent-kafka (librdkafka) produce and consume against
a native-core broker too (``benchmarks/third_party_clients.py``). Every client runs in its own process, so
client and broker each have a core of their own. Every client moves the same MESSAGES, timed in steady state:
the clock starts once it has connected, has the metadata and has joined its group (zkafka's consumer: its
rebalance; the third-party consumers assign the partition and look its offset up first); its start-up (the
process's wall time outside that window: interpreter, imports, connect, metadata, join, close) is a column
apart. Each figure comes with its ratio to the first row of its line. Writes the table as markdown (``--markdown``) and draws it (``--chart``, needs matplotlib: the
``plot`` extra).

    python benchmarks/compare.py --messages 2000000 --markdown compare.md --chart compare.png
    python benchmarks/compare.py --lines 0.8 --codecs native --clients confluent-kafka  # some rows only
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.broker_process import start_broker, start_broker08  # noqa: E402
from zkafka.launch.zookeeper_server import ZooKeeperServer, free_port  # noqa: E402

CLI = [sys.executable, "-m", "zkafka.cli"]
LINES = ("0.7", "0.8")
CODECS = ("native", "pure")
CLIENTS = ("kafka-python", "confluent-kafka")
THIRD_PARTY = [sys.executable, os.path.join(ROOT, "benchmarks", "third_party_clients.py")]
FETCH_SIZE = 1024 * 1024
SOCKET_BUFFER = str(1024 * 1024)  # every client's and the broker's socket buffers: 0.7's 100 KB default
# holds four 25 KB produce requests, and producer and broker then wait on each other
PRODUCER_BUFFER = {"0.7": f"buffer.size={SOCKET_BUFFER}", "0.8": f"send.buffer.bytes={SOCKET_BUFFER}"}


@dataclass
class Row:
    line: str
    client: str
    codec: str
    produce: float | None = None  # messages/s
    consume: float | None = None
    produce_cpu: float | None = None  # CPU microseconds per message, client and broker together
    produce0: float | None = None  # 0.8 line: produce with acks=0 (messages/s)
    produce0_cpu: float | None = None
    consume_cpu: float | None = None
    startup: dict[str, float] = field(default_factory=dict)  # seconds outside the timed window, by figure
    note: str = ""


def codec_env(codec: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("ZKAFKA_NO_EXTENSIONS", None)
    if codec == "pure":
        env["ZKAFKA_NO_EXTENSIONS"] = "1"
    return env


def cpu_seconds(pid: int) -> float:
    """User and system CPU time a process has used so far."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_json(
    command: list[str], env: dict[str, str], broker: Broker, expect: int | None = None
) -> tuple[float, float, float]:
    """Run a client printing JSON; (its messages/s in steady state, the CPU microseconds client and broker
    spent per message, its start-up: the seconds of its process outside the timed window). ``expect``: the
    messages it must have read."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    broker_before = cpu_seconds(broker.proc.pid)
    began = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900, cwd=ROOT)
    wall = time.perf_counter() - began
    broker_cpu = cpu_seconds(broker.proc.pid) - broker_before
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode:
        raise RuntimeError(f"{' '.join(command[:6])}...: {result.stderr.strip()[-800:]}")
    out = json.loads(result.stdout.strip().splitlines()[-1])
    messages = out.get("total_messages", out.get("messages"))
    if expect is not None and messages != expect:
        raise RuntimeError(f"{' '.join(command[:6])}...: read {messages} of {expect} messages")
    client_cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    startup = wall - out.get("elapsed_s", out.get("seconds", 0.0))
    return out["messages_per_sec"], (client_cpu + broker_cpu) * 1e6 / messages, startup


def best(runs: int, measure) -> tuple[float, float, float]:
    """The fastest of ``runs`` measurements (messages/s, CPU microseconds per message, start-up s)."""
    return max(measure() for _ in range(runs))


def record(row: Row, figure: str, measured: tuple[float, float, float]) -> None:
    """Set ``row``'s rate and CPU of ``figure`` (produce, produce0, consume) and its start-up."""
    rate, cpu, startup = measured
    setattr(row, figure, rate)
    setattr(row, f"{figure}_cpu", cpu)
    row.startup[figure] = startup


class Broker:
    """One broker child of a line, with the codec of its row, on its own chroot and log directory."""

    def __init__(self, work: str, zk: str, line: str, codec: str, message_format: str | None = None) -> None:
        name = f"broker{line.replace('.', '')}-{codec}"
        self.zk_connect = f"{zk}/{name}"
        _create_chroot(zk, name)
        saved = dict(os.environ)
        os.environ.clear()
        os.environ.update(codec_env(codec))  # the child inherits the codec choice
        try:
            if line == "0.7":
                self.proc, self.port = start_broker(
                    work, self.zk_connect, 1, name=name, socket_receive_buffer=SOCKET_BUFFER
                )
            else:
                formats = {} if message_format is None else {"log_message_format_version": message_format}
                self.proc, self.port = start_broker08(
                    work, self.zk_connect, 1, name=name, socket_receive_buffer_bytes=SOCKET_BUFFER, **formats
                )
        finally:
            os.environ.clear()
            os.environ.update(saved)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _create_chroot(zk: str, path: str) -> None:
    from zkafka.zk.client import make_zk_client, start_zk_client

    client = start_zk_client(make_zk_client(f"{zk}/{path}"))
    client.stop()
    client.close()


def zkafka_rows(work: str, zk: str, line: str, codec: str, opts) -> Row:
    broker = Broker(work, zk, line, codec, opts.message_format)
    env = codec_env(codec)
    try:
        brokers = f"0:127.0.0.1:{broker.port}" if line == "0.7" else f"127.0.0.1:{broker.port}"
        produced = 0

        def produce(acks: str | None = None, messages: int = opts.messages) -> tuple[float, float, float]:
            nonlocal produced
            acks_option = [] if acks is None else ["--request-required-acks", acks]
            if acks is None and line == "0.8" and opts.max_in_flight > 1:
                acks_option += ["--max-in-flight", str(opts.max_in_flight)]
            measured = run_json(
                [*CLI, "perf", "produce", "--broker-list", brokers, "--topic", f"perf{acks or ''}"]
                + ["--messages", str(messages), "--message-size", str(opts.size)]
                + ["--batch-size", str(opts.batch), "--producer-property", PRODUCER_BUFFER[line]]
                + [*acks_option, "--json", "--no-progress"],
                env,
                broker,
            )
            produced += messages if acks is None else 0  # acks=0 goes to topic perf0
            return measured

        if line == "0.8":  # the topics exist before the clock starts, as the third-party clients' do (a
            # new topic's first Metadata answer is LEADER_NOT_AVAILABLE: a retry.backoff.ms wait)
            produce(messages=1)
            produce("0", messages=1)

        def consume() -> tuple[float, float, float]:
            # perf consume ends at --messages, or after 5 s without one: a short read shows in its rate
            return run_json(
                [*CLI, "perf", "consume", "--zookeeper", broker.zk_connect, "--topic", "perf"]
                + ["--line", line, "--threads", "1", "--fetch-size", str(FETCH_SIZE)]
                + ["--messages", str(produced), "--json", "--no-progress"],
                env,
                broker,
                expect=produced,
            )

        row = Row(line, "zkafka", codec)
        record(row, "produce", best(opts.runs, produce))
        if line == "0.8":
            record(row, "produce0", best(opts.runs, lambda: produce("0")))
        record(row, "consume", best(opts.runs, consume))
        return row
    finally:
        broker.stop()


def third_party_row(work: str, zk: str, client: str, opts) -> Row:
    row = Row("0.8", client, "-")
    module = {"kafka-python": "kafka", "confluent-kafka": "confluent_kafka"}[client]
    if importlib.util.find_spec(module) is None:
        row.note = f"not installed (pip install {client})"
        return row
    broker = Broker(work, zk, "0.8", f"native-{client}")
    env = codec_env("native")
    common = ["--port", str(broker.port), "--topic", "perf", "--messages", str(opts.messages)]
    produce = [*THIRD_PARTY, client, "produce", *common, "--message-size", str(opts.size)]
    produce += ["--batch-size", str(opts.batch)]
    produce0 = [*produce, "--acks", "0", "--topic", "perf0"]  # the last --topic counts
    try:
        record(row, "produce", best(opts.runs, lambda: run_json(produce, env, broker)))
        record(row, "produce0", best(opts.runs, lambda: run_json(produce0, env, broker)))
        consume = [*THIRD_PARTY, client, "consume", *common]
        record(row, "consume", best(opts.runs, lambda: run_json(consume, env, broker)))
    except (RuntimeError, subprocess.TimeoutExpired) as err:
        row.note = f"failed: {str(err).splitlines()[-1][:160]}"
    finally:
        broker.stop()
    return row


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as handle:
            cpu = next(line.split(":", 1)[1].strip() for line in handle if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return (
        f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}"
    )


def fmt_rate(rate: float | None, first: float | None) -> str:
    if rate is None:
        return "-"
    ratio = f" ({rate / first:.2f}x)" if first else ""
    return f"{rate / 1e6:.2f} M{ratio}"


def fmt_cpu(micros: float | None) -> str:
    return "-" if micros is None else f"{micros:.2f}"


def fmt_startup(row: Row) -> str:
    return " / ".join(
        f"{row.startup[f]:.2f}" if f in row.startup else "-" for f in ("produce", "produce0", "consume")
    )


def load_average() -> str:
    try:
        with open("/proc/loadavg") as handle:
            return handle.read().split()[0]
    except OSError:
        return "?"


def markdown(rows: list[Row], opts, loads: tuple[str, str]) -> str:
    lines = [
        f"{opts.size}-byte messages, one broker, loopback; produce: batches of {opts.batch}, sync (0.7: no "
        "acks, requests stream; 0.8: acks=1 with max.in.flight.requests.per.connection="
        f"{opts.max_in_flight} for zkafka ({'a round trip a request' if opts.max_in_flight == 1 else 'requests pipelined'}; "
        "the third-party clients keep their defaults: kafka-python 5, librdkafka 1000000), and acks=0, 0.8.2's "
        "producer default, streaming as 0.7 does); consume: 1 MiB fetches. Messages per second in steady state (after "
        "connect, metadata and group join), ratio to the first row of the line; best of "
        f"{opts.runs} run(s); {opts.messages:,} messages every run of every client; start-up apart (seconds: the "
        "client process's wall time outside the timed window); 1 MiB socket buffers; broker logs in "
        f"{opts.log_root or 'a temporary directory'}.",
        f"Machine: {machine()}; 1-minute load average {loads[0]} when the run began, {loads[1]} when it "
        "ended (CPU µs/msg: client and broker CPU time per message, process starts included, which "
        "other work on the machine does not inflate).",
        "",
        "| line | client | codec | produce msg/s (0.8: acks=1) | produce acks=0 msg/s | consume msg/s "
        "| produce CPU µs/msg | produce acks=0 CPU µs/msg | consume CPU µs/msg "
        "| start-up s: produce / acks=0 / consume | note |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    firsts: dict[str, Row] = {}
    for row in rows:
        first = firsts.setdefault(row.line, row)
        lines.append(
            f"| {row.line} | {row.client} | {row.codec} | {fmt_rate(row.produce, first.produce)} "
            f"| {fmt_rate(row.produce0, first.produce0)} | {fmt_rate(row.consume, first.consume)} "
            f"| {fmt_cpu(row.produce_cpu)} | {fmt_cpu(row.produce0_cpu)} | {fmt_cpu(row.consume_cpu)} "
            f"| {fmt_startup(row)} | {row.note} |"
        )
    return "\n".join(lines) + "\n"


def chart(rows: list[Row], path: str, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r.line} {r.client}" + (f" ({r.codec})" if r.codec != "-" else "") for r in rows]
    fig, ax = plt.subplots(figsize=(9, 0.8 * len(rows) + 1.6))
    ys = range(len(rows))
    height = 0.27
    bars_of = (
        (-height, "produce", "produce (0.8: acks=1)", "#4c72b0"),
        (0.0, "produce0", "produce acks=0 (0.8)", "#55a868"),
        (height, "consume", "consume", "#dd8452"),
    )
    for shift, key, label, colour in bars_of:
        values = [(getattr(r, key) or 0) / 1e6 for r in rows]
        bars = ax.barh([y + shift for y in ys], values, height, label=label, color=colour)
        texts = ["" if getattr(r, key) is None else f"{v:.2f}" for r, v in zip(rows, values, strict=True)]
        ax.bar_label(bars, labels=texts, padding=2, fontsize=8)  # no "0.00" where a line has no such figure
    ax.set_yticks(list(ys), labels)
    ax.invert_yaxis()
    ax.set_xlabel("million messages per second")
    ax.set_title(title, fontsize=9)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=2_000_000, help="every client's, every run")
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--runs", type=int, default=1, help="runs of each figure; the best is kept")
    parser.add_argument(
        "--max-in-flight",
        type=int,
        default=5,
        help="zkafka 0.8 acks=1 rows: max.in.flight.requests.per.connection (1: 0.8.2's one request at a time)",
    )
    parser.add_argument("--lines", default=",".join(LINES))
    parser.add_argument("--codecs", default=",".join(CODECS), help="zkafka rows: native, pure or both")
    parser.add_argument(
        "--clients", default=",".join(CLIENTS), help="third-party clients, 0.8 line (an empty value: none)"
    )
    parser.add_argument(
        "--log-root",
        default="/dev/shm" if os.path.isdir("/dev/shm") else None,
        help="where the brokers' logs go (default /dev/shm: memory, so that no disk's fsync is measured)",
    )
    parser.add_argument(
        "--message-format",
        help="the 0.8 broker's log.message.format.version (e.g. 2.2: record batches; default 0.8.2's magic 0)",
    )
    parser.add_argument("--markdown", help="write the table here")
    parser.add_argument("--chart", help="draw the table into this PNG")
    opts = parser.parse_args()
    for option, known in (("lines", LINES), ("codecs", CODECS), ("clients", CLIENTS)):
        unknown = set(filter(None, getattr(opts, option).split(","))) - set(known)
        if unknown:
            parser.error(f"--{option}: unknown {', '.join(sorted(unknown))} (choose from {', '.join(known)})")

    work = tempfile.mkdtemp(prefix="zkafka-compare-", dir=opts.log_root)
    zookeeper = ZooKeeperServer(os.path.join(work, "zk"), port=free_port())
    zookeeper.start()
    rows: list[Row] = []
    began_load = load_average()
    try:
        zk = f"127.0.0.1:{zookeeper.port}"
        for line in opts.lines.split(","):
            for codec in filter(None, opts.codecs.split(",")):
                rows.append(zkafka_rows(work, zk, line, codec, opts))
                print(rows[-1], flush=True)
            if line == "0.8":
                for client in filter(None, opts.clients.split(",")):
                    rows.append(third_party_row(work, zk, client, opts))
                    print(rows[-1], flush=True)
    finally:
        zookeeper.stop()
        shutil.rmtree(work, ignore_errors=True)
    table = markdown(rows, opts, (began_load, load_average()))
    print(table)
    if opts.markdown:
        with open(opts.markdown, "w") as handle:
            handle.write(table)
    if opts.chart:
        chart(rows, opts.chart, f"zkafka, {opts.size}-byte messages, one broker, loopback ({machine()})")


if __name__ == "__main__":
    main()

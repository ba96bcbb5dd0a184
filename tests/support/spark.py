"""Helpers for the Spark tests: the session settings, raw PRODUCE requests of both lines with the rows they
should become (computed independently of the source), and DataFrames read back as sorted tuples."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.server08 import Client08, produce_request, wait_for_leaders
from tests.support.wire import Producer
from zkafka.protocol.v07 import ProducerRequest, encode_request
from zkafka.records.format08 import build_message_set as build_message_set08
from zkafka.records.message07 import build_message_set
from zkafka.utils import wait_until

ROOT = Path(__file__).resolve().parents[2]

# The columns every source test compares.
COLUMNS = ["topic", "broker", "partition", "value", "offset", "nextOffset"]

TEST_SPARK_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.driver.memory": "1g",
    # C1 only: the JVM starts in ~6 s instead of ~10 s on two cores; test data is small.
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1",
}


class RawProducer(Producer):
    """PRODUCE requests over one plain socket; each send waits until the broker shows the new log end."""

    def send(self, topic: str, partition: int, payloads: list[bytes], codec: int = 0) -> list[tuple]:
        """Append one message set; returns the expected rows ``(value, offset, nextOffset)``."""
        start = self.offset(topic, partition)
        data = build_message_set(payloads, codec)
        self.sock.sendall(encode_request(ProducerRequest(topic, partition, data)))
        end = start + len(data)
        wait_until(lambda: self.offset(topic, partition) == end, 10, message=f"{topic}-{partition} end {end}")
        return expected_rows(payloads, codec, start)


def expected_rows(payloads: list[bytes], codec: int, start: int) -> list[tuple]:
    """(value, offset, nextOffset) of the messages of one produced set, from the 0.7 layout rules."""
    if codec:
        end = start + len(build_message_set(payloads, codec))
        return [(p, start, start) for p in payloads[:-1]] + [(payloads[-1], start, end)]
    rows, pos = [], start
    for p in payloads:
        nxt = pos + 4 + 6 + len(p)
        rows.append((p, pos, nxt))
        pos = nxt
    return rows


def loader_command(
    connection: list[str], topics: str, out, exit_at: str | None = None
) -> tuple[list[str], dict[str, str]]:
    """Arguments and environment of ``zkafka spark load`` (``connection``: ``["-z", zk]`` or ``["-b",
    brokers]``), told by the loader's test hook to exit at ``exit_at`` ("before-publish", "after-publish")."""
    from zkafka.spark.loader import EXIT_HOOK_ENV

    env = {k: v for k, v in os.environ.items() if k != EXIT_HOOK_ENV}
    if exit_at:
        env[EXIT_HOOK_ENV] = exit_at
    args = [sys.executable, "-m", "zkafka.cli", "spark", "load", *connection, "-t", topics, "-o", str(out)]
    for key, value in TEST_SPARK_CONF.items():
        args += ["--conf", f"{key}={value}"]
    return args, env


def run_loader_cli(
    connection: list[str], topics: str, out, exit_at: str | None
) -> subprocess.CompletedProcess:
    """``zkafka spark load`` run to its end in a child process (see ``loader_command``)."""
    args, env = loader_command(connection, topics, out, exit_at)
    return subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=150)


def visible_files(out: Path) -> list[Path]:
    """Data files a reader of ``out`` sees (Spark skips names starting with _ or .)."""
    return [
        p
        for p in out.rglob("*")
        if p.is_file() and not any(part.startswith(("_", ".")) for part in p.relative_to(out).parts)
    ]


def collect_rows(df, columns: list[str]) -> list[tuple]:
    """The rows of a DataFrame as sorted tuples (binary as bytes: Spark 4.0 returns bytearray)."""
    return sorted(
        tuple(bytes(v) if isinstance(v, bytearray) else v for v in row)
        for row in df.select(*columns).collect()
    )


def loaded_rows(spark, out) -> list[tuple]:
    """The rows a batch wrote as Parquet under ``out``."""
    return collect_rows(spark.read.parquet(str(out)), COLUMNS)


# -- the 0.8 line --------------------------------------------------------------------------------------------

# The columns of Spark's Kafka source that 0.8 source tests compare.
COLUMNS08 = ["topic", "partition", "offset", "key", "value"]


class RawProducer08(Client08):
    """Produce requests (acks=1) over one plain 0.8 socket; the broker's answer says the offsets assigned."""

    def produce(
        self, topic: str, partition: int, pairs: list[tuple[bytes | None, bytes | None]], codec: int = 0
    ) -> list[tuple]:
        """Append one message set; the expected rows ``(topic, partition, offset, key, value)``."""
        answer = self.call(produce_request(topic, partition, build_message_set08(pairs, codec)))
        (result,) = answer.topics[0].partitions
        assert result.error == 0, f"produce to {topic}-{partition}: error {result.error}"
        return [(topic, partition, result.offset + i, k, v) for i, (k, v) in enumerate(pairs)]


def leader_port(brokers, topic: str, partition: int) -> int:
    """The port of the partition's leader, as the cluster's metadata says now."""
    with Client08(brokers[0].port) as client:
        (answer,) = wait_for_leaders(client, [topic])
    leader = next(p.leader for p in answer.partitions if p.partition == partition)
    return next(b.port for b in brokers if b.server.broker_id == leader)


def produce08(brokers, topic: str, partition: int, pairs: list, codec: int = 0) -> list[tuple]:
    """One message set to the partition's leader; the expected rows (see ``RawProducer08.produce``)."""
    with RawProducer08(leader_port(brokers, topic, partition)) as producer:
        return producer.produce(topic, partition, pairs, codec)

"""Helpers for the Spark tests: the session settings, raw PRODUCE requests with the rows they should become
(computed independently of the source), and DataFrames read back as sorted tuples."""

from __future__ import annotations

from tests.support.wire import Producer
from zkafka.protocol.v07 import ProducerRequest, encode_request
from zkafka.records.message import build_message_set
from zkafka.utils import wait_until

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


def collect_rows(df, columns: list[str]) -> list[tuple]:
    """The rows of a DataFrame as sorted tuples (binary as bytes: Spark 4.0 returns bytearray)."""
    return sorted(
        tuple(bytes(v) if isinstance(v, bytearray) else v for v in row)
        for row in df.select(*columns).collect()
    )


def loaded_rows(spark, out) -> list[tuple]:
    """The rows a batch wrote as Parquet under ``out``."""
    return collect_rows(spark.read.parquet(str(out)), COLUMNS)

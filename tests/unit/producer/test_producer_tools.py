"""Console-producer line handling and the perf tool's payloads and report formats."""

from __future__ import annotations

import os
import threading

import gevent

from zkafka.producer.console import read_lines, split_key
from zkafka.tools.producer_performance import CSV_HEADER, PerfOptions, PerfResult, format_time, payloads


def test_split_key_takes_the_text_before_the_first_separator():
    assert split_key(b"user-1:hello:world", b":") == ("user-1", b"hello:world")
    assert split_key(b"no separator", b":") == (None, b"no separator")
    assert split_key(b"k\tv", b"\t") == ("k", b"v")
    assert split_key(b"\xff\xfe:v", b":") == (b"\xff\xfe", b"v")  # not UTF-8: a bytes key
    assert split_key(b"a:b", None) == (None, b"a:b")


def test_read_lines_from_a_pipe_while_other_greenlets_run():
    read_fd, write_fd = os.pipe()
    ticks = []

    def ticker():
        while True:
            ticks.append(1)
            gevent.sleep(0.01)

    def writer():
        for chunk in (b"one\ntw", b"o\r\n", b"three"):
            os.write(write_fd, chunk)
            threading.Event().wait(0.05)
        os.close(write_fd)

    tick = gevent.spawn(ticker)
    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert list(read_lines(read_fd)) == [b"one", b"two", b"three"]
    finally:
        thread.join()
        tick.kill()
        os.close(read_fd)
    assert len(ticks) >= 5  # the hub kept running while the reader waited


def test_read_lines_from_a_file(tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\n\nb\n")
    with open(path, "rb") as handle:
        assert list(read_lines(handle.fileno(), chunk_size=2)) == [b"a", b"", b"b"]


def test_payloads_fixed_size_batches():
    options = PerfOptions(topic="t", messages=450, message_size=100, batch_size=200)
    sizes = [len(batch) for batch in payloads(options, 450, 0)]
    assert sizes == [200, 200, 50]
    assert all(p == bytes(100) for batch in payloads(options, 450, 0) for p in batch)


def test_payloads_with_message_ids_and_varied_sizes():
    options = PerfOptions(topic="t", messages=5, message_size=16, batch_size=2, initial_message_id=100)
    flat = [p for batch in payloads(options, 5, 10) for p in batch]
    assert flat[0] == b"0000000110xxxxxx" and flat[4] == b"0000000114xxxxxx"
    varied = PerfOptions(topic="t", messages=500, message_size=50, vary_message_size=True)
    lengths = {len(p) for batch in payloads(varied, 500, 0) for p in batch}
    assert min(lengths) >= 1 and max(lengths) <= 50 and len(lengths) > 10


def test_report_line_has_the_kafka_columns():
    result = PerfResult(
        start_ms=1_000_000_000_123,
        end_ms=1_000_000_002_123,
        compression=1,
        message_size=100,
        batch_size=200,
        total_bytes=100 * 1_000_000,
        total_messages=1_000_000,
        elapsed_s=2.0,
        mode="sync",
        threads=1,
    )
    assert len(CSV_HEADER.split(", ")) == 9
    fields = result.csv_line().split(", ")
    assert fields[0] == format_time(1_000_000_000_123) and fields[0].endswith(":123")
    assert fields[2:] == ["1", "100", "200", "95.37", "47.6837", "1000000", "500000.0000"]
    data = result.to_json()
    assert data["messages_per_sec"] == 500000.0 and data["compression_name"] == "gzip"

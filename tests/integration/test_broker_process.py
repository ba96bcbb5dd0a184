"""Brokers started with the CLI as child processes: clean shutdown, kill -9 and recovery, tools."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading

import pytest

from tests.support.brokers import pid_alive
from tests.support.wire import connect, round_trip
from zkafka.protocol.v07 import (
    FetchRequest,
    OffsetRequest,
    ProducerRequest,
    decode_offsets_response,
    encode_request,
)
from zkafka.records.format07 import iter_messages
from zkafka.records.message07 import build_message_set
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration


def wait_registered(zk_client, broker_id, timeout=30.0):
    wait_until(lambda: zk_client.exists(f"/brokers/ids/{broker_id}"), timeout, message="broker registered")


def latest(port, topic="t", partition=0):
    with connect(port) as sock:
        return decode_offsets_response(round_trip(sock, OffsetRequest(topic, partition, -1, 1))[1])[0]


def read_all(port, topic="t", partition=0, end=None):
    """Every payload from offset 0 up to ``end`` (default: the first empty fetch)."""
    payloads, offset = [], 0
    with connect(port) as sock:
        while end is None or offset < end:
            error, body = round_trip(sock, FetchRequest(topic, partition, offset, 1 << 20))
            assert error == 0
            batch = list(iter_messages(body, offset))
            if not batch:
                break
            payloads += [m.payload for m, _ in batch]
            offset = batch[-1].offset
    return payloads


def segment_path(tmp_path, broker_id=0, topic="t", partition=0):
    return tmp_path / f"broker-{broker_id}" / f"{topic}-{partition}" / "00000000000000000000.kafka"


def test_sigterm_is_a_clean_shutdown_and_skips_recovery(broker_process, zk_client, tmp_path):
    broker = broker_process(0)
    wait_registered(zk_client, 0)
    data = build_message_set([b"one", b"two"])
    with connect(broker.port) as sock:
        sock.sendall(encode_request(ProducerRequest("t", 0, data)))
    wait_until(lambda: latest(broker.port) == len(data))
    broker.signal(signal.SIGTERM)
    assert broker.wait() == 0
    assert (tmp_path / "broker-0" / ".kafka_cleanshutdown").exists()
    assert zk_client.exists("/brokers/ids/0") is None

    # bytes appended behind the broker's back survive a clean restart: recovery was skipped
    with open(segment_path(tmp_path), "ab") as segment:
        segment.write(b"\x00\x00\x00\x09torn")
    broker = broker_process(0)
    wait_registered(zk_client, 0)
    assert not (tmp_path / "broker-0" / ".kafka_cleanshutdown").exists()
    assert segment_path(tmp_path).stat().st_size == len(data) + 8


def test_kill_9_mid_stream_then_restart_keeps_every_flushed_message(broker_process, zk_client, tmp_path):
    broker = broker_process(0)
    wait_registered(zk_client, 0)
    stop = threading.Event()
    sent = []

    def produce_forever():
        with connect(broker.port) as sock:
            i = 0
            while not stop.is_set():
                payloads = [f"m{i + k}".encode() for k in range(20)]
                try:
                    sock.sendall(encode_request(ProducerRequest("t", 0, build_message_set(payloads))))
                except OSError:
                    return
                sent.extend(payloads)
                i += 20

    producer = threading.Thread(target=produce_forever)
    producer.start()
    try:
        wait_until(lambda: latest(broker.port) > 20000, timeout=30, message="20 kB flushed")
        flushed_before_kill = read_all(broker.port, end=latest(broker.port))
        broker.proc.kill()
        broker.wait()
    finally:
        stop.set()
        producer.join()
    assert not (tmp_path / "broker-0" / ".kafka_cleanshutdown").exists()

    # a torn write at the tail, as a crash in the middle of an append leaves it
    valid_size = segment_path(tmp_path).stat().st_size
    with open(segment_path(tmp_path), "ab") as segment:
        segment.write(build_message_set([b"torn-message"])[:-5])

    wait_until(lambda: zk_client.exists("/brokers/ids/0") is None, timeout=30, message="old session gone")
    broker = broker_process(0)
    wait_registered(zk_client, 0)
    assert "truncat" in broker.log_text().lower()
    assert segment_path(tmp_path).stat().st_size <= valid_size
    after = read_all(broker.port)
    assert after[: len(flushed_before_kill)] == flushed_before_kill
    assert after == sent[: len(after)]  # nothing reordered, no gap, no garbage

    result = subprocess.run(
        [sys.executable, "-m", "zkafka.cli", "dump-log-segments", "--noprint", str(segment_path(tmp_path))],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("isvalid: true") == len(after)


def test_dump_log_segments_reports_where_a_segment_stops_being_valid(tmp_path):
    good = build_message_set([b"alpha", b"beta"])
    path = tmp_path / "00000000000000000100.kafka"
    path.write_bytes(good + build_message_set([b"gamma"])[:-2])
    result = subprocess.run(
        [sys.executable, "-m", "zkafka.cli", "dump-log-segments", str(path)], capture_output=True, text=True
    )
    assert result.returncode == 1
    assert "Starting offset: 100" in result.stdout
    assert "offset: 100 isvalid: true" in result.stdout and "payload:\talpha" in result.stdout
    assert f"tail of the log is at offset: {100 + len(good)}" in result.stdout
    assert f"entry at offset {100 + len(good)}" in result.stderr

    compressed = tmp_path / "00000000000000000000.kafka"
    compressed.write_bytes(build_message_set([b"x", b"y"], codec=2))
    result = subprocess.run(
        [sys.executable, "-m", "zkafka.cli", "dump-log-segments", "--deep", str(compressed)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0
    assert "compresscodec: SnappyCompressionCodec" in result.stdout
    assert result.stdout.count("compresscodec: NoCompressionCodec") == 2


def test_bad_config_value_stops_the_start_naming_the_key(tmp_path):
    props = tmp_path / "server.properties"
    props.write_text(f"brokerid=0\nlog.dir={tmp_path}\nenable.zookeeper=false\nlog.file.size=ten\n")
    result = subprocess.run(
        [sys.executable, "-m", "zkafka.cli", "broker", "start", str(props)], capture_output=True, text=True
    )
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "log.file.size" in lines[0]


def test_duplicate_broker_id_fails_in_one_line(broker_process, zk_client):
    first = broker_process(7)
    wait_registered(zk_client, 7)
    second = broker_process(7)
    assert second.wait(30) == 1
    assert "broker id 7 is already registered" in second.log_text()
    assert pid_alive(first.proc.pid) and first.proc.poll() is None

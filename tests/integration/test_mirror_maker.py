"""MirrorMaker between two clusters (two ZooKeeper chroots, a broker each), as a real child process."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections import Counter

import pytest

from tests.support.wire import connect
from zkafka.consumer.simple07 import SimpleConsumer
from zkafka.protocol import LATEST_TIME
from zkafka.protocol.v07 import ProducerRequest, encode_request
from zkafka.records.format07 import iter_messages
from zkafka.records.message07 import build_message_set
from zkafka.utils import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def produce_gzip_sets(port, first, sets, per_set=10, topic="mirrored"):
    """Gzip wrappers of ``per_set`` messages, round-robin over the 4 partitions; returns the wrappers' bytes."""
    wrappers = []
    with connect(port) as sock:
        for i in range(first, first + sets):
            data = build_message_set([f"m{i}-{k}".encode() for k in range(per_set)], codec=1)
            sock.sendall(encode_request(ProducerRequest(topic, i % 4, data)))
            wrappers.append(data)
    return wrappers


def read_target(port, topic="mirrored", deep=True):
    """Every message on the target broker: payloads (deep) or whole wrapper entries (shallow)."""
    found = []
    with SimpleConsumer("127.0.0.1", port) as consumer:
        for partition in range(4):
            end = consumer.get_offsets_before(topic, partition, LATEST_TIME, 1)[0]
            offset = 0
            while offset < end:
                messages = consumer.fetch(topic, partition, offset, 1 << 20)
                batch = list(iter_messages(messages.buffer, offset, deep=deep))
                if not batch:
                    break
                found += [m.payload if deep else m.to_entry() for m, _ in batch]
                offset = batch[-1].offset
    return found


def start_mirror(tmp_path, source_zk, target_zk, name):
    consumer = tmp_path / f"{name}-consumer.properties"
    consumer.write_text(
        f"zk.connect={source_zk}\ngroupid=mirror\nautooffset.reset=smallest\nzk.sessiontimeout.ms=3000\n"
        "rebalance.backoff.ms=1500\nfetcher.backoff.ms=50\n"
    )
    producer = tmp_path / f"{name}-producer.properties"
    producer.write_text(f"zk.connect={target_zk}\nproducer.type=sync\n")
    log = open(tmp_path / f"{name}.log", "wb")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "zkafka.cli",
            "mirror-maker",
            "--consumer-config",
            str(consumer),
            "--producer-config",
            str(producer),
            "--whitelist",
            "mirrored",
            "--batch-size",
            "20",
            "--report-interval",
            "1",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    log.close()
    return proc


def test_mirror_copies_gzip_wrappers_byte_identical_and_survives_kill_9(
    start_broker, zk_connect, target_zk, tmp_path
):
    source = start_broker(0)
    target = start_broker(1, zk=target_zk)
    wrappers = produce_gzip_sets(source.port, 0, 40)
    expected = [f"m{i}-{k}".encode() for i in range(40) for k in range(10)]
    mirror = start_mirror(tmp_path, zk_connect, target_zk, "first")
    try:
        wait_until(lambda: len(read_target(target.port)) >= len(expected), timeout=60, message="mirrored")
        assert Counter(read_target(target.port)) == Counter(expected)
        # each wrapper crossed as it was: same compressed bytes, same CRC
        assert sorted(read_target(target.port, deep=False)) == sorted(wrappers)

        # kill -9 in the middle of a stream of more data, then restart
        more = produce_gzip_sets(source.port, 40, 200)
        wait_until(
            lambda: len(read_target(target.port)) > len(expected), timeout=60, message="mirroring again"
        )
        mirror.kill()
        mirror.wait(10)
    finally:
        if mirror.poll() is None:
            mirror.kill()
            mirror.wait(10)
    expected += [f"m{i}-{k}".encode() for i in range(40, 240) for k in range(10)]
    produce_gzip_sets(source.port, 240, 20)
    expected += [f"m{i}-{k}".encode() for i in range(240, 260) for k in range(10)]
    assert len(more) == 200

    mirror = start_mirror(tmp_path, zk_connect, target_zk, "second")
    try:
        wait_until(lambda: set(expected) <= set(read_target(target.port)), timeout=90, message="all mirrored")
        copies = Counter(read_target(target.port))
        assert set(copies) == set(expected)
        duplicated = [p for p, n in copies.items() if n > 1]
        # at most the batch in hand when the mirror died is sent twice (20 wrappers of 10 messages)
        assert len(duplicated) <= 20 * 10
        mirror.send_signal(signal.SIGHUP)  # the terminal closed: a clean stop, as SIGTERM and Ctrl-C (one handler)
        assert mirror.wait(30) == 0
        assert "mirrored" in (tmp_path / "second.log").read_text()
    finally:
        if mirror.poll() is None:
            mirror.kill()
            mirror.wait(10)

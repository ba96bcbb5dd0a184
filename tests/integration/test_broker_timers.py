"""The running broker's scheduled work and its halt: the retention cleaner, the time-based flusher, and the
stop of the process on an I/O error on the log (0.7 halts rather than serve a broken log).

The test brokers elsewhere flush on every append and never reach their first cleanup; these override that.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.support.logs import set_mtime
from tests.support.wire import Producer, connect, fetch
from zkafka.log.log07 import segment_file_name
from zkafka.protocol.v07 import ProducerRequest, encode_request
from zkafka.records.message07 import build_message_set
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration

OFFSET_OUT_OF_RANGE = 1
TWO_HOURS_MS = 2 * 3600 * 1000
HALT_LINE = "I/O error on the log of broker 0, halting"


def partition_dir(tmp_path: Path, topic: str, broker_id: int = 0) -> Path:
    return tmp_path / f"broker-{broker_id}" / f"{topic}-0"


def segment_names(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.is_file())


def age(path: Path) -> None:
    """Make a segment look last written two hours ago (past a one-hour retention)."""
    set_mtime(path, int(time.time() * 1000) - TWO_HOURS_MS)


def test_retention_deletes_an_expired_segment_while_the_broker_runs(start_broker, tmp_path):
    small = {"zk": None, "log_file_size": "20", "log_retention_hours": "1"}
    broker = start_broker(0, **small)
    sets = [[b"first-%d" % i for i in range(3)], [b"second, past the segment size"], [b"third"]]
    with Producer(broker.port) as producer:
        ends = [producer.send("r", 0, payloads) for payloads in sets]
    broker.stop()
    directory = partition_dir(tmp_path, "r")
    assert segment_names(directory) == [segment_file_name(s) for s in (0, ends[0], ends[1])]
    for start in (0, ends[0]):
        age(directory / segment_file_name(start))

    broker = start_broker(0, log_cleanup_initial_delay_ms="200", **small)
    wait_until(
        lambda: segment_names(directory) == [segment_file_name(ends[1])], message="old segments deleted"
    )
    with Producer(broker.port) as producer:
        assert producer.earliest("r", 0) == ends[1]
        assert producer.log_end("r", 0) == ends[2]
    assert fetch(broker.port, "r", 0, 0)[0] == OFFSET_OUT_OF_RANGE
    assert fetch(broker.port, "r", 0, ends[1]) == (0, [b"third"])


def test_the_time_based_flusher_makes_appends_visible_and_nothing_else_does(start_broker, tmp_path):
    broker = start_broker(
        0,
        zk=None,
        log_flush_interval="100000",  # never by count
        log_default_flush_interval_ms="3600000",  # topic "slow": not within the test
        topic_flush_intervals_ms="fast:300",
    )
    slow, fast = build_message_set([b"slow-1", b"slow-2"]), build_message_set([b"fast-1", b"fast-2"])
    with connect(broker.port) as sock:
        sock.sendall(encode_request(ProducerRequest("slow", 0, slow)))
        sock.sendall(encode_request(ProducerRequest("fast", 0, fast)))
        slow_file = partition_dir(tmp_path, "slow") / segment_file_name(0)
        wait_until(
            lambda: slow_file.exists() and slow_file.stat().st_size == len(slow), message="slow appended"
        )
        wait_until(
            lambda: fetch(broker.port, "fast", 0) == (0, [b"fast-1", b"fast-2"]), message="fast flushed"
        )
    assert fetch(broker.port, "slow", 0) == (0, [])  # on disk, but never flushed: readers do not see it


def test_an_io_error_appending_halts_the_broker_process(broker_process, zk_client, tmp_path):
    broker = broker_process(0, log_file_size="20")
    wait_until(lambda: zk_client.exists("/brokers/ids/0"), 30, message="broker registered")
    with Producer(broker.port) as producer:
        end = producer.send("t", 0, [b"fills the first segment"])
    # The next append rolls onto a segment named for the log end; a directory stands there.
    (partition_dir(tmp_path, "t") / segment_file_name(end)).mkdir()
    with connect(broker.port) as sock:
        sock.sendall(encode_request(ProducerRequest("t", 0, build_message_set([b"rolls"]))))
        assert broker.wait(30) == 1
    log = broker.log_text()
    assert HALT_LINE in log and "Is a directory" in log


def test_an_io_error_in_the_retention_cleaner_halts_the_broker_process(
    start_broker, broker_process, zk_client, tmp_path
):
    first = start_broker(0, zk=None)
    with Producer(first.port) as producer:
        end = producer.send("c", 0, [b"only segment"])
    first.stop()
    directory = partition_dir(tmp_path, "c")
    age(directory / segment_file_name(0))
    # Retention of every segment rolls a new one at the log end, where a directory stands (not loaded at start).
    (directory / segment_file_name(end)).mkdir()
    broker = broker_process(0, log_retention_hours="1", log_cleanup_initial_delay_ms="200")
    assert broker.wait(30) == 1
    log = broker.log_text()
    assert HALT_LINE in log and "Is a directory" in log

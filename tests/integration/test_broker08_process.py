"""A 0.8 broker process (`zkafka broker start` on 0.8 properties): clean shutdown on SIGTERM (and SIGHUP) with the marker and
the recovery points, a restart after kill -9 that recovers and serves, and the halt on a log I/O error.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.support.server08 import Client08, fetch_request, produce_request, wait_for_leaders
from zkafka.records import format08
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration


def connected(broker) -> Client08:
    def attempt():
        try:
            return Client08(broker.port)
        except OSError:
            return None

    return wait_until(attempt, 30, message="the 0.8 broker process listening")


def produce(client: Client08, topic: str, values: list[bytes]) -> int:
    answer = client.call(produce_request(topic, 0, format08.build_message_set([(None, v) for v in values])))
    partition = answer.topics[0].partitions[0]
    assert partition.error == 0
    return partition.offset


def fetched(client: Client08, topic: str, offset: int = 0) -> list[tuple[int, bytes]]:
    part = client.call(fetch_request(topic, 0, offset)).topics[0].partitions[0]
    assert part.error == 0
    return [(m.offset, m.value) for m in format08.iter_messages(part.message_set)]


def log_dir(tmp_path: Path, broker_id: int = 0) -> Path:
    return tmp_path / f"broker08-{broker_id}"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_stop_signal_shuts_down_cleanly_and_a_restart_serves_the_same_log(
    broker08_process, tmp_path, signum
):
    broker = broker08_process(0)
    with connected(broker) as client:
        wait_for_leaders(client, ["t"])
        assert produce(client, "t", [b"a", b"b"]) == 0
        assert produce(client, "t", [b"c"]) == 2
    broker.signal(signum)  # SIGHUP: the terminal closed, as Kafka's JVM runs its shutdown hook
    assert broker.wait(30) == 0
    assert (log_dir(tmp_path) / ".kafka_cleanshutdown").exists()
    checkpoint = (log_dir(tmp_path) / "recovery-point-offset-checkpoint").read_text()
    assert checkpoint == "0\n1\nt 0 3\n"

    broker.start()
    with connected(broker) as client:
        wait_for_leaders(client, ["t"])
        assert broker.log_text().count("(recovery off)") == 1  # the restart, not the first start
        assert fetched(client, "t") == [(0, b"a"), (1, b"b"), (2, b"c")]
        assert produce(client, "t", [b"d"]) == 3
    assert not (log_dir(tmp_path) / ".kafka_cleanshutdown").exists()


def test_after_kill_9_the_restart_recovers_a_torn_tail(broker08_process, tmp_path):
    broker = broker08_process(0)
    with connected(broker) as client:
        wait_for_leaders(client, ["t"])
        produce(client, "t", [b"kept-1", b"kept-2"])
    broker.signal(signal.SIGKILL)
    broker.wait(30)
    segment = log_dir(tmp_path) / "t-0" / "00000000000000000000.log"
    with open(segment, "ab") as f:
        f.write(format08.build_message_set([(None, b"torn")], base_offset=2)[:-3])
    broker.start()
    with connected(broker) as client:
        wait_for_leaders(client, ["t"])
        assert broker.log_text().count("(recovery on)") == 2  # the first start and the restart
        torn = len(format08.build_message_set([(None, b"torn")])) - 3
        assert f"00000000000000000000.log: truncated {torn} bytes at offset 2" in broker.log_text()
        assert fetched(client, "t") == [(0, b"kept-1"), (1, b"kept-2")]
        assert produce(client, "t", [b"after"]) == 2


def test_an_io_error_appending_halts_the_broker_process(broker08_process, tmp_path):
    broker = broker08_process(0, log_segment_bytes="100")
    with connected(broker) as client:
        wait_for_leaders(client, ["t"])
        produce(client, "t", [b"x" * 60])
        # The next append rolls onto a segment named for the log end offset; a directory stands there.
        (log_dir(tmp_path) / "t-0" / "00000000000000000001.log").mkdir()
        client.send(produce_request("t", 0, format08.build_message_set([(None, b"y" * 60)])))
        assert broker.wait(30) == 1
    log = broker.log_text()
    assert "I/O error on the log of broker 0, halting" in log and "Is a directory" in log


def test_empty_checkpoints_read_as_empty_and_a_malformed_one_stops_the_start_naming_it(
    broker08_process, tmp_path
):
    broker = broker08_process(0)
    with connected(broker) as client:
        wait_for_leaders(client, ["t"])
        produce(client, "t", [b"a"])
    broker.signal(signal.SIGKILL)
    broker.wait(30)
    for name in ("recovery-point-offset-checkpoint", "replication-offset-checkpoint"):
        (log_dir(tmp_path) / name).write_text("")  # as 0.8.2: an empty map
    broker.start()
    with connected(broker) as client:
        wait_for_leaders(client, ["t"])
        assert fetched(client, "t") == [(0, b"a")]
    broker.signal(signal.SIGKILL)
    broker.wait(30)
    checkpoint = log_dir(tmp_path) / "replication-offset-checkpoint"
    checkpoint.write_text("0\n1\nt 0\n")
    broker.start()
    assert broker.wait(30) == 1
    last = broker.log_text().splitlines()[-1]
    assert last.startswith(f"zkafka: error: CheckpointError: checkpoint {checkpoint}: malformed line 3"), last
    assert "Traceback" not in broker.log_text()

"""Drill: librdkafka (and zkafka's Producer08) produces with acks=all to a message format v2 topic of replication factor 3 while its
leader is killed with kill -9. With ``enable.idempotence=true`` every acknowledged message is in the log
exactly once, read back from every replica's segment files (the new leader answered the retries of batches
it already held from its producer state); without idempotence the retries may be stored twice (counted into
the drill figures, not asserted). Three broker processes, a real ZooKeeper."""

from __future__ import annotations

import threading
from collections import Counter, defaultdict

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")

from tests.support.drills import FIGURES, Producer08Load, segment_files, settle  # noqa: E402
from tests.support.replication import zk_state  # noqa: E402
from zkafka.admin.topics import create_topic  # noqa: E402
from zkafka.records.record_batch import read_batches  # noqa: E402
from zkafka.utils import wait_until  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(180)]

V2 = {"message.format.version": "2.2"}


def replica_values(proc, topic: str) -> list[tuple[int, bytes]]:
    """``(offset, value)`` of every record in one replica's segment files."""
    files = segment_files(proc, topic)
    return [(r.offset, r.value) for path in files for b in read_batches(path.read_bytes()) for r in b.records]


class Load(threading.Thread):
    """librdkafka sending numbered values to partition 0 until stopped; ``acked`` value -> offset."""

    def __init__(self, bootstrap: str, topic: str, idempotent: bool) -> None:
        super().__init__(daemon=True)
        self.topic, self.acked, self.failed = topic, {}, []
        self._stopping = threading.Event()
        self.producer = confluent_kafka.Producer(
            {
                "bootstrap.servers": bootstrap,
                "enable.idempotence": idempotent,
                "acks": "all",
                "linger.ms": 5,
                "max.in.flight.requests.per.connection": 5,
                "message.timeout.ms": 60000,
                "retry.backoff.ms": 100,
                "error_cb": lambda error: error.fatal() and self.failed.append(error),
            }
        )

    def delivered(self, error, message) -> None:
        if error is None:
            self.acked[message.value()] = message.offset()
        else:
            self.failed.append(error)

    def run(self) -> None:
        i = 0
        while not self._stopping.is_set():
            try:
                self.producer.produce(self.topic, b"v-%07d" % i, partition=0, on_delivery=self.delivered)
                i += 1
            except BufferError:
                pass
            self.producer.poll(0.001 if i % 20 == 0 else 0)

    def stop(self) -> None:
        self._stopping.set()
        self.join(30)
        undelivered = self.producer.flush(90)
        # librdkafka's threads end with the producer, even when a failed test's traceback keeps self
        self.producer = None
        assert undelivered == 0


@pytest.mark.parametrize(
    "client, idempotent",
    [("librdkafka", True), ("librdkafka", False), ("zkafka", True)],
    ids=["librdkafka-idempotent", "librdkafka-not-idempotent", "zkafka-idempotent"],
)
def test_kill_9_of_the_leader_under_acks_all_load(start_cluster, client, idempotent):
    cluster = start_cluster()
    topic = f"{client}-{'idem' if idempotent else 'plain'}"
    create_topic(cluster.zk, topic, 1, 3, V2)
    (first,) = settle(cluster.zk, cluster.ports, topic)
    if client == "librdkafka":
        load = Load(",".join(f"127.0.0.1:{p}" for p in cluster.ports()), topic, idempotent)
    else:
        load = Producer08Load(cluster.ports, topic, **{"enable.idempotence": "true"})
    load.start()
    try:
        wait_until(lambda: len(load.acked) >= 2000, 30, message="acks flowing")
        cluster[first.leader].proc.kill()
        at = len(load.acked)
        wait_until(
            lambda: len(load.acked) >= at + 2000 or getattr(load, "failed", None),
            60,
            message="acks after the kill",
        )
    finally:
        load.stop()
    failed = load.failed if isinstance(load, Load) else load.failures
    assert not failed, f"deliveries failed: {failed[:3]}"
    assert zk_state(cluster.zk, topic, 0).leader != first.leader
    cluster[first.leader].start()  # rejoins as a follower: truncates, catches up
    settle(cluster.zk, cluster.ports, topic)
    logs = {}
    for broker_id in (1, 2, 3):
        wait_until(
            lambda b=broker_id: len(replica_values(cluster[b], topic)) >= len(load.acked), 30,
            message=f"replica {broker_id} caught up",
        )  # fmt: skip
        logs[broker_id] = replica_values(cluster[broker_id], topic)
    assert logs[1] == logs[2] == logs[3]
    log = logs[1]
    copies = Counter(v for _, v in log)
    offsets_of = defaultdict(set)  # a retry stored twice (no idempotence) holds its value at two offsets
    for offset, value in log:
        offsets_of[value].add(offset)
    lost = [
        v for v, o in load.acked.items() if not offsets_of[v] or (o is not None and o not in offsets_of[v])
    ]
    duplicated = sum(n - 1 for n in copies.values())
    FIGURES.append((f"kill -9 leader, {client} {'idempotent' if idempotent else 'not idempotent'}",
                    {"acked": len(load.acked), "log": len(log), "duplicates": duplicated}))  # fmt: skip
    print(f"\n{topic}: acked={len(load.acked)} log={len(log)} duplicates={duplicated}")
    assert not lost, f"{len(lost)} acknowledged messages lost or not at their offset, e.g. {lost[:3]}"
    if idempotent:
        assert duplicated == 0
        assert [o for o, _ in log] == list(range(len(log)))

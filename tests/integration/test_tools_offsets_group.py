"""The offset tools on a REAL consumer group: connectors that consume from real brokers and commit in ZooKeeper.

What the tools read must be what the consumer wrote (offset-checker, export-offsets), and what they write
must be where the consumer resumes (update-offsets, import-offsets).
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.support.consumers import Collector, committed, consumer_config, produce_numbered
from tests.support.wire import Producer
from zkafka.cli import main
from zkafka.consumer import ZookeeperConsumerConnector
from zkafka.utils import wait_until
from zkafka.zk.client import get_children

pytestmark = pytest.mark.integration

TOPIC = "orders"
PARTITIONS = 4  # per broker (the test brokers' num.partitions)


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def cluster(start_broker, zk_client):
    """Two brokers hosting TOPIC before any member joins, each with one warm-up message in partition 0.

    Yields ``send(count, prefix)`` spreading messages over all 8 partitions, ``log_ends()`` and the warm-ups.
    """
    brokers = [start_broker(0), start_broker(1)]
    producers = {i: Producer(b.port) for i, b in enumerate(brokers)}
    warm_ups = {f"warm-up-{i}".encode() for i in producers}
    for i, producer in producers.items():
        producer.send(TOPIC, 0, [f"warm-up-{i}".encode()])
    wait_until(
        lambda: len(get_children(zk_client, f"/brokers/topics/{TOPIC}")) == 2, message="topic registered"
    )

    def send(count: int, prefix: str) -> set[bytes]:
        return produce_numbered(producers, TOPIC, PARTITIONS, count, prefix)

    def log_ends() -> dict[str, int]:
        return {f"{b}-{p}": producers[b].log_end(TOPIC, p) for b in producers for p in range(PARTITIONS)}

    yield send, log_ends, warm_ups
    for producer in producers.values():
        producer.close()


@pytest.fixture
def group(zk_connect):
    """Factory: ``group(name, consumerid, **config)`` -> (connector, Collector of its stream of TOPIC)."""
    made: list[tuple[ZookeeperConsumerConnector, Collector]] = []

    def join(name: str, consumerid: str, **overrides) -> tuple[ZookeeperConsumerConnector, Collector]:
        connector = ZookeeperConsumerConnector(
            consumer_config(zk_connect, name, consumerid=consumerid, **overrides)
        )
        collector = Collector(connector.create_message_streams({TOPIC: 1})[TOPIC])
        made.append((connector, collector))
        return connector, collector

    yield join
    for connector, collector in made:
        collector.stop()
        connector.shutdown()


def consume_all(collectors: list[Collector], expected: set[bytes]) -> None:
    wait_until(
        lambda: {p for c in collectors for p in c.payloads()} >= expected,
        message=f"{len(expected)} messages consumed",
    )


def test_offset_checker_shows_what_a_live_group_committed_and_owns(cluster, group, zk_connect, zk_client):
    send, log_ends, _ = cluster
    a, from_a = group("g", "a", autocommit_enable="false")
    b, from_b = group("g", "b", autocommit_enable="false")
    sent = send(200, "first")
    consume_all([from_a, from_b], sent)
    a.commit_offsets()
    b.commit_offsets()
    ends = log_ends()
    assert committed(zk_client, "g", TOPIC) == ends  # consumed to the end: the commit is each log's end

    result = run("offset-checker", "--zookeeper", zk_connect, "--group", "g", "--json")
    assert result.exit_code == 0, result.output
    (topic,) = json.loads(result.stdout)["topics"]
    rows = {r["broker_part"]: r for r in topic["partitions"]}
    owned = {name: thread for c in (a, b) for (_, name), thread in c.owned_partitions().items()}
    assert sorted(owned.values()) == ["g_a-0"] * 4 + ["g_b-0"] * 4  # the range assignment: 4 each
    assert {name: (r["offset"], r["log_size"], r["lag"], r["owner"]) for name, r in rows.items()} == {
        name: (end, end, 0, owned[name]) for name, end in ends.items()
    }

    # The group stops (no autocommit: its last position is the one committed above); more arrives.
    a.shutdown()
    b.shutdown()
    send(80, "later")
    later = log_ends()
    result = run("offset-checker", "--zookeeper", zk_connect, "--group", "g", "--json")
    (topic,) = json.loads(result.stdout)["topics"]
    rows = {r["broker_part"]: r for r in topic["partitions"]}
    assert {name: (r["offset"], r["lag"], r["owner"]) for name, r in rows.items()} == {
        name: (ends[name], later[name] - ends[name], None) for name in ends
    }
    assert topic["totals"]["lag"] == sum(later.values()) - sum(ends.values())


def test_update_offsets_moves_where_a_real_group_resumes(cluster, group, zk_connect, zk_client):
    send, log_ends, warm_ups = cluster
    first, from_first = group("g", "c0")
    sent = send(120, "first")
    consume_all([from_first], sent)
    ends = log_ends()
    wait_until(lambda: committed(zk_client, "g", TOPIC) == ends, message="autocommit of everything")

    refused = run("update-offsets", "--zookeeper", zk_connect, "--group", "g", "--topic", TOPIC, "--earliest")
    assert refused.exit_code == 1 and "g: g_c0" in refused.stderr
    assert committed(zk_client, "g", TOPIC) == ends

    from_first.stop()
    first.shutdown()
    rewound = run("update-offsets", "--zookeeper", zk_connect, "--group", "g", "--topic", TOPIC, "--earliest")
    assert rewound.exit_code == 0, rewound.output
    assert committed(zk_client, "g", TOPIC) == {name: 0 for name in ends}

    again, from_again = group("g", "c1")
    consume_all([from_again], sent | warm_ups)  # from the start: every message once more, and the warm-ups
    assert sorted(from_again.payloads()) == sorted(sent | warm_ups)
    wait_until(lambda: committed(zk_client, "g", TOPIC) == ends, message="the group back at the end")

    # --latest skips a backlog: a consumer started afterwards sees only what comes after it.
    from_again.stop()
    again.shutdown()
    backlog = send(40, "backlog")
    skipped = run("update-offsets", "--zookeeper", zk_connect, "--group", "g", "--topic", TOPIC, "--latest")
    assert skipped.exit_code == 0, skipped.output
    assert committed(zk_client, "g", TOPIC) == log_ends()
    _, from_last = group("g", "c2")
    fresh = send(40, "fresh")  # 5 per partition: each partition's backlog would come before its fresh ones
    consume_all([from_last], fresh)
    assert sorted(from_last.payloads()) == sorted(fresh)
    assert not backlog & set(from_last.payloads())


def test_export_then_import_restores_a_real_groups_position(cluster, group, zk_connect, zk_client, tmp_path):
    send, log_ends, _ = cluster
    consumer, collector = group("g", "c0")
    first = send(120, "first")
    consume_all([collector], first)
    collector.stop()
    consumer.shutdown()  # autocommit: the final commit is made on shutdown
    ends = log_ends()
    assert committed(zk_client, "g", TOPIC) == ends

    saved = tmp_path / "g.txt"
    exported = run("export-offsets", "--zookeeper", zk_connect, "--group", "g", "--output-file", str(saved))
    assert exported.exit_code == 0, exported.output
    assert saved.read_text().splitlines() == [
        f"/consumers/g/offsets/{TOPIC}/{n}:{ends[n]}" for n in sorted(ends)
    ]

    # A mistaken rewind, then the saved position comes back: the next member reads only what is new.
    assert (
        run(
            "update-offsets", "--zookeeper", zk_connect, "--group", "g", "--topic", TOPIC, "--earliest"
        ).exit_code
        == 0
    )
    imported = run("import-offsets", "--zookeeper", zk_connect, "--input-file", str(saved))
    assert imported.exit_code == 0, imported.output
    assert committed(zk_client, "g", TOPIC) == ends
    _, resumed = group("g", "c1")
    later = send(40, "later")  # 5 per partition, after every restored position
    consume_all([resumed], later)
    assert sorted(resumed.payloads()) == sorted(later)

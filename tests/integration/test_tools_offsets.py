"""offset-checker, update-offsets, export-offsets and import-offsets against real ZooKeeper and brokers.

A group's state is written with kazoo exactly as the 0.7 consumer writes it: ``ids/<id>`` and
``owners/<t>/<b-p>`` ephemeral (here owned by the test's session), ``offsets/<t>/<b-p>`` persistent.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess

import pytest
from click.testing import CliRunner
from kazoo.client import KazooClient

from tests.support.consumers import committed
from tests.support.wire import read_response
from tests.support.zookeeper import wait_topic_registered
from zkafka.cli import main
from zkafka.launch.zookeeper_server import free_port
from zkafka.protocol import LATEST_TIME
from zkafka.protocol.v07 import (
    OffsetRequest,
    ProducerRequest,
    decode_offsets_response,
    encode_request,
)
from zkafka.records.message07 import build_message_set
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration

TOPIC = "orders"


def produce(port: int, topic: str, partition: int, payloads: list[bytes]) -> int:
    """Append one message set, then return the partition's log end read back on the same connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(encode_request(ProducerRequest(topic, partition, build_message_set(payloads))))
        sock.sendall(encode_request(OffsetRequest(topic, partition, LATEST_TIME, 1)))
        error, body = read_response(sock)
    assert error == 0
    return decode_offsets_response(body)[0]


def join(zk: KazooClient, group: str, consumer_id: str, topic: str = TOPIC) -> None:
    zk.create(
        f"/consumers/{group}/ids/{consumer_id}", f'{{ "{topic}": 1 }}'.encode(), ephemeral=True, makepath=True
    )


def own(zk: KazooClient, group: str, topic: str, partition: str, thread_id: str) -> None:
    zk.create(
        f"/consumers/{group}/owners/{topic}/{partition}", thread_id.encode(), ephemeral=True, makepath=True
    )


def commit(zk: KazooClient, group: str, topic: str, partition: str, offset: int) -> None:
    zk.ensure_path(f"/consumers/{group}/offsets/{topic}/{partition}")
    zk.set(f"/consumers/{group}/offsets/{topic}/{partition}", str(offset).encode())


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def cluster(start_broker, zk_client):
    """Broker 0 and 1 with some orders: log ends by partition name ('<b>-<p>'), as produced."""
    brokers = {0: start_broker(0), 1: start_broker(1)}
    batches = {"0-0": [b"a" * 10, b"bb", b"c"], "0-2": [b"dddd"], "1-1": [b"e", b"f", b"g", b"h", b"i"]}
    ends = {f"{b}-{p}": 0 for b in brokers for p in range(4)}
    for name, payloads in batches.items():
        b, p = map(int, name.split("-"))
        ends[name] = produce(brokers[b].port, TOPIC, p, payloads)
        assert ends[name] == len(build_message_set(payloads))  # the log end is the bytes appended
    wait_topic_registered(zk_client, TOPIC, [0, 1])
    return brokers, ends


def test_offset_checker_figures_equal_what_the_brokers_and_zookeeper_hold(cluster, zk_connect, zk_client):
    brokers, ends = cluster
    join(zk_client, "g", "g_host-1-abc")
    own(zk_client, "g", TOPIC, "0-0", "g_host-1-abc-0")
    commit(zk_client, "g", TOPIC, "0-0", 16)  # after the first message (10 bytes + 6 of header)
    commit(zk_client, "g", TOPIC, "1-1", ends["1-1"])

    result = run("offset-checker", "--zookeeper", zk_connect, "--group", "g", "--json")
    assert result.exit_code == 0, result.output
    (topic,) = json.loads(result.stdout)["topics"]
    rows = {r["broker_part"]: r for r in topic["partitions"]}
    assert list(rows) == sorted(ends)  # every registered partition, sorted as strings
    for name, row in rows.items():
        assert row["log_size"] == ends[name], name
    assert (rows["0-0"]["offset"], rows["0-0"]["lag"], rows["0-0"]["owner"]) == (
        16,
        ends["0-0"] - 16,
        "g_host-1-abc-0",
    )
    assert (rows["1-1"]["offset"], rows["1-1"]["lag"], rows["1-1"]["owner"]) == (ends["1-1"], 0, None)
    assert rows["0-2"]["offset"] is None and rows["0-2"]["lag"] is None
    assert topic["totals"] == {
        "offset": 16 + ends["1-1"],
        "log_size": sum(ends.values()),
        "lag": ends["0-0"] - 16,
        "unknown": 6,
    }

    table = run("offset-checker", "--zkconnect", zk_connect, "--group", "g", "--topic", TOPIC)
    assert table.exit_code == 0, table.output
    lines = table.stdout.splitlines()
    assert lines[1].split() == [
        "g",
        TOPIC,
        "0-0",
        "16",
        str(ends["0-0"]),
        str(ends["0-0"] - 16),
        "g_host-1-abc-0",
    ]
    assert lines[lines.index("BROKER INFO") + 1 :] == [
        f"0 -> 127.0.0.1:{brokers[0].port}",
        f"1 -> 127.0.0.1:{brokers[1].port}",
    ]


def test_offset_checker_shows_unknown_for_a_down_or_unreachable_broker(cluster, zk_connect, zk_client):
    brokers, ends = cluster
    commit(zk_client, "g", TOPIC, "0-0", 2)
    commit(zk_client, "g", TOPIC, "1-1", 3)
    brokers[1].stop()  # its ephemeral registrations go with its session
    wait_until(lambda: not zk_client.exists("/brokers/ids/1"), message="broker 1 gone")
    # Broker 7 is registered but nothing listens on its port.
    dead_port = free_port()
    zk_client.create("/brokers/ids/7", f"127.0.0.1-1:127.0.0.1:{dead_port}".encode(), ephemeral=True)
    zk_client.create(f"/brokers/topics/{TOPIC}/7", b"1", ephemeral=True)

    result = run(
        "offset-checker", "--zookeeper", zk_connect, "--group", "g", "--json", "--socket-timeout-ms", "2000"
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    rows = {r["broker_part"]: r for r in report["topics"][0]["partitions"]}
    assert list(rows) == ["0-0", "0-1", "0-2", "0-3", "1-1", "7-0"]  # 1-1 is still there through its offset
    assert (rows["0-0"]["log_size"], rows["0-0"]["lag"]) == (ends["0-0"], ends["0-0"] - 2)
    assert (rows["1-1"]["offset"], rows["1-1"]["log_size"], rows["1-1"]["lag"]) == (3, None, None)
    assert "not registered" in rows["1-1"]["error"]
    assert rows["7-0"]["log_size"] is None and "unreachable" in rows["7-0"]["error"]
    brokers_info = {b["id"]: b for b in report["brokers"]}
    assert brokers_info[1]["host"] is None
    assert brokers_info[7]["port"] == dead_port and "unreachable" in brokers_info[7]["error"]

    table = run("offset-checker", "--zookeeper", zk_connect, "--group", "g")
    assert table.exit_code == 0
    assert "1 -> not registered (down?)" in table.stdout.splitlines()
    assert any(line.split()[2:6] == ["1-1", "3", "unknown", "unknown"] for line in table.stdout.splitlines())


def test_update_offsets_refuses_a_live_group_and_works_with_force(cluster, zk_connect, zk_client):
    _, ends = cluster
    commit(zk_client, "g", TOPIC, "0-0", 16)
    join(zk_client, "g", "g_host-1-abc")

    refused = run("update-offsets", "--zookeeper", zk_connect, "--group", "g", "--topic", TOPIC, "--latest")
    assert refused.exit_code == 1
    assert (
        refused.stderr.count("\n") == 1 and "g_host-1-abc" in refused.stderr and "--force" in refused.stderr
    )
    assert committed(zk_client, "g", TOPIC) == {"0-0": 16}

    forced = run(
        "update-offsets", "--zookeeper", zk_connect, "--group", "g", "--topic", TOPIC, "--latest", "--force"
    )
    assert forced.exit_code == 0, forced.output
    assert committed(zk_client, "g", TOPIC) == ends
    lines = forced.stdout.splitlines()
    assert lines[:-1] == [f"updating partition {p} with new offset: {ends[p]}" for p in sorted(ends)]
    assert lines[-1] == f"updated the offsets of 8 partitions of {TOPIC} for group g"

    zk_client.delete("/consumers/g/ids/g_host-1-abc")  # the group stops: no --force needed now
    earliest = run(
        "update-offsets", "--zkconnect", zk_connect, "--group", "g", "--topic", TOPIC, "--earliest"
    )
    assert earliest.exit_code == 0, earliest.output
    assert committed(zk_client, "g", TOPIC) == {p: 0 for p in ends}


def test_update_offsets_needs_a_position_and_a_registered_topic(cluster, zk_connect):
    no_position = run("update-offsets", "--zookeeper", zk_connect, "--group", "g", "--topic", TOPIC)
    assert no_position.exit_code == 2 and "--earliest or --latest" in no_position.stderr
    unknown = run("update-offsets", "--zookeeper", zk_connect, "--group", "g", "--topic", "nope", "--latest")
    assert unknown.exit_code == 1
    assert unknown.stderr.startswith("zkafka: error: OffsetsUnavailableError: topic nope has no partitions")


def test_export_then_reset_then_import_restores_offsets(cluster, zk_connect, zk_client, tmp_path):
    _, ends = cluster
    saved = {"g1": {"0-0": 16, "1-1": ends["1-1"]}, "g2": {"0-2": ends["0-2"]}}
    for group, offsets in saved.items():
        for name, offset in offsets.items():
            commit(zk_client, group, TOPIC, name, offset)
    commit(zk_client, "g2", "other", "0-0", 5)

    every = tmp_path / "all.txt"
    result = run("export-offsets", "--zookeeper", zk_connect, "--output-file", str(every))
    assert result.exit_code == 0, result.output
    assert every.read_text().splitlines() == [
        "/consumers/g1/offsets/orders/0-0:16",
        f"/consumers/g1/offsets/orders/1-1:{ends['1-1']}",
        "/consumers/g2/offsets/orders/0-2:" + str(ends["0-2"]),
        "/consumers/g2/offsets/other/0-0:5",
    ]
    assert "exported 4 offsets of 2 groups" in result.stderr
    only_g1 = tmp_path / "g1.txt"
    assert (
        run(
            "export-offsets", "--zkconnect", zk_connect, "--group", "g1", "--output-file", str(only_g1)
        ).exit_code
        == 0
    )
    assert [line.split("/")[2] for line in only_g1.read_text().splitlines()] == ["g1", "g1"]

    # Reset: g1 to the earliest offsets, g2 deleted altogether.
    assert (
        run(
            "update-offsets", "--zookeeper", zk_connect, "--group", "g1", "--topic", TOPIC, "--earliest"
        ).exit_code
        == 0
    )
    assert committed(zk_client, "g1", TOPIC) == {p: 0 for p in ends}
    zk_client.delete("/consumers/g2", recursive=True)

    result = run("import-offsets", "--zookeeper", zk_connect, "--input-file", str(every))
    assert result.exit_code == 0, result.output
    assert "imported 4 offsets of 2 groups" in result.stderr
    assert committed(zk_client, "g1", TOPIC) == {**{p: 0 for p in ends}, **saved["g1"]}
    assert committed(zk_client, "g2", TOPIC) == saved["g2"]
    assert committed(zk_client, "g2", "other") == {"0-0": 5}


def test_import_refuses_when_any_group_of_the_file_is_live(zk_connect, zk_client, tmp_path):
    offsets = tmp_path / "offsets.txt"
    offsets.write_text("/consumers/idle/offsets/t/0-0:7\n/consumers/busy/offsets/t/0-0:9\n")
    join(zk_client, "busy", "busy_h-1-a", topic="t")

    refused = run("import-offsets", "--zookeeper", zk_connect, "--input-file", str(offsets))
    assert refused.exit_code == 1
    assert refused.stderr.count("\n") == 1 and "busy: busy_h-1-a" in refused.stderr
    assert committed(zk_client, "idle", "t") == {}  # nothing written, not even for the idle group

    forced = run("import-offsets", "--zookeeper", zk_connect, "--input-file", str(offsets), "--force")
    assert forced.exit_code == 0, forced.output
    assert committed(zk_client, "idle", "t") == {"0-0": 7}
    assert committed(zk_client, "busy", "t") == {"0-0": 9}


def test_import_rejects_a_malformed_file_in_one_line(zk_connect, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("/consumers/g/offsets/t/0-0:1\n/consumers/g/offsets/t/0-1=2\n")
    result = run("import-offsets", "--zookeeper", zk_connect, "--input-file", str(bad))
    assert result.exit_code == 1
    assert (
        result.stderr
        == "zkafka: error: OffsetFileError: line 2: expected <path>:<offset>, got '/consumers/g/offsets/t/0-1=2'\n"
    )


def connections_closed_by_peer(port: int) -> int:
    """Server-side sockets on ``port`` whose client has closed them and the server has not (``ss``)."""
    out = subprocess.run(
        ["ss", "-Htn", "state", "close-wait", f"sport = :{port}"], capture_output=True, text=True, check=True
    ).stdout
    return len(out.splitlines())


def test_offset_checker_gives_up_on_a_broker_that_stops_answering(
    broker_process, start_broker, zk_connect, zk_client
):
    alive = start_broker(0)
    hung = broker_process(1)
    wait_until(lambda: zk_client.exists("/brokers/ids/1"), timeout=30, message="broker 1 registered")
    end = produce(alive.port, TOPIC, 0, [b"x"])
    produce(hung.port, TOPIC, 0, [b"y"])
    wait_topic_registered(zk_client, TOPIC, [0, 1])
    commit(zk_client, "g", TOPIC, "1-0", 0)
    # the produce's connection closed on the broker's side too, so that only the tool's are counted below
    wait_until(lambda: connections_closed_by_peer(hung.port) == 0, timeout=30, message="no connection half-closed")
    hung.signal(signal.SIGSTOP)  # still registered and accepting connections, but never answering
    try:
        result = run(
            "offset-checker",
            "--zookeeper",
            zk_connect,
            "--group",
            "g",
            "--json",
            "--socket-timeout-ms",
            "300",
        )
        # the connections it opened wait in the stopped broker's accept queue, closed by the tool (CLOSE-WAIT)
        dialled = connections_closed_by_peer(hung.port)
    finally:
        hung.signal(signal.SIGCONT)
    assert result.exit_code == 0, result.output
    rows = {r["broker_part"]: r for r in json.loads(result.stdout)["topics"][0]["partitions"]}
    assert rows["0-0"]["log_size"] == end
    assert all("did not answer within 300 ms" in rows[f"1-{p}"]["error"] for p in range(4))
    # one timeout (and SimpleConsumer's one retry) for the broker, where one per partition would be 4 (or 8)
    assert 1 <= dialled <= 2

"""zk-tree against a real cluster, and the one-line error every tool gives for an unreachable ZooKeeper."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest
from click.testing import CliRunner

from zkafka.cli import main
from zkafka.launch.zookeeper_server import free_port
from zkafka.protocol.v07 import ProducerRequest, encode_request
from zkafka.records.message07 import build_message_set
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def cluster_state(start_broker, zk_client):
    """Broker 0 hosting 'orders', and a group 'g' whose member is the test's own kazoo session."""
    broker = start_broker(0)
    with socket.create_connection(("127.0.0.1", broker.port), timeout=10) as sock:
        sock.sendall(encode_request(ProducerRequest("orders", 0, build_message_set([b"hello"]))))
    wait_until(lambda: zk_client.exists("/brokers/topics/orders/0"), message="orders registered")
    zk_client.create("/consumers/g/ids/g_h-1-ab", b'{ "orders": 1 }', ephemeral=True, makepath=True)
    zk_client.create("/consumers/g/owners/orders/0-0", b"g_h-1-ab-0", ephemeral=True, makepath=True)
    zk_client.create("/consumers/g/offsets/orders/0-0", b"11", makepath=True)
    return broker


def test_zk_tree_shows_ephemeral_owners_with_their_session_and_persistent_nodes_without(
    cluster_state, zk_connect, zk_client
):
    broker_session = f"0x{cluster_state.server.zookeeper.client.client_id[0]:x}"
    my_session = f"0x{zk_client.client_id[0]:x}"
    assert broker_session != my_session

    result = run("zk-tree", "--zookeeper", zk_connect)
    assert result.exit_code == 0, result.output
    broker_value = zk_client.get("/brokers/ids/0")[0].decode()
    assert result.stdout.splitlines() == [
        "/brokers",
        "  ids",
        f'    0 = "{broker_value}"  [ephemeral, session {broker_session}]',
        "  topics",
        "    orders",
        f'      0 = "4"  [ephemeral, session {broker_session}]',
        "/consumers",
        "  g",
        "    ids",
        f'      g_h-1-ab = "{{ \\"orders\\": 1 }}"  [ephemeral, session {my_session}]',
        "    offsets",
        "      orders",
        '        0-0 = "11"',
        "    owners",
        "      orders",
        f'        0-0 = "g_h-1-ab-0"  [ephemeral, session {my_session}]',
    ]


def test_zk_tree_of_a_path_as_json_and_with_roles(cluster_state, zk_connect, zk_client):
    my_session = f"0x{zk_client.client_id[0]:x}"
    result = run("zk-tree", "--zkconnect", zk_connect, "--json", "consumers/g/")
    assert result.exit_code == 0, result.output
    (group,) = json.loads(result.stdout)
    assert group["path"] == "/consumers/g" and group["ephemeral_owner"] is None
    ids, offsets, owners = group["children"]
    assert ids["children"][0]["ephemeral_owner"] == my_session
    assert offsets["children"][0]["children"][0] == {
        "path": "/consumers/g/offsets/orders/0-0",
        "value": "11",
        "ephemeral_owner": None,
        "children": [],
    }
    assert owners["children"][0]["children"][0]["ephemeral_owner"] == my_session

    explained = run("zk-tree", "--zookeeper", zk_connect, "--explain", "/consumers/g/offsets")
    assert explained.stdout.splitlines()[-1] == '    0-0 = "11"  # next offset to consume from orders 0-0'


def test_zk_tree_reports_absent_paths(zk_connect):
    empty = run("zk-tree", "--zookeeper", zk_connect)
    assert empty.exit_code == 0
    assert empty.stdout.splitlines() == ["/brokers (absent)", "/consumers (absent)"]
    missing = run("zk-tree", "--zookeeper", zk_connect, "/consumers/nobody")
    assert (missing.exit_code, missing.stderr) == (
        1,
        "zkafka: error: NoSuchZNodeError: no znode /consumers/nobody\n",
    )


@pytest.mark.parametrize(
    "command",
    [
        ["offset-checker", "--group", "g"],
        ["export-offsets", "--output-file", "-"],
        ["import-offsets", "--input-file", "-"],
        ["update-offsets", "--group", "g", "--topic", "t", "--latest"],
        ["zk-tree"],
    ],
)
def test_an_unreachable_zookeeper_is_one_line_for_every_tool(command):
    nowhere = f"127.0.0.1:{free_port()}"
    result = CliRunner().invoke(
        main, [*command, "--zookeeper", nowhere, "--connection-timeout-ms", "300"], input=""
    )
    assert result.exit_code == 1
    assert result.stderr == (
        f"zkafka: error: ZooKeeperUnreachableError: cannot connect to ZooKeeper at {nowhere} within 0.3s\n"
    )


def test_an_unreachable_zookeeper_is_one_line_from_the_real_command():
    nowhere = f"127.0.0.1:{free_port()}/chroot"
    proc = subprocess.run(
        [sys.executable, "-m", "zkafka.cli", "offset-checker", "--zkconnect", nowhere, "--group", "g"]
        + ["--connection-timeout-ms", "300"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        f"zkafka: error: ZooKeeperUnreachableError: cannot connect to ZooKeeper at {nowhere} within 0.3s"
    ]

"""zk-tree's formatting: indentation, values, ephemeral owners, roles and JSON."""

from __future__ import annotations

import json

from zkafka.tools.zk_tree import ZNode, describe, format_json, format_tree, normalize_path

SESSION = 0x1000ABCDEF0042


def sample_tree() -> ZNode:
    return ZNode(
        "/brokers",
        "",
        children=[
            ZNode(
                "/brokers/ids", "", children=[ZNode("/brokers/ids/0", "127.0.0.1-17:127.0.0.1:9092", SESSION)]
            ),
            ZNode(
                "/brokers/topics",
                "",
                children=[
                    ZNode(
                        "/brokers/topics/orders",
                        "",
                        children=[ZNode("/brokers/topics/orders/0", "4", SESSION)],
                    )
                ],
            ),
        ],
    )


def test_tree_is_indented_with_values_and_ephemeral_sessions_in_hex():
    assert format_tree(sample_tree()) == [
        "/brokers",
        "  ids",
        '    0 = "127.0.0.1-17:127.0.0.1:9092"  [ephemeral, session 0x1000abcdef0042]',
        "  topics",
        "    orders",
        '      0 = "4"  [ephemeral, session 0x1000abcdef0042]',
    ]


def test_persistent_nodes_show_no_session_and_odd_values_are_quoted():
    node = ZNode("/consumers/g/offsets/t/0-0", 'a "b"\nc')
    assert format_tree(node) == ['/consumers/g/offsets/t/0-0 = "a \\"b\\"\\nc"']


def test_explain_adds_the_role_of_each_znode_of_the_layout():
    lines = format_tree(sample_tree(), explain=True)
    assert lines[0] == "/brokers  # brokers and the topics they host"
    assert lines[2].endswith("# broker 0: <creator>:<host>:<port>")
    assert lines[5].endswith("# number of partitions of orders on broker 0")


def test_roles_cover_the_consumer_side_and_nothing_else():
    assert describe("/consumers/g1/ids/g1_h-1-ab") == "consumer g1_h-1-ab: its topic count"
    assert describe("/consumers/g1/owners/orders/0-2") == "thread consuming orders 0-2"
    assert describe("/consumers/g1/offsets/orders/0-2") == "next offset to consume from orders 0-2"
    assert describe("/consumers/g1/offsets") == "offsets committed by g1"
    assert describe("/zookeeper/quota") is None
    assert describe("/consumers/g1/other") is None


def test_json_marks_ephemeral_owners_and_persistent_nodes():
    (brokers,) = json.loads(format_json([sample_tree()]))
    assert brokers["path"] == "/brokers" and brokers["ephemeral_owner"] is None
    broker = brokers["children"][0]["children"][0]
    assert broker == {
        "path": "/brokers/ids/0",
        "value": "127.0.0.1-17:127.0.0.1:9092",
        "ephemeral_owner": "0x1000abcdef0042",
        "children": [],
    }


def test_paths_are_normalized():
    assert normalize_path("brokers/ids/") == "/brokers/ids"
    assert normalize_path("//consumers//g") == "/consumers/g"
    assert normalize_path("/") == "/"

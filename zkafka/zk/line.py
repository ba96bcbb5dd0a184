"""Which line's layout a cluster's ZooKeeper holds, so that tools can pick the 0.7 or the 0.8 client.

The two lines share ``/brokers/ids`` and ``/consumers`` but write different values: a 0.8 broker registers
JSON (``{"version":1,"host":...}``), a 0.7 broker ``<creator>:<host>:<port>``; 0.8 consumers register JSON,
0.7 consumers a bare topic count (``{ "t": 1 }`` has no ``version``) or ``*1*regex``; only 0.8 elects a
``/controller``; a 0.8 topic is a JSON znode with a ``partitions`` child, a 0.7 topic a node with one child
per broker.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from zkafka.config import LINE_07, LINE_08
from zkafka.zk.client import get_children, get_data

if TYPE_CHECKING:
    from kazoo.client import KazooClient


def value_line(value: str | None) -> str | None:
    """The line a broker or consumer registration value was written by (None: cannot tell)."""
    if not value:
        return None
    try:
        parsed = json.loads(value)
    except ValueError:
        return LINE_07 if ":" in value or value[0] in "*!" else None
    return LINE_08 if isinstance(parsed, dict) and "version" in parsed else LINE_07


def cluster_line(client: KazooClient, group: str | None = None) -> str:
    """``LINE_08`` or ``LINE_07``: from the registered brokers, else a controller, else the group's
    members, else the topics' layout; ``LINE_07`` when ZooKeeper holds nothing that tells."""
    for broker in get_children(client, "/brokers/ids"):
        line = value_line(get_data(client, f"/brokers/ids/{broker}"))
        if line is not None:
            return line
    if client.exists("/controller") is not None or client.exists("/controller_epoch") is not None:
        return LINE_08
    if group is not None:
        for member in get_children(client, f"/consumers/{group}/ids"):
            line = value_line(get_data(client, f"/consumers/{group}/ids/{member}"))
            if line is not None:
                return line
    for topic in get_children(client, "/brokers/topics")[:1]:
        if value_line(get_data(client, f"/brokers/topics/{topic}")) == LINE_08:
            return LINE_08
        children = get_children(client, f"/brokers/topics/{topic}")
        return LINE_08 if "partitions" in children else LINE_07
    return LINE_07

"""Which line a zkafka read is on, and the cluster that plans it.

``kafka.bootstrap.servers`` names 0.8 brokers. Behind ``zookeeper.connect`` the registrations tell the line
(``zkafka.zk.line.cluster_line``: a ZooKeeper with nothing that tells is taken as 0.7).
"""

from __future__ import annotations

from collections.abc import Mapping

from zkafka.config import LINE_07, LINE_08
from zkafka.spark.cluster import ClusterView
from zkafka.spark.cluster07 import Cluster
from zkafka.spark.cluster08 import Cluster08
from zkafka.spark.options import SourceOptions, option_getter
from zkafka.zk.client import make_zk_client, start_zk_client
from zkafka.zk.line import cluster_line


def source_line(options: Mapping[str, str]) -> str:
    """``LINE_08`` or ``LINE_07`` for the raw options of a read (asks ZooKeeper for ``zookeeper.connect``)."""
    get = option_getter(options)
    if get("kafka.bootstrap.servers"):
        return LINE_08
    zookeeper = get("zookeeper.connect")
    if not zookeeper:
        return LINE_07  # parse_options says what is missing
    client = make_zk_client(zookeeper, int(get("zookeeper.session.timeout.ms") or 6000))
    try:
        start_zk_client(client)
        return cluster_line(client)
    finally:
        client.stop()
        client.close()


def open_cluster(options: SourceOptions) -> ClusterView:
    """The cluster of the read's line, to be used as a context manager."""
    if options.line == LINE_08:
        return Cluster08.for_options(options)
    return Cluster.for_options(options)

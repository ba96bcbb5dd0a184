"""The compose cluster's brokers serve Prometheus metrics: ``/metrics`` of each broker parses as Prometheus
text and its counters move after a produce and a fetch through that broker."""

from __future__ import annotations

import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.containers.cluster import BROKERS, Cluster, compose_command, zkafka_image
from tests.containers.conftest import require, require_docker
from tests.support.wire import Producer, fetch
from tests.support.zk_container import IMAGE as ZOOKEEPER_IMAGE
from zkafka.utils import wait_until

pytestmark = [pytest.mark.container, pytest.mark.timeout(300)]


def scrape(port: int) -> dict[tuple[str, tuple], float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


@pytest.fixture
def cluster():
    require_docker(ZOOKEEPER_IMAGE)
    require_docker(zkafka_image())
    require(None if compose_command() else "no compose command: run scripts/docker-setup.sh")
    cluster = Cluster()
    try:
        cluster.up()
        yield cluster
    finally:
        cluster.down()


def test_every_broker_serves_metrics_whose_counters_move(cluster: Cluster) -> None:
    for broker in BROKERS:
        port = cluster.metrics_port(broker)
        before = scrape(port)
        assert before[("kafka_server_info", (("broker_id", str(broker)), ("line", "0.7")))] == 1
        producer = Producer(cluster.broker_port(broker))
        try:
            producer.send("scraped", 0, [b"one", b"two"])
            # 0.7 readers see what is flushed: the broker flushes every 200 ms
            end = wait_until(lambda p=producer: p.log_end("scraped", 0), timeout=10, message="flushed")
        finally:
            producer.close()
        assert fetch(cluster.broker_port(broker), "scraped", 0) == (0, [b"one", b"two"])
        after = scrape(port)
        topic = (("topic", "scraped"),)
        assert after[("kafka_server_messages_in_total", topic)] == 2
        assert after[("kafka_server_bytes_in_total", topic)] == end
        assert after[("kafka_server_bytes_out_total", topic)] == end
        produced = (("request", "Produce"),)
        assert after[("kafka_network_request_seconds_count", produced)] > before.get(
            ("kafka_network_request_seconds_count", produced), 0
        )

"""Prometheus metrics scraped over HTTP from real brokers of both lines and from a ZooKeeper consumer: the
counters move after a produce and a fetch, and the 0.8 gauges are there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import gevent
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support.consumers import consumer_config
from tests.support.server08 import Client08, fetch_request, produce_request, wait_for_leaders
from tests.support.wire import Producer, fetch
from zkafka.consumer import ZookeeperConsumerConnector
from zkafka.records import format08
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration


def scrape(port: int) -> dict[tuple[str, tuple], float]:
    """``(sample name, sorted labels) -> value`` of everything ``/metrics`` serves (parsed as Prometheus text).

    The request runs on a thread, so that a server on this thread's gevent hub (a consumer's) can answer."""
    text = gevent.get_hub().threadpool.apply(_get, (f"http://127.0.0.1:{port}/metrics",))
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return answer.read().decode()


def value(samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_07_broker_counts_messages_bytes_requests_and_flushes(start_broker):
    broker = start_broker(0, **{"metrics.port": "0", "enable.zookeeper": "false"})
    port = broker.server.metrics.port
    before = scrape(port)
    assert value(before, "kafka_server_info", broker_id="0", line="0.7") == 1
    assert value(before, "kafka_server_messages_in_total", topic="m") == 0

    producer = Producer(broker.port)
    end = producer.send("m", 0, [b"one", b"two", b"three"])
    producer.close()
    error, payloads = fetch(broker.port, "m", 0)
    assert (error, payloads) == (0, [b"one", b"two", b"three"])

    after = scrape(port)
    assert value(after, "kafka_server_messages_in_total", topic="m") == 3
    assert value(after, "kafka_server_bytes_in_total", topic="m") == end
    assert value(after, "kafka_server_bytes_out_total", topic="m") == end
    assert value(after, "kafka_network_request_seconds_count", request="Produce") == 1
    assert value(after, "kafka_network_request_seconds_count", request="Fetch") == 1
    assert value(after, "kafka_network_request_seconds_count", request="Offsets") == 1
    assert value(after, "kafka_log_flush_seconds_count") >= 1  # log.flush.interval=1 in the tests


def test_08_broker_counts_and_shows_its_state(start_broker08):
    broker = start_broker08(0, **{"metrics.port": "0"})
    port = broker.server.metrics.port
    with Client08(broker.port) as client:
        wait_for_leaders(client, ["t"])
        answer = client.call(
            produce_request("t", 0, format08.build_message_set([(None, b"a"), (b"k", b"b")]))
        )
        assert answer.topics[0].partitions[0].error == 0
        fetched = client.call(fetch_request("t", 0, 0))
        size = len(fetched.topics[0].partitions[0].message_set)
        assert size > 0
    samples = scrape(port)
    assert value(samples, "kafka_server_info", broker_id="0", line="0.8") == 1
    assert value(samples, "kafka_server_messages_in_total", topic="t") == 2
    assert value(samples, "kafka_server_bytes_in_total", topic="t") == size
    assert value(samples, "kafka_server_bytes_out_total", topic="t") == size
    assert value(samples, "kafka_network_request_seconds_count", request="Produce") == 1
    assert value(samples, "kafka_network_request_seconds_count", request="Fetch") == 1
    assert value(samples, "kafka_network_request_seconds_count", request="Metadata") >= 1
    assert value(samples, "kafka_controller_active_controller_count") == 1  # the only broker
    assert value(samples, "kafka_server_under_replicated_partitions") == 0
    assert ("kafka_server_purgatory_size", (("purgatory", "fetch"),)) in samples
    assert ("kafka_server_purgatory_delayed_operations", (("purgatory", "rebalance"),)) in samples


def test_08_parked_fetch_shows_in_the_purgatory_gauges(start_broker08):
    broker = start_broker08(0, **{"metrics.port": "0"})
    port = broker.server.metrics.port
    with Client08(broker.port) as client:
        wait_for_leaders(client, ["p"])
        client.send(fetch_request("p", 0, 0, max_wait_ms=10000, min_bytes=1))
        parked = wait_until(
            lambda: value(scrape(port), "kafka_server_purgatory_delayed_operations", purgatory="fetch") == 1,
            message="a parked fetch in the metrics",
        )
        assert parked
        with Client08(broker.port) as producer:
            producer.call(produce_request("p", 0, format08.build_message_set([(None, b"x")])))
        assert client.receive(fetch_request("p", 0, 0)).body.topics[0].partitions[0].message_set
        wait_until(
            lambda: value(scrape(port), "kafka_server_purgatory_delayed_operations", purgatory="fetch") == 0,
            message="the fetch answered",
        )


def test_08_request_log_at_requests_read_by_zkafka_ui(start_broker08, zk_connect):
    """The broker's request log on metrics.port (/requests): a traced produce with its answer and handler;
    ``zkafka ui --broker-metrics`` reads it into the protocol panel's replicated produce."""
    broker = start_broker08(0, **{"metrics.port": "0"})
    port = broker.server.metrics.port
    with Client08(broker.port) as client:
        wait_for_leaders(client, ["r"])
        answer = client.call(produce_request("r", 0, format08.build_message_set([(None, b"a")])))
        assert answer.topics[0].partitions[0].error == 0
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/requests", timeout=10) as page:
        (produce,) = [e for e in json.loads(page.read()) if e["api"] == "Produce"]
    assert produce["partition"] == ["r", 0] and produce["error"] == "NONE" and produce["broker"] == 0
    assert produce["handler"] == "zkafka.server.apis08.KafkaApis.handle_produce"
    assert produce["after_handler"]["log_end_offset"] == 1 and produce["took_ms"] >= 0
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "zkafka.cli",
            "ui",
            "--zookeeper",
            zk_connect,
            "--port",
            "0",
            "--broker-metrics",
            f"127.0.0.1:{port}",
        ],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    try:
        url = proc.stderr.readline().split("serving ", 1)[1].strip()
        with urllib.request.urlopen(url + "api/state", timeout=10) as page:
            replication = json.loads(page.read())["protocol"]["replication"]
        assert (
            replication["partition"] == "r-0"
            and replication["steps"][-1]["title"] == "Produce answered: NONE"
        )
    finally:
        proc.terminate()
        assert proc.wait(timeout=20) == 0


def test_07_consumer_exposes_its_lag(start_broker, zk_connect):
    broker = start_broker(0)
    producer = Producer(broker.port)
    end = producer.send("lagged", 0, [b"x" * 100] * 5)
    config = consumer_config(zk_connect, "lag-group", **{"metrics.port": "0"})
    connector = ZookeeperConsumerConnector(config)
    try:
        stream = connector.create_message_streams({"lagged": 1})["lagged"][0]
        port = connector.metrics.port
        owned = "0-0"
        wait_until(lambda: ("lagged", owned) in connector.owned_partitions(), message="partition owned")
        samples = wait_until(
            lambda: (s := scrape(port)) and ("kafka_consumer_lag", _labels(connector, owned)) in s and s,
            message="lag exported",
        )
        assert value(samples, "kafka_consumer_lag", **dict(_labels(connector, owned))) == end
        iterator = iter(stream)
        for _ in range(5):
            next(iterator)
        wait_until(
            lambda: value(scrape(port), "kafka_consumer_lag", **dict(_labels(connector, owned))) == 0,
            message="lag drained",
        )
        producer.send("lagged", 0, [b"y"])
        assert value(scrape(port), "kafka_consumer_lag", **dict(_labels(connector, owned))) > 0
    finally:
        producer.close()
        connector.shutdown()


def _labels(connector, partition: str) -> tuple:
    return tuple(
        sorted(
            {
                "group": "lag-group",
                "consumer": connector.consumer_id,
                "topic": "lagged",
                "partition": partition,
            }.items()
        )
    )

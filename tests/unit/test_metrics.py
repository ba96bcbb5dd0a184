"""``zkafka.metrics`` without sockets: request names of both lines, ISR changes, gauges read at scrape time."""

from prometheus_client import generate_latest

from zkafka.log.segmented_log import LogAppendInfo
from zkafka.metrics import BrokerMetrics, request_name
from zkafka.protocol import v07, v08
from zkafka.protocol.metadata import MetadataRequestV0
from zkafka.server.purgatory import Purgatory


def sample(metrics: BrokerMetrics, name: str, **labels) -> float | None:
    return metrics.registry.get_sample_value(name, labels)


def test_request_names_of_both_lines():
    assert request_name(v07.FetchRequest("t", 0, 0, 100)) == "Fetch"
    assert request_name(v07.MultiProducerRequest([])) == "MultiProduce"
    request = v08.Request(3, 0, 7, "client", MetadataRequestV0([]))
    assert request_name(request) == "Metadata"


def test_isr_shrinks_and_expands_count_partitions_led_here_only():
    metrics = BrokerMetrics(1, "0.8")
    metrics.on_partition_states(1, [("t", 0, 1, (1, 2, 3)), ("t", 1, 2, (2, 3))])
    metrics.on_partition_states(1, [("t", 0, 1, (1, 2)), ("t", 1, 2, (2,))])  # t-1 is led by broker 2
    assert sample(metrics, "kafka_server_isr_shrinks_total") == 1
    metrics.on_partition_states(1, [("t", 0, 1, (1, 2, 3))])
    assert sample(metrics, "kafka_server_isr_expands_total") == 1
    metrics.on_partition_states(1, [("t", 0, 2, (2, 3))])  # leadership moved away
    metrics.on_partition_states(1, [("t", 0, 1, (1,))])  # led again: a new start, not a shrink
    assert sample(metrics, "kafka_server_isr_shrinks_total") == 1


class FakeLog:
    topic = "orders"


def test_appends_count_messages_and_bytes_per_topic_and_empty_appends_nothing():
    metrics = BrokerMetrics(0, "0.7")
    metrics.appended(FakeLog(), LogAppendInfo(0, 120, 120, 3))
    metrics.appended(FakeLog(), LogAppendInfo(120, 120, 0, 0))
    metrics.sent("orders", 50)
    metrics.sent("orders", 0)
    assert sample(metrics, "kafka_server_messages_in_total", topic="orders") == 3
    assert sample(metrics, "kafka_server_bytes_in_total", topic="orders") == 120
    assert sample(metrics, "kafka_server_bytes_out_total", topic="orders") == 50


def test_purgatory_gauges_are_read_at_scrape_time_and_a_failing_gauge_is_skipped():
    metrics = BrokerMetrics(0, "0.8")
    purgatory = Purgatory("fetch")
    metrics.watch_purgatories(lambda: [purgatory])
    metrics.gauge("kafka_broken", "fails", lambda: 1 / 0)
    assert sample(metrics, "kafka_server_purgatory_size", purgatory="fetch") == 0
    text = generate_latest(metrics.registry).decode()
    assert 'kafka_server_purgatory_delayed_operations{purgatory="fetch"} 0.0' in text
    assert "kafka_broken" not in text

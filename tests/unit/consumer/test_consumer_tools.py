"""The console consumer's options and output, and the consumer perf test's report lines."""

from __future__ import annotations

import pytest

from zkafka.consumer.console import ConsoleOptions, format_message, zk_timeouts
from zkafka.consumer.stream07 import decode_chunk
from zkafka.errors import InvalidConfigError
from zkafka.records.message07 import build_message_set
from zkafka.tools.consumer_performance import CSV_HEADER, ConsumerPerfOptions, ConsumerPerfResult
from zkafka.topic_count import Blacklist, Whitelist
from zkafka.zk.paths07 import BrokerPartition


def test_topic_is_used_as_a_whitelist_and_exactly_one_filter_is_required():
    assert ConsoleOptions("zk", topic="logs").topic_filter() == Whitelist("logs")
    assert ConsoleOptions("zk", whitelist="a,b").topic_filter() == Whitelist("a|b")
    assert ConsoleOptions("zk", blacklist="x.*").topic_filter() == Blacklist("x.*")
    with pytest.raises(ValueError, match="exactly one"):
        ConsoleOptions("zk", topic="a", blacklist="b").topic_filter()
    with pytest.raises(ValueError, match="exactly one"):
        ConsoleOptions("zk").topic_filter()


def test_from_beginning_chooses_smallest_and_properties_override():
    props = ConsoleOptions(
        "zk", topic="t", from_beginning=True, properties={"fetch.size": "5"}
    ).consumer_config("g")
    assert props["autooffset.reset"] == "smallest" and props["fetch.size"] == "5" and props["groupid"] == "g"
    assert ConsoleOptions("zk", topic="t").consumer_config("g")["autooffset.reset"] == "largest"


def test_the_zookeeper_timeouts_come_from_the_consumer_properties_of_the_line():
    assert zk_timeouts({}) == (6000, 6000)  # the connection timeout defaults to the session's, as in 0.8.2
    assert zk_timeouts({"zookeeper.session.timeout.ms": "900"}) == (900, 900)
    assert zk_timeouts({"zookeeper.connection.timeout.ms": "500"}) == (6000, 500)
    assert zk_timeouts({"zk.connectiontimeout.ms": "700"}) == (6000, 700)  # only 0.7's keys: the 0.7 consumer's
    assert zk_timeouts({"zk.connectiontimeout.ms": "700"}, "0.8") == (6000, 6000)
    with pytest.raises(InvalidConfigError, match="^zookeeper.connection.timeout.ms: 'soon' is not an integer"):
        zk_timeouts({"zookeeper.connection.timeout.ms": "soon"})


def test_message_lines():
    (item,), _, _, _ = decode_chunk(build_message_set([b"hello"]), 100, "logs", BrokerPartition(1, 3))
    assert format_message(item, False) == b"hello\n"
    assert format_message(item, True) == b"logs\t1-3\t115\thello\n"


def test_perf_report_line_and_json():
    result = ConsumerPerfResult(
        start_ms=0, end_ms=2000, fetch_size=1048576, total_bytes=100 * 2**20, total_messages=1_000_000,
        elapsed_s=2.0, threads=1, group="perf-consumer-1", rebalance_s=0.05,
    )  # fmt: skip
    assert CSV_HEADER.split(", ")[2:] == [
        "fetch.size",
        "data.consumed.in.MB",
        "MB.sec",
        "data.consumed.in.nMsg",
        "nMsg.sec",
    ]
    assert result.csv_line().split(", ")[2:] == ["1048576", "100.0000", "50.0000", "1000000", "500000.0000"]
    data = result.to_json()
    assert data["messages_per_sec"] == 500000 and data["mb_per_sec"] == 50
    props = ConsumerPerfOptions("zk", "t", from_latest=True).consumer_config("g")
    assert props["autooffset.reset"] == "largest" and props["consumer.timeout.ms"] == "5000"

"""Parsing the source options."""

from __future__ import annotations

import pytest

from zkafka.config import LINE_07, LINE_08
from zkafka.spark.offsets import EARLIEST, TopicPartition, TopicPartition08
from zkafka.spark.options import DEFAULT_FETCH_SIZE, parse_options

pytestmark = pytest.mark.spark

ZK = {"zookeeper.connect": "zk:2181/kafka"}


def test_defaults_and_case_insensitive_names():
    opts = parse_options({**ZK, "SUBSCRIBE": " a, b ,a,"}, streaming=False)
    assert opts.subscribe == ("a", "b")
    assert (opts.starting, opts.ending) == ("earliest", "latest")
    assert opts.fetch_size == DEFAULT_FETCH_SIZE and opts.fail_on_data_loss is True
    assert opts.max_bytes_per_trigger is None and opts.min_partitions is None
    assert opts.subscribes_to("a") and not opts.subscribes_to("c")


def test_pattern_is_a_whole_name_match_like_the_0_7_whitelist():
    opts = parse_options({**ZK, "subscribePattern": "events-.*", "failondataloss": "False"}, streaming=True)
    assert opts.subscribes_to("events-1") and not opts.subscribes_to("old-events-1")
    assert opts.fail_on_data_loss is False


def test_json_offsets_and_numbers():
    opts = parse_options(
        {
            **ZK,
            "subscribe": "a",
            "startingOffsets": '{"a": {"0-1": 42, "1-0": -2}}',
            "endingOffsets": '{"a": {"0-1": 100}}',
            "minPartitions": "8",
            "fetchSize": "4096",
        },
        streaming=False,
    )
    assert opts.starting == {TopicPartition("a", 0, 1): 42, TopicPartition("a", 1, 0): EARLIEST}
    assert opts.ending == {TopicPartition("a", 0, 1): 100}
    assert (opts.min_partitions, opts.fetch_size) == (8, 4096)


@pytest.mark.parametrize(
    "options, streaming, error",
    [
        ({"subscribe": "a"}, False, "'zookeeper.connect' is required"),
        (ZK, False, "exactly one of"),
        ({**ZK, "subscribe": "a", "subscribePattern": "a"}, False, "exactly one of"),
        ({**ZK, "subscribe": " , "}, False, "names no topic"),
        ({**ZK, "subscribePattern": "a("}, False, "invalid regex"),
        ({**ZK, "subscribe": "a", "startingOffsets": "latest"}, False, "makes no sense for a batch"),
        (
            {**ZK, "subscribe": "a", "endingOffsets": '{"a": {"0-0": -2}}'},
            False,
            "makes no sense for a batch",
        ),
        ({**ZK, "subscribe": "a", "endingOffsets": "latest"}, True, "for batch reads only"),
        ({**ZK, "subscribe": "a", "startingOffsets": "{oops"}, True, "JSON offsets"),
        (
            {**ZK, "subscribe": "a", "startingOffsets": '{"b": {"0-0": 1}}'},
            True,
            "'b', which is not subscribed",
        ),
        ({**ZK, "subscribe": "a", "maxBytesPerTrigger": "0"}, True, "positive integer"),
        ({**ZK, "subscribe": "a", "minPartitions": "many"}, False, "positive integer"),
        ({**ZK, "subscribe": "a", "failOnDataLoss": "maybe"}, False, "true or false"),
        ({**ZK, "subscribe": "a", "includeHeaders": "yes"}, False, "'includeHeaders' must be true or false"),
    ],
)
def test_bad_options_say_what_is_wrong(options, streaming, error):
    with pytest.raises(ValueError, match=error):
        parse_options(options, streaming=streaming)


# -- the 0.8 line ------------------------------------------------------------------------------------------

BOOTSTRAP = {"kafka.bootstrap.servers": "b1:9092, b2:9093"}


def test_bootstrap_servers_mean_the_0_8_line_with_spark_kafka_source_offsets():
    opts = parse_options(
        {
            **BOOTSTRAP,
            "assign": '{"t": [1, 0], "u": [3]}',
            "startingOffsets": '{"t": {"0": 23, "1": -2}}',
            "endingOffsets": '{"t": {"0": 50}}',
            "kafka.default.api.timeout.ms": "5000",
        },
        streaming=False,
    )
    assert opts.line == LINE_08 and opts.key_kind is TopicPartition08
    assert opts.bootstrap_servers == (("b1", 9092), ("b2", 9093)) and opts.zookeeper_connect is None
    assert opts.assign == (TopicPartition08("t", 0), TopicPartition08("t", 1), TopicPartition08("u", 3))
    assert opts.starting == {TopicPartition08("t", 0): 23, TopicPartition08("t", 1): EARLIEST}
    assert opts.ending == {TopicPartition08("t", 0): 50} and opts.api_timeout_ms == 5000
    assert opts.subscribes_to("u") and not opts.subscribes_to("v")
    assert opts.describe() == "partitions t-0,t-1,u-3"

    streaming = parse_options(
        {**ZK, "subscribe": "t", "maxOffsetsPerTrigger": "100"}, streaming=True, line=LINE_08
    )
    assert (streaming.line, streaming.max_offsets_per_trigger) == (LINE_08, 100)
    assert parse_options({**ZK, "subscribe": "t"}, streaming=True).line == LINE_07


@pytest.mark.parametrize(
    "options, line, error",
    [
        ({**BOOTSTRAP, **ZK, "subscribe": "a"}, None, "only one of"),
        ({**BOOTSTRAP, "subscribe": "a"}, LINE_07, "is for the 0.8 line"),
        (
            {"kafka.bootstrap.servers": "nohost", "subscribe": "a"},
            None,
            "'kafka.bootstrap.servers': .*not host:port",
        ),
        ({**BOOTSTRAP, "subscribe": "a", "assign": '{"a": [0]}'}, None, "exactly one of"),
        (
            {**BOOTSTRAP, "assign": '{"a": 0}'},
            None,
            "option 'assign': partitions of topic 'a' must be a list",
        ),
        ({**BOOTSTRAP, "assign": "{}"}, None, "option 'assign': must be a JSON object"),
        ({**BOOTSTRAP, "assign": '{"a": ["0-1"]}'}, None, "'0-1' of topic 'a' is not a partition number"),
        (
            {**BOOTSTRAP, "assign": '{"a": [0]}', "startingOffsets": '{"a": {"1": 5}}'},
            None,
            "a-1, which is not assigned",
        ),
        (
            {**BOOTSTRAP, "subscribe": "a", "startingOffsets": '{"a": {"0-0": 1}}'},
            None,
            "not a partition number",
        ),
        ({**BOOTSTRAP, "subscribe": "a", "maxBytesPerTrigger": "100"}, None, "use 'maxOffsetsPerTrigger'"),
        ({**ZK, "subscribe": "a", "maxOffsetsPerTrigger": "100"}, None, "0.7 offsets are bytes"),
    ],
)
def test_bad_0_8_options_say_what_is_wrong(options, line, error):
    with pytest.raises(ValueError, match=error):
        parse_options(options, streaming=True, line=line)

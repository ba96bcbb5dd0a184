"""Parsing the source options."""

from __future__ import annotations

import pytest

from zkafka.spark.offsets import EARLIEST, TopicPartition
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
    ],
)
def test_bad_options_say_what_is_wrong(options, streaming, error):
    with pytest.raises(ValueError, match=error):
        parse_options(options, streaming=streaming)

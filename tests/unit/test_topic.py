"""Topic-name validation for both lines (zkafka.topic), and the clients refusing a bad name before sending."""

from __future__ import annotations

import pytest

from tests.support.frame_recorder import FrameRecorder
from zkafka.errors import InvalidTopicError
from zkafka.producer import Producer
from zkafka.topic import TopicValidator, validate_topic, validate_topic_08
from zkafka.utils import wait_until


@pytest.mark.parametrize("name", ["a b", "a:b", "é", "x*", "a,b"])
def test_names_only_0_7_accepts(name):
    assert validate_topic(name) == name
    with pytest.raises(InvalidTopicError, match="other than ASCII alphanumerics"):
        validate_topic(name, line="0.8")


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "x" * 256])
def test_names_neither_line_accepts(name):
    for line in ("0.7", "0.8"):
        with pytest.raises(InvalidTopicError):
            validate_topic(name, line=line)


def test_the_0_8_limit_is_always_249_and_the_shortcut_is_the_same_rule():
    # Kafka 0.10's limit: "<topic>-<partition>" must still fit a 255-byte file name.
    assert validate_topic("x" * 249, max_length=10, line="0.8") == "x" * 249
    for length in (250, 255):
        with pytest.raises(InvalidTopicError, match="at most 249") as info:
            validate_topic_08("x" * length)
        assert "\n" not in str(info.value) and "<topic>-<partition>" in str(info.value)
    assert validate_topic("x" * 255) == "x" * 255  # 0.7's max.topic.name.length is unchanged
    with pytest.raises(ValueError, match="unknown line"):
        validate_topic("t", line="0.9")


def test_the_validator_checks_each_name_once_and_remembers_a_bounded_number():
    check = TopicValidator("0.8", limit=2)
    assert [check(name) for name in ("a", "b", "c", "a")] == ["a", "b", "c", "a"]
    assert check.valid == {"a", "b"}
    with pytest.raises(InvalidTopicError):
        check("a b")


@pytest.mark.parametrize("producer_type", ["sync", "async"])
def test_the_0_7_producer_refuses_a_bad_topic_before_sending_anything(producer_type):
    broker = FrameRecorder()
    try:
        producer = Producer(
            {"broker.list": f"0:127.0.0.1:{broker.port}", "producer.type": producer_type, "queue.time": "10"}
        )
        with pytest.raises(InvalidTopicError, match="U\\+002F"):
            producer.send("../evil", [b"lost?"])
        producer.send("good", [b"sent"])
        producer.close()
        wait_until(lambda: broker.messages() == [b"sent"], message="the good message")
        assert producer.undelivered == 0
    finally:
        broker.stop()

"""The .properties loader, ``--override`` values, and telling the two lines' server.properties apart."""

import pytest

from zkafka.config import LINE_07, LINE_08, detect_broker_line, parse_overrides, parse_properties
from zkafka.errors import InvalidConfigError

SAMPLE = r"""
# a comment
! another
brokerid=0
port = 9092
log.dir: /tmp/kafka-logs
num.partitions 4
zk.connect=localhost:2181/kafka
topic.partition.count.map=t1:8, bad, t2:16 ,t3:0
long.value=first \
    second
escaped\=key=a\tb
"""


def test_properties_syntax():
    props = parse_properties(SAMPLE)
    assert props["brokerid"] == "0"
    assert props["port"] == "9092"
    assert props["log.dir"] == "/tmp/kafka-logs"
    assert props["num.partitions"] == "4"
    assert props["long.value"] == "first second"
    assert props["escaped=key"] == "a\tb"


def test_overrides():
    assert parse_overrides(["a=1", "b.c = x=y"]) == {"a": "1", "b.c": "x=y"}
    with pytest.raises(InvalidConfigError):
        parse_overrides(["novalue"])


@pytest.mark.parametrize(
    "props, line",
    [
        ({"brokerid": "0", "zk.connect": "z", "log.dir": "/x"}, LINE_07),
        ({"broker.id": "0", "zookeeper.connect": "z", "log.dir": "/x"}, LINE_08),
        ({"log.dirs": "/x"}, LINE_08),
        ({"zookeeper.connect": "z"}, LINE_08),
        ({"log.dir": "/x"}, LINE_07),
        ({}, LINE_07),
    ],
)
def test_line_detection(props, line):
    assert detect_broker_line(props) == line


@pytest.mark.parametrize(
    "props, named",
    [
        ({"brokerid": "0", "broker.id": "0"}, ["brokerid", "broker.id"]),
        ({"zk.connect": "z", "zookeeper.connect": "z"}, ["zk.connect", "zookeeper.connect"]),
        ({"log.dir": "/a", "log.dirs": "/b"}, ["log.dir", "log.dirs"]),
        ({"brokerid": "0", "zookeeper.connect": "z"}, ["brokerid", "zookeeper.connect"]),
    ],
)
def test_mixing_the_lines_fails_in_one_line_naming_the_keys(props, named):
    with pytest.raises(InvalidConfigError) as info:
        detect_broker_line(props)
    message = str(info.value)
    assert "\n" not in message
    assert all(key in message for key in named)

"""Inputs that must not take a 0.8 broker out of service: topic names its log directories cannot hold."""

from __future__ import annotations

import os

import pytest

from tests.support.server08 import Client08, wait_for_leaders
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.metadata import MetadataRequestV0

pytestmark = pytest.mark.integration


def partition_dirs(log_dir) -> list[str]:
    return sorted(name for name in os.listdir(log_dir) if os.path.isdir(os.path.join(log_dir, name)))


def test_auto_create_refuses_a_topic_name_over_249_characters(start_broker08, zk_client, tmp_path):
    broker = start_broker08(0)
    too_long, longest = "x" * 255, "y" * 249
    with Client08(broker.port) as client:
        for name in (too_long, "x" * 250):
            answer = client.call(MetadataRequestV0([name]))
            assert [(t.topic, t.error) for t in answer.topics] == [(name, ErrorCode.INVALID_TOPIC_EXCEPTION)]
        (served,) = wait_for_leaders(client, [longest])  # the longest legal name is created and led
        assert served.error == 0 and [p.leader for p in served.partitions] == [0]
        # the broker still serves topics created afterwards
        wait_for_leaders(client, ["after"])
    assert zk_client.get_children("/brokers/topics") == sorted([longest, "after"])
    assert partition_dirs(tmp_path / "broker08-0") == sorted([f"{longest}-0", "after-0"])

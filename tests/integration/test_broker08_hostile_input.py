"""Inputs that must not take a 0.8 broker out of service: topic names its log directories cannot hold, a
partition directory that cannot be created."""

from __future__ import annotations

import logging
import os

import pytest

from tests.support.replication import produce
from tests.support.server08 import Client08, wait_for_leaders
from zkafka.admin.topics import create_topic_with_assignment
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.metadata import MetadataRequestV0
from zkafka.utils import wait_until

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


def test_a_partition_whose_directory_cannot_be_created_is_reported_and_the_rest_is_served(
    start_broker08, zk_client, tmp_path, caplog
):
    caplog.set_level(logging.INFO, logger="zkafka.controller")
    broker = start_broker08(0)
    (tmp_path / "broker08-0" / "blocked-0").write_bytes(b"")  # a file where blocked-0's directory must go
    create_topic_with_assignment(zk_client, "blocked", "0,0")  # both partitions in one LeaderAndIsr

    def answered_storage_error():
        return [
            r
            for r in caplog.records
            if "blocked-0" in r.getMessage() and "KAFKA_STORAGE_ERROR" in r.getMessage()
        ]

    with Client08(broker.port) as client:
        # the other partition of the same request is led and served
        wait_until(
            lambda: produce(client, "blocked", 1, [b"v"], acks=1) == (0, 0), 20, message="blocked-1 led"
        )
        wait_until(answered_storage_error, 20, message="the controller told of blocked-0's storage error")
        assert produce(client, "blocked", 0, [b"v"], acks=1)[0] == ErrorCode.NOT_LEADER_FOR_PARTITION
        # the controller is not stuck resending that request: a topic created afterwards is led
        wait_for_leaders(client, ["after"])
        assert produce(client, "after", 0, [b"w"], acks=1) == (0, 0)
    assert (tmp_path / "broker08-0" / "blocked-0").is_file()

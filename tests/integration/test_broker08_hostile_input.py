"""Inputs that must not take a 0.8 broker out of service: topic names its log directories cannot hold, a
partition directory that cannot be created, controller requests forged from a plain socket, fetch session
requests it cannot serve (answered with the session error) or cannot parse (only their connection closed)."""

from __future__ import annotations

import logging
import os
import socket
import struct

import pytest

from tests.support.replication import produce, read_all
from tests.support.server08 import Client08, wait_for_leaders
from zkafka.admin.topics import create_topic_with_assignment
from zkafka.protocol import inter_broker as admin
from zkafka.protocol import v08
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.fetch import fetch_request
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
        # once the metadata names blocked-0 (UNKNOWN_TOPIC_OR_PARTITION until then), it is not led here
        wait_until(
            lambda: produce(client, "blocked", 0, [b"v"], acks=1)[0] == ErrorCode.NOT_LEADER_FOR_PARTITION,
            20,
            message="blocked-0 answered NOT_LEADER_FOR_PARTITION",
        )
        # the controller is not stuck resending that request: a topic created afterwards is led
        wait_for_leaders(client, ["after"])
        assert produce(client, "after", 0, [b"w"], acks=1) == (0, 0)
    assert (tmp_path / "broker08-0" / "blocked-0").is_file()


def forged_requests(controller_id: int, epoch: int) -> list:
    """A StopReplica deleting kept-0, a LeaderAndIsr making this broker follow broker 999, an UpdateMetadata
    deleting kept-0 from the metadata."""
    follow = admin.PartitionState(epoch, 999, 1000, [999, 0], 0, [999, 0])
    gone = admin.PartitionState(epoch, -2, 0, [], 0, [])
    return [
        admin.StopReplicaRequestV0(controller_id, epoch, 1, [admin.TopicPartition("kept", 0)]),
        admin.LeaderAndIsrRequestV0(
            controller_id,
            epoch,
            [admin.PartitionStateEntry("kept", 0, follow)],
            [admin.Broker(999, "127.0.0.1", 1)],
        ),
        admin.UpdateMetadataRequestV0(
            controller_id,
            epoch,
            [admin.PartitionStateEntry("kept", 0, gone)],
            [admin.Broker(999, "127.0.0.1", 1)],
        ),
    ]


def test_controller_requests_that_zookeeper_does_not_back_are_refused_and_change_nothing(
    start_broker08, zk_client, tmp_path
):
    broker = start_broker08(0)
    with Client08(broker.port) as client:
        wait_for_leaders(client, ["kept"])
        assert produce(client, "kept", 0, [b"a", b"b"]) == (0, 0)  # acknowledged by the ISR
        controller, epoch = 0, int(zk_client.get("/controller_epoch")[0])
        for forger, forged_epoch in (
            (999, 1000),
            (999, epoch),
            (controller, epoch + 1),
            (controller, epoch - 1),
        ):
            for request in forged_requests(forger, forged_epoch):
                answer = client.call(request)
                assert answer.error == ErrorCode.STALE_CONTROLLER_EPOCH, (forger, forged_epoch, request)
                assert getattr(answer, "partitions", []) == []
        assert read_all(broker.port, "kept", 0) == (2, [(0, b"a"), (1, b"b")])
        assert (tmp_path / "broker08-0" / "kept-0").is_dir()
        assert produce(client, "kept", 0, [b"c"]) == (0, 2)  # still led here
        (kept,) = client.call(MetadataRequestV0(["kept"])).topics
        assert kept.error == 0 and [p.leader for p in kept.partitions] == [0]
        # the real controller is not locked out: a topic created afterwards gets a leader
        wait_for_leaders(client, ["after"])
        assert produce(client, "after", 0, [b"w"]) == (0, 0)
    assert int(zk_client.get("/controller_epoch")[0]) == epoch


def _fetch_v(version: int, session: tuple[int, int], forgotten=()):
    return fetch_request(
        version, [("t", 0, 0, 1 << 20)], forgotten=forgotten, session_id=session[0], session_epoch=session[1]
    )


def _closed(port: int, frame: bytes) -> bool:
    """Whether the broker closes a connection that sent ``frame`` (without answering it)."""
    with socket.create_connection(("127.0.0.1", port), timeout=15) as sock:
        sock.sendall(frame)
        return sock.recv(4) == b""


def test_fetch_session_requests_are_refused_per_request_and_malformed_ones_close_only_their_connection(
    start_broker08, zk_client
):
    broker = start_broker08(0)
    create_topic_with_assignment(zk_client, "t", "0")
    with Client08(broker.port) as good:
        wait_for_leaders(good, ["t"])
        unknown = good.call(_fetch_v(7, (999, 1)))
        assert (unknown.error, unknown.session_id, unknown.topics) == (
            ErrorCode.FETCH_SESSION_ID_NOT_FOUND,
            0,
            [],
        )
        opened = good.call(_fetch_v(11, (0, 0)))
        assert opened.error == 0 and opened.session_id > 0
        assert good.call(_fetch_v(11, (opened.session_id, 7))).error == ErrorCode.INVALID_FETCH_SESSION_EPOCH
        frame = v08.encode_request(_fetch_v(11, (0, 0), forgotten=[("t", 1)]), 1, "hostile")
        truncated = struct.pack(">i", len(frame) - 9) + frame[4:-5]
        assert _closed(broker.port, truncated)
        # the forgotten topics' int32 count: before "t" (2 + 1), [1] (4 + 4) and the rack id "" (2)
        count_at = len(frame) - 2 - 4 - 4 - 2 - 1 - 4
        huge = frame[:count_at] + struct.pack(">i", 2**31 - 1) + frame[count_at + 4 :]
        assert _closed(broker.port, huge)
        for version in range(2, 12):  # the good connection is served at every version still
            assert good.call(_fetch_v(version, (0, -1))).topics[0].partitions[0].error == 0

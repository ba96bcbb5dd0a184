"""Golden bytes of OffsetForLeaderEpoch v0-v4, both ways through the v08 codec. Hand-assembled from Kafka 3.4's
OffsetForLeaderEpochRequest/Response JSON field tables: v1 answers the epoch found, v2 adds the current leader
epoch and the throttle time, v3 the replica id, v4 is flexible. Correlation id 7, client id "cli"."""

from __future__ import annotations

import pytest

from tests.unit.protocol.test_v08_client import check_request, check_response
from zkafka.protocol.leader_epoch import OFFSET_FOR_LEADER_EPOCH_APIS as APIS
from zkafka.protocol.versioned import make

ASK_T0 = [{"topic": "t", "partitions": [{"partition": 0, "current_leader_epoch": 4, "leader_epoch": 3}]}]
ENDS_T0 = [{"topic": "t", "partitions": [{"error": 0, "partition": 0, "leader_epoch": 3, "end_offset": 10}]}]


def ask(version):
    return make(APIS[version][0], replica_id=1, topics=ASK_T0)


def answer(version):
    return make(APIS[version][1], throttle_time_ms=0, topics=ENDS_T0)


REQUESTS = [
    pytest.param(ask(0), "00000020 | 0017 0000 00000007 0003 636c69 | 00000001 0001 74 00000001 00000000 00000003",
                 id="OffsetForLeaderEpochRequestV0"),
    pytest.param(ask(1), "00000020 | 0017 0001 00000007 0003 636c69 | 00000001 0001 74 00000001 00000000 00000003",
                 id="OffsetForLeaderEpochRequestV1"),
    pytest.param(ask(2), """00000024 | 0017 0002 00000007 0003 636c69
                            00000001 0001 74 00000001 00000000 00000004 00000003  # current epoch 4, asks 3""",
                 id="OffsetForLeaderEpochRequestV2"),
    pytest.param(ask(3), """00000028 | 0017 0003 00000007 0003 636c69 | 00000001  # replica 1
                            00000001 0001 74 00000001 00000000 00000004 00000003""",
                 id="OffsetForLeaderEpochRequestV3"),
    pytest.param(ask(4), """00000025 | 0017 0004 00000007 0003 636c69 00 | 00000001
                            02 02 74 02 00000000 00000004 00000003 00 00 | 00""",
                 id="OffsetForLeaderEpochRequestV4"),
]  # fmt: skip

RESPONSES = [
    pytest.param(answer(0), "0000001d | 00000007 | 00000001 0001 74 00000001 0000 00000000 000000000000000a",
                 id="OffsetForLeaderEpochResponseV0"),
    pytest.param(answer(1), """00000021 | 00000007 | 00000001 0001 74 00000001
                               0000 00000000 00000003 000000000000000a  # epoch 3 ends at 10""",
                 id="OffsetForLeaderEpochResponseV1"),
    pytest.param(answer(2), """00000025 | 00000007 | 00000000 | 00000001 0001 74 00000001
                               0000 00000000 00000003 000000000000000a""",
                 id="OffsetForLeaderEpochResponseV2"),
    pytest.param(answer(3), """00000025 | 00000007 | 00000000 | 00000001 0001 74 00000001
                               0000 00000000 00000003 000000000000000a  # as v2""",
                 id="OffsetForLeaderEpochResponseV3"),
    pytest.param(answer(4), """00000022 | 00000007 00 | 00000000 | 02 02 74 02
                               0000 00000000 00000003 000000000000000a 00 00 | 00""",
                 id="OffsetForLeaderEpochResponseV4"),
]  # fmt: skip


@pytest.mark.parametrize("body, frame_hex", REQUESTS)
def test_request_golden_bytes(body, frame_hex):
    check_request(body, frame_hex)


@pytest.mark.parametrize("body, frame_hex", RESPONSES)
def test_response_golden_bytes(body, frame_hex):
    check_response(body, frame_hex)

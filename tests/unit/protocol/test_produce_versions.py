"""Golden bytes of Produce v2-v8, both ways through the v08 codec.

Hand-assembled from Kafka's ProduceRequest/ProduceResponse JSON field tables: v2 adds each partition's
``log_append_time_ms`` to the answer; v3 the request's nullable ``transactional_id`` first; v5 each
partition's ``log_start_offset``; v8 ``record_errors`` ([batch_index int32, message nullable string]) and
``error_message``. v4, v6 and v7 are their predecessors' layouts. Correlation id 7, client id "cli"; topic "t",
partition 0, a 3-byte records field (the codec does not look inside it).
"""

from __future__ import annotations

import pytest

from tests.unit.protocol.test_v08_client import check_request, check_response
from zkafka.protocol import produce as p
from zkafka.protocol.v08 import decode_request, encode_request

RECORDS = b"\x01\x02\x03"
TOPICS = [p.ProduceRequestTopic("t", [p.ProduceRequestPartition(0, RECORDS)])]
TOPIC_DATA = "00000001 0001 74 | 00000001 00000000 | 00000003 010203"  # ["t": [partition 0, records]]


def request(version: int, *fields):
    return p.PRODUCE_APIS[version][0](*fields)


def response(version: int, *partition_fields, throttle_time_ms: int = 0):
    partition = p.response_partition_class(version)(*partition_fields)
    return p.PRODUCE_APIS[version][1]([p.response_topic_class(version)("t", [partition])], throttle_time_ms)


REQUESTS = [
    pytest.param(
        request(2, 1, 1000, TOPICS),
        f"""00000029 | 0000 0002 00000007 0003 636c69   # size 41 | Produce v2, correlation 7, "cli"
            0001 000003e8 | {TOPIC_DATA}              # acks 1, timeout 1000 (v0's fields)""",
        id="ProduceRequestV2",
    ),
    pytest.param(
        request(3, "tx", -1, 500, TOPICS),
        f"""0000002d | 0000 0003 00000007 0003 636c69   # size 45
            0002 7478                                 # transactional_id "tx", first
            ffff 000001f4 | {TOPIC_DATA}              # acks -1, timeout 500""",
        id="ProduceRequestV3",
    ),
    *(
        pytest.param(
            request(version, None, 1, 1000, TOPICS),
            f"""0000002b | 0000 000{version} 00000007 0003 636c69   # size 43
                ffff                                  # transactional_id null
                0001 000003e8 | {TOPIC_DATA}""",
            id=f"ProduceRequestV{version}",
        )
        for version in range(4, 9)
    ),
]

PARTITION = "00000001 0001 74 | 00000001 00000000 0000 0000000000000005"  # ["t": [0, error 0, offset 5
RESPONSES = [
    *(
        pytest.param(
            response(version, 0, 0, 5, -1, throttle_time_ms=100),
            f"""00000029 | 00000007 | {PARTITION}
                ffffffffffffffff                      # log_append_time_ms -1 (CreateTime)]]
                00000064                              # throttle time 100""",
            id=f"ProduceResponseV{version}",
        )
        for version in (2, 3, 4)
    ),
    *(
        pytest.param(
            response(version, 0, 0, 5, -1, 2),
            f"""00000031 | 00000007 | {PARTITION}
                ffffffffffffffff 0000000000000002     # log_append_time_ms -1, log_start_offset 2]]
                00000000""",
            id=f"ProduceResponseV{version}",
        )
        for version in (5, 6, 7)
    ),
    pytest.param(
        response(8, 0, 87, -1, -1, -1, [p.RecordError(1, "bad")], "m"),
        """00000041 | 00000007
           00000001 0001 74 | 00000001 00000000 0057 ffffffffffffffff   # error 87 (INVALID_RECORD), offset -1
           ffffffffffffffff ffffffffffffffff      # log_append_time_ms -1, log_start_offset -1
           00000001 00000001 0003 626164          # record_errors [batch index 1, "bad"]
           0001 6d                                # error_message "m"]]
           00000000""",
        id="ProduceResponseV8",
    ),
    pytest.param(
        response(8, 0, 0, 5, -1, 0, [], None),
        f"""00000037 | 00000007 | {PARTITION}
            ffffffffffffffff 0000000000000000     # log_append_time_ms -1, log_start_offset 0
            00000000 ffff                         # record_errors [], error_message null]]
            00000000""",
        id="ProduceResponseV8-no-errors",
    ),
]


@pytest.mark.parametrize("body, frame_hex", REQUESTS)
def test_request_golden_bytes(body, frame_hex):
    check_request(body, frame_hex)


@pytest.mark.parametrize("body, frame_hex", RESPONSES)
def test_response_golden_bytes(body, frame_hex):
    check_response(body, frame_hex)


def test_v3_and_later_requests_are_read_by_the_schema_not_the_v0_fast_path():
    frame = encode_request(request(3, None, 1, 1000, TOPICS), 7, "cli")
    assert decode_request(memoryview(frame)[4:]).body.transactional_id is None

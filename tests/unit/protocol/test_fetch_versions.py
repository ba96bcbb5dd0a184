"""Golden bytes of Fetch v2-v11 and ListOffsets v1-v5, both ways through the v08 codec.

Hand-assembled from Kafka 3.4's FetchRequest/FetchResponse and ListOffsetsRequest/ListOffsetsResponse JSON
field tables (each field with the versions that carry it). Fetch: v3 adds the request's ``max_bytes``; v4
``isolation_level`` (int8), each answered partition's ``last_stable_offset`` and nullable
``aborted_transactions`` ([producer_id int64, first_offset int64]); v5 ``log_start_offset`` both ways (in the
request after the fetch offset, in the answer after the last stable offset); v7 the request's ``session_id``,
``session_epoch`` (before the topics) and ``forgotten_topics_data`` (after them), the answer's ``error`` and
``session_id`` after the throttle time; v9 each requested partition's ``current_leader_epoch`` (after the
partition index); v11 the request's ``rack_id`` last and each answered partition's
``preferred_read_replica`` (before the records). ListOffsets: v1 drops ``max_num_offsets`` and answers
``timestamp`` + ``offset`` instead of the offset list; v2 adds ``isolation_level`` and the answer's
``throttle_time_ms`` first; v4 ``current_leader_epoch`` (after the partition index) and the answer's
``leader_epoch``. Correlation id 7, client id "cli"; the size prefix is the length of the hex that follows.
"""

from __future__ import annotations

import pytest

from tests.unit.protocol.golden08 import HELLO_ENTRY, hexbytes
from tests.unit.protocol.test_v08_client import check_request, check_response
from zkafka.protocol.fetch import FETCH_REQUEST, FETCH_RESPONSE
from zkafka.protocol.offsets import LIST_OFFSETS_REQUEST, LIST_OFFSETS_RESPONSE
from zkafka.protocol.versioned import make


def framed(text: str) -> str:
    """``text`` with its ``int32 size`` in front."""
    return f"{len(hexbytes(text)):08x} | {text}"


def fetch_request(version: int):
    partition = {
        "partition": 0,
        "current_leader_epoch": 5,
        "fetch_offset": 100,
        "log_start_offset": -1,
        "max_bytes": 1 << 20,
    }
    return make(
        FETCH_REQUEST[version],
        replica_id=-1,
        max_wait_ms=500,
        min_bytes=1,
        max_bytes=50 << 20,
        isolation_level=1,
        session_id=42,
        session_epoch=3,
        topics=[{"topic": "t", "partitions": [partition]}],
        forgotten_topics_data=[{"topic": "u", "partitions": [1, 2]}],
        rack_id="rc",
    )


def fetch_request_hex(v: int) -> str:
    return framed(
        f"""0001 {v:04x} 00000007 0003 636c69              # Fetch v{v}, correlation 7, "cli"
        ffffffff 000001f4 00000001                       # replica -1, max wait 500, min bytes 1
        {"03200000" if v >= 3 else ""}                   # v3: max_bytes 50 MiB
        {"01" if v >= 4 else ""}                         # v4: isolation_level read_committed
        {"0000002a 00000003" if v >= 7 else ""}          # v7: session 42, epoch 3
        00000001 0001 74 00000001 00000000               # ["t": [partition 0,
        {"00000005" if v >= 9 else ""}                   #   v9: current_leader_epoch 5
        0000000000000064                                 #   fetch offset 100
        {"ffffffffffffffff" if v >= 5 else ""}           #   v5: log_start_offset -1
        00100000                                         #   max bytes 1 MiB]]
        {"00000001 0001 75 00000002 00000001 00000002" if v >= 7 else ""}  # v7: forget ["u": [1, 2]]
        {"0002 7263" if v >= 11 else ""}                 # v11: rack_id "rc"
        """
    )


def fetch_response(version: int, aborted=None):
    partition = {
        "partition": 0,
        "error": 0,
        "high_watermark": 1,
        "last_stable_offset": 1,
        "log_start_offset": 0,
        "aborted_transactions": aborted,
        "preferred_read_replica": -1,
        "message_set": HELLO_ENTRY,
    }
    return make(
        FETCH_RESPONSE[version],
        throttle_time_ms=100,
        error=0,
        session_id=42,
        topics=[{"topic": "t", "partitions": [partition]}],
    )


def fetch_response_hex(v: int, aborted: str = "ffffffff") -> str:
    return framed(
        f"""00000007 00000064                              # correlation 7, throttle 100
        {"0000 0000002a" if v >= 7 else ""}              # v7: error 0, session 42
        00000001 0001 74 00000001 00000000 0000          # ["t": [partition 0, error 0,
        0000000000000001                                 #   high watermark 1
        {"0000000000000001" if v >= 4 else ""}           #   v4: last_stable_offset 1
        {"0000000000000000" if v >= 5 else ""}           #   v5: log_start_offset 0
        {aborted if v >= 4 else ""}                      #   v4: aborted_transactions
        {"ffffffff" if v >= 11 else ""}                  #   v11: preferred_read_replica -1
        0000001f {HELLO_ENTRY.hex()}                     #   records]]
        """
    )


def list_offsets_request(version: int):
    partition = {"partition": 0, "current_leader_epoch": 3, "time": -2}
    return make(
        LIST_OFFSETS_REQUEST[version],
        replica_id=-1,
        isolation_level=0,
        topics=[{"topic": "t", "partitions": [partition]}],
    )


def list_offsets_request_hex(v: int) -> str:
    return framed(
        f"""0002 {v:04x} 00000007 0003 636c69              # ListOffsets v{v}
        ffffffff {"00" if v >= 2 else ""}                # replica -1, v2: isolation_level 0
        00000001 0001 74 00000001 00000000               # ["t": [partition 0,
        {"00000003" if v >= 4 else ""}                   #   v4: current_leader_epoch 3
        fffffffffffffffe                                 #   time -2 (earliest)]]
        """
    )


def list_offsets_response(version: int):
    partition = {"partition": 0, "error": 0, "timestamp": -1, "offset": 5, "leader_epoch": 3}
    return make(LIST_OFFSETS_RESPONSE[version], throttle_time_ms=0, topics=[{"topic": "t", "partitions": [partition]}])


def list_offsets_response_hex(v: int) -> str:
    return framed(
        f"""00000007 {"00000000" if v >= 2 else ""}        # correlation 7, v2: throttle 0
        00000001 0001 74 00000001 00000000 0000          # ["t": [partition 0, error 0,
        ffffffffffffffff 0000000000000005                #   timestamp -1, offset 5
        {"00000003" if v >= 4 else ""}                   #   v4: leader_epoch 3]]
        """
    )


REQUESTS = [
    *(pytest.param(fetch_request(v), fetch_request_hex(v), id=f"FetchRequestV{v}") for v in range(2, 12)),
    *(
        pytest.param(list_offsets_request(v), list_offsets_request_hex(v), id=f"ListOffsetsRequestV{v}")
        for v in range(1, 6)
    ),
]
RESPONSES = [
    *(pytest.param(fetch_response(v), fetch_response_hex(v), id=f"FetchResponseV{v}") for v in range(2, 12)),
    pytest.param(
        fetch_response(4, [{"producer_id": 7, "first_offset": 3}]),
        fetch_response_hex(4, "00000001 0000000000000007 0000000000000003"),
        id="FetchResponseV4-aborted",
    ),
    *(
        pytest.param(list_offsets_response(v), list_offsets_response_hex(v), id=f"ListOffsetsResponseV{v}")
        for v in range(1, 6)
    ),
]


@pytest.mark.parametrize("body, frame_hex", REQUESTS)
def test_request_golden_bytes(body, frame_hex):
    check_request(body, frame_hex)


@pytest.mark.parametrize("body, frame_hex", RESPONSES)
def test_response_golden_bytes(body, frame_hex):
    check_response(body, frame_hex)


def test_the_fields_a_version_lacks_are_left_out():
    assert "session_id" not in FETCH_REQUEST[6].SCHEMA.record._fields
    assert FETCH_REQUEST[7].SCHEMA.record._fields[-1] == "forgotten_topics_data"
    assert fetch_request(2) == fetch_request(1)[:] and type(fetch_request(2)).__name__ == "FetchRequestV2"

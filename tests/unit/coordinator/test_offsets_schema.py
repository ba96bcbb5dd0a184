"""Golden bytes of the ``__consumer_offsets`` records (sheet §10.3), hand-written, and the group → partition map."""

from __future__ import annotations

import pytest

from tests.unit.protocol.golden08 import hexbytes
from zkafka.coordinator.offsets_schema import (
    GroupKey,
    GroupMemberRecord,
    GroupValueV0,
    OffsetAndMetadata,
    OffsetKey,
    group_key,
    group_value,
    offset_key,
    offset_value,
    partition_for,
    read_group_value,
    read_key,
    read_offset_value,
)
from zkafka.errors import InvalidRequestError

OFFSET_KEY_G_T_3 = hexbytes("0001 | 0001 67 | 0001 74 | 00000003")  # v1, group "g", topic "t", partition 3
GROUP_KEY_G = hexbytes("0002 | 0001 67")
OFFSET_VALUE_V1 = hexbytes(
    """0001 | 00000000 0000002a | 0002 6d64 |        # v1, offset 42, metadata "md"
       00000000 000003e8 | 00000000 000007d0         # commit 1000, expire 2000"""
)
OFFSET_VALUE_V0 = hexbytes("0000 | 00000000 00000007 | 0000 | 00000000 00000064")  # offset 7, "", ts 100
GROUP_VALUE = hexbytes(
    """0000 | 0008 636f6e73756d6572 | 00000002 |      # v0, protocol type "consumer", generation 2
       0005 72616e6765 | 0003 632d31 |                # protocol "range", leader "c-1"
       00000001 | 0003 632d31 | 0001 63 |             # 1 member: id "c-1", client id "c"
       0006 2f312e322e33 | 00007530 |                 # host "/1.2.3", session timeout 30000
       00000002 0102 | 00000000                       # subscription 01 02, assignment empty"""
)
GROUP_RECORD = GroupValueV0(
    "consumer", 2, "range", "c-1", [GroupMemberRecord("c-1", "c", "/1.2.3", 30000, b"\x01\x02", b"")]
)


def test_offset_key_golden_bytes() -> None:
    assert offset_key("g", "t", 3) == OFFSET_KEY_G_T_3
    assert read_key(OFFSET_KEY_G_T_3) == OffsetKey("g", "t", 3)


def test_offset_key_version_0_reads_the_same() -> None:
    assert read_key(b"\x00\x00" + OFFSET_KEY_G_T_3[2:]) == OffsetKey("g", "t", 3)


def test_group_key_golden_bytes() -> None:
    assert group_key("g") == GROUP_KEY_G
    assert read_key(GROUP_KEY_G) == GroupKey("g")


def test_offset_value_v1_golden_bytes() -> None:
    value = OffsetAndMetadata(42, "md", 1000, 2000)
    assert offset_value(value) == OFFSET_VALUE_V1
    assert read_offset_value(OFFSET_VALUE_V1, retention_ms=5) == value


def test_offset_value_v0_expires_after_the_retention() -> None:
    assert read_offset_value(OFFSET_VALUE_V0, retention_ms=50) == OffsetAndMetadata(7, "", 100, 150)


def test_group_value_golden_bytes() -> None:
    assert group_value(GROUP_RECORD) == GROUP_VALUE
    assert read_group_value(GROUP_VALUE) == GROUP_RECORD


@pytest.mark.parametrize(
    ("data", "reader", "message"),
    [
        (hexbytes("0003 0001 67"), read_key, "unknown __consumer_offsets key version 3"),
        (OFFSET_KEY_G_T_3 + b"\x00", read_key, "malformed offset key v1"),
        (hexbytes("0002 0001"), read_key, "malformed group key"),
        (b"", read_key, "truncated"),
        (
            hexbytes("0002") + OFFSET_VALUE_V1[2:],
            lambda d: read_offset_value(d, 0),
            "unknown offset value version 2",
        ),
        (hexbytes("0001") + GROUP_VALUE[2:], read_group_value, "unknown group metadata value version 1"),
        (GROUP_VALUE[:-1], read_group_value, "malformed group value v0"),
    ],
)
def test_bad_records_are_one_line_errors(data: bytes, reader, message: str) -> None:
    with pytest.raises(InvalidRequestError, match=message):
        reader(data)


@pytest.mark.parametrize(
    ("group", "partition"),
    [
        ("g", 103 % 50),  # hashCode 103
        ("my-group", 1906497762 % 50),  # hashCode -1906497762: abs, then mod
        ("console-consumer-12345", 158455506 % 50),
        ("polygenelubricants", 0),  # hashCode -2^31: Utils.abs gives 0 (Math.abs would stay negative)
        ("", 0),
    ],
)
def test_partition_for_is_abs_java_hash_mod_n(group: str, partition: int) -> None:
    assert partition_for(group) == partition


def test_partition_for_other_partition_counts() -> None:
    assert partition_for("my-group", 7) == 1906497762 % 7
    assert partition_for("my-group", 1) == 0

"""Golden bytes of the ``__consumer_offsets`` records (sheet §10.3), hand-written, and the group → partition map."""

from __future__ import annotations

import pytest

from tests.unit.protocol.golden08 import hexbytes
from zkafka.coordinator.offsets_schema import (
    GroupKey,
    GroupMemberRecord,
    GroupValue,
    OffsetAndMetadata,
    OffsetKey,
    RecordVersions,
    group_key,
    group_value,
    offset_key,
    offset_value,
    partition_for,
    read_group_value,
    read_key,
    read_offset_value,
    record_versions,
)
from zkafka.errors import InvalidRequestError

OFFSET_KEY_G_T_3 = hexbytes("0001 | 0001 67 | 0001 74 | 00000003")  # v1, group "g", topic "t", partition 3
GROUP_KEY_G = hexbytes("0002 | 0001 67")
OFFSET = OffsetAndMetadata(42, "md", 1000, 2000, leader_epoch=5)
OFFSET_VALUES = {  # OffsetCommitValue.json: offset · leaderEpoch (3+) · metadata · commitTimestamp · expireTimestamp (1)
    0: "0000 | 00000000 0000002a | 0002 6d64 | 00000000 000003e8",
    1: "0001 | 00000000 0000002a | 0002 6d64 | 00000000 000003e8 | 00000000 000007d0",
    2: "0002 | 00000000 0000002a | 0002 6d64 | 00000000 000003e8",
    3: "0003 | 00000000 0000002a | 00000005 | 0002 6d64 | 00000000 000003e8",
}
GROUP_RECORD = GroupValue(
    "consumer", 2, "range", "c-1", 1234, [GroupMemberRecord("c-1", "i-1", "c", "/1.2.3", 45000, 30000, b"\x01\x02", b"")]
)
_HEAD = "0008 636f6e73756d6572 | 00000002 | 0005 72616e6765 | 0003 632d31"  # "consumer", generation 2, "range", "c-1"
_MEMBER_ID, _CLIENT = "00000001 | 0003 632d31", "0001 63 | 0006 2f312e322e33"  # 1 member "c-1"; client "c" at "/1.2.3"
_REST = "00007530 | 00000002 0102 | 00000000"  # session timeout 30000, subscription 01 02, assignment empty
GROUP_VALUES = {  # GroupMetadataValue.json: v1 rebalanceTimeout, v2 currentStateTimestamp, v3 groupInstanceId
    0: f"0000 | {_HEAD} | {_MEMBER_ID} | {_CLIENT} | {_REST}",
    1: f"0001 | {_HEAD} | {_MEMBER_ID} | {_CLIENT} | 0000afc8 | {_REST}",
    2: f"0002 | {_HEAD} | 00000000 000004d2 | {_MEMBER_ID} | {_CLIENT} | 0000afc8 | {_REST}",
    3: f"0003 | {_HEAD} | 00000000 000004d2 | {_MEMBER_ID} | 0003 692d31 | {_CLIENT} | 0000afc8 | {_REST}",
}
GROUP_VALUE = hexbytes(GROUP_VALUES[0])


def test_offset_key_golden_bytes() -> None:
    assert offset_key("g", "t", 3) == OFFSET_KEY_G_T_3
    assert read_key(OFFSET_KEY_G_T_3) == OffsetKey("g", "t", 3)


def test_offset_key_version_0_reads_the_same() -> None:
    assert read_key(b"\x00\x00" + OFFSET_KEY_G_T_3[2:]) == OffsetKey("g", "t", 3)


def test_group_key_golden_bytes() -> None:
    assert group_key("g") == GROUP_KEY_G
    assert read_key(GROUP_KEY_G) == GroupKey("g")


@pytest.mark.parametrize("version", range(4))
def test_offset_value_golden_bytes_of_every_version(version) -> None:
    assert offset_value(OFFSET, version) == hexbytes(OFFSET_VALUES[version])
    read = read_offset_value(hexbytes(OFFSET_VALUES[version]), retention_ms=50)
    expire = 2000 if version == 1 else 1050  # without v1's expire time: commit time + retention
    assert read == OFFSET._replace(expire_timestamp=expire, leader_epoch=5 if version == 3 else -1)


def test_offset_value_v1_is_the_default() -> None:
    assert offset_value(OffsetAndMetadata(42, "md", 1000, 2000)) == hexbytes(OFFSET_VALUES[1])


@pytest.mark.parametrize("version", range(4))
def test_group_value_golden_bytes_of_every_version(version) -> None:
    data = hexbytes(GROUP_VALUES[version])
    assert group_value(GROUP_RECORD, version) == data
    member = GROUP_RECORD.members[0]
    lost = {  # what older versions do not carry, as it reads back
        0: dict(current_state_timestamp=-1, members=[member._replace(group_instance_id=None, rebalance_timeout=30000)]),
        1: dict(current_state_timestamp=-1, members=[member._replace(group_instance_id=None)]),
        2: dict(members=[member._replace(group_instance_id=None)]),
        3: {},
    }[version]
    assert read_group_value(data) == GROUP_RECORD._replace(**lost)


def test_an_empty_groups_record_has_null_protocol_and_leader() -> None:
    empty = GroupValue("consumer", 3, None, None, 1234, [])
    data = group_value(empty, 3)
    assert data == hexbytes("0003 | 0008 636f6e73756d6572 | 00000003 | ffff | ffff | 00000000 000004d2 | 00000000")
    assert read_group_value(data) == empty


@pytest.mark.parametrize(
    ("ibp", "versions"),
    [
        (None, (1, 0)),  # unset: what zkafka wrote as 0.9
        ("0.8.2", (1, 0)),
        ("0.9.0", (1, 0)),
        ("0.10.0-IV1", (1, 0)),
        ("0.10.1-IV0", (1, 1)),
        ("2.0", (1, 1)),
        ("2.1-IV0", (2, 2)),
        ("2.1-IV1", (3, 2)),
        ("2.1", (3, 2)),  # a release without a step: its last
        ("2.2.1", (3, 2)),
        ("2.3-IV0", (3, 3)),
        ("3.4", (3, 3)),
    ],
)
def test_the_versions_written_follow_the_inter_broker_protocol_version_as_kafka_3_4(ibp, versions) -> None:
    assert record_versions(ibp) == RecordVersions(*versions)


@pytest.mark.parametrize(
    ("data", "reader", "message"),
    [
        (hexbytes("0003 0001 67"), read_key, "unknown __consumer_offsets key version 3"),
        (OFFSET_KEY_G_T_3 + b"\x00", read_key, "malformed offset key v1"),
        (hexbytes("0002 0001"), read_key, "malformed group key"),
        (b"", read_key, "truncated"),
        (hexbytes("0004") + OFFSET_KEY_G_T_3[2:], lambda d: read_offset_value(d, 0), "unknown offset value version 4"),
        (hexbytes("0004") + GROUP_VALUE[2:], read_group_value, "unknown group metadata value version 4"),
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

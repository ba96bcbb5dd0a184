"""Golden bytes of every version Kafka 3.4 serves in ZooKeeper mode of the group and offset APIs beyond the
0.9.0.1 and KIP-345 ones (test_group_membership.py, test_v08_client.py): FindCoordinator v1-v4, JoinGroup
v1-v9, SyncGroup, Heartbeat v1-v4, LeaveGroup v1-v5, OffsetCommit v3-v8, OffsetFetch v2-v8, DescribeGroups
v1-v5, ListGroups v1-v4, DeleteGroups v0-v2 and OffsetDelete v0.

Each frame is assembled here, field by field, from the field tables of the versions (Kafka 3.4's message
JSONs; the notes' ``001_…``): a classic string is ``int16 length | bytes``, a compact one ``uvarint(length +
1) | bytes`` (0: null), arrays likewise with ``int32`` / ``uvarint`` counts, and a flexible version ends every
struct with an empty tag buffer ``00`` (its request header after the client id too, its response header
after the correlation id). The small writers below are this test's own, never the codec under test.
"""

from __future__ import annotations

import pytest

from tests.unit.protocol.golden08 import METADATA_T
from tests.unit.protocol.test_v08_client import check_request, check_response
from zkafka.protocol import group_membership as gm
from zkafka.protocol import offset_commit as oc
from zkafka.protocol.versioned import make

META = METADATA_T


def _uvarint(n: int) -> str:
    out = []
    while n > 0x7F:
        out.append(f"{(n & 0x7F) | 0x80:02x}")
        n >>= 7
    out.append(f"{n:02x}")
    return "".join(out)


class Hex:
    """Writers of one version's primitive fields: classic or compact (flexible)."""

    def __init__(self, flexible: bool) -> None:
        self.flexible = flexible
        self.tags = "00" if flexible else ""  # an empty tag buffer ends each struct of a flexible version

    def s(self, text: str | None) -> str:
        if text is None:
            return "00" if self.flexible else "ffff"
        data = text.encode().hex()
        return _uvarint(len(text) + 1) + data if self.flexible else f"{len(text):04x}{data}"

    def b(self, data: bytes) -> str:
        return _uvarint(len(data) + 1) + data.hex() if self.flexible else f"{len(data):08x}{data.hex()}"

    def arr(self, items: list[str] | None) -> str:
        if items is None:
            return "00" if self.flexible else "ffffffff"
        count = _uvarint(len(items) + 1) if self.flexible else f"{len(items):08x}"
        return count + "".join(items)


def i8(n: int) -> str:
    return f"{n & 0xFF:02x}"


def i16(n: int) -> str:
    return f"{n & 0xFFFF:04x}"


def i32(n: int) -> str:
    return f"{n & 0xFFFFFFFF:08x}"


def i64(n: int) -> str:
    return f"{n & 0xFFFFFFFFFFFFFFFF:016x}"


def request_frame(api_key: int, version: int, flexible: bool, body: str) -> str:
    header = i16(api_key) + i16(version) + i32(7) + "0003636c69" + ("00" if flexible else "")
    return f"{(len(header) + len(body)) // 2:08x}" + header + body


def response_frame(flexible: bool, body: str) -> str:
    header = i32(7) + ("00" if flexible else "")
    return f"{(len(header) + len(body)) // 2:08x}" + header + body


REQUESTS: list = []
RESPONSES: list = []


def golden(requests: tuple, responses: tuple, versions: range, flexible_since: int, request, response) -> None:
    """One request and one response param per version: ``request(v, h)`` / ``response(v, h)`` give
    ``(values, body hex)`` for version ``v`` with the writers ``h``."""
    for version in versions:
        h = Hex(version >= flexible_since)
        values, body = request(version, h)
        cls = requests[version]
        frame = request_frame(cls.API_KEY, version, h.flexible, body)
        REQUESTS.append(pytest.param(make(cls, **values), frame, id=cls.__name__))
        values, body = response(version, h)
        cls = responses[version]
        RESPONSES.append(pytest.param(make(cls, **values), response_frame(h.flexible, body), id=cls.__name__))


# -- JoinGroup v1-v9 ---------------------------------------------------------------------------------------


def _join_request(v: int, h: Hex) -> tuple[dict, str]:
    values = dict(
        group_id="g", session_timeout=45000, rebalance_timeout=300000, member_id="", group_instance_id="i-1",
        protocol_type="consumer", reason="r",
        group_protocols=[dict(protocol_name="range", protocol_metadata=META)],
    )  # fmt: skip
    body = h.s("g") + i32(45000) + i32(300000) + h.s("")
    body += h.s("i-1") if v >= 5 else ""
    body += h.s("consumer") + h.arr([h.s("range") + h.b(META) + h.tags])
    body += h.s("r") if v >= 8 else ""
    return values, body + h.tags


def _join_response(v: int, h: Hex) -> tuple[dict, str]:
    values = dict(
        throttle_time_ms=0, error=0, generation_id=1, protocol_type="consumer", group_protocol="range",
        leader_id="m", skip_assignment=False, member_id="m",
        members=[dict(member_id="m", group_instance_id="i-1", member_metadata=META)],
    )  # fmt: skip
    body = i32(0) if v >= 2 else ""
    body += i16(0) + i32(1)
    body += h.s("consumer") if v >= 7 else ""
    body += h.s("range") + h.s("m")
    body += "00" if v >= 9 else ""  # skip_assignment false
    member = h.s("m") + (h.s("i-1") if v >= 5 else "") + h.b(META) + h.tags
    return values, body + h.s("m") + h.arr([member]) + h.tags


golden(gm.JOIN_GROUP_REQUEST, gm.JOIN_GROUP_RESPONSE, range(1, 10), 6, _join_request, _join_response)

# -- SyncGroup v1, v2, v4, v5 (v0, v3: test_group_membership) ----------------------------------------------

ASSIGNMENT = b"\x00\x00\x00\x00\x00\x00\x00\x00"


def _sync_request(v: int, h: Hex) -> tuple[dict, str]:
    values = dict(
        group_id="g", generation_id=1, member_id="m", group_instance_id=None, protocol_type="consumer",
        protocol_name="range", group_assignment=[dict(member_id="m", member_assignment=ASSIGNMENT)],
    )  # fmt: skip
    body = h.s("g") + i32(1) + h.s("m")
    body += h.s(None) if v >= 3 else ""
    body += h.s("consumer") + h.s("range") if v >= 5 else ""
    return values, body + h.arr([h.s("m") + h.b(ASSIGNMENT) + h.tags]) + h.tags


def _sync_response(v: int, h: Hex) -> tuple[dict, str]:
    values = dict(
        throttle_time_ms=0, error=0, protocol_type="consumer", protocol_name="range", member_assignment=ASSIGNMENT
    )
    body = i32(0) + i16(0)
    body += h.s("consumer") + h.s("range") if v >= 5 else ""
    return values, body + h.b(ASSIGNMENT) + h.tags


golden(gm.SYNC_GROUP_REQUEST, gm.SYNC_GROUP_RESPONSE, (1, 2, 4, 5), 4, _sync_request, _sync_response)

# -- Heartbeat v1, v2, v4 --------------------------------------------------------------------------------------


def _heartbeat_request(v: int, h: Hex) -> tuple[dict, str]:
    values = dict(group_id="g", generation_id=1, member_id="m", group_instance_id="i-1")
    body = h.s("g") + i32(1) + h.s("m") + (h.s("i-1") if v >= 3 else "")
    return values, body + h.tags


def _heartbeat_response(v: int, h: Hex) -> tuple[dict, str]:
    return dict(throttle_time_ms=0, error=27), i32(0) + i16(27) + h.tags  # REBALANCE_IN_PROGRESS


golden(gm.HEARTBEAT_REQUEST, gm.HEARTBEAT_RESPONSE, (1, 2, 4), 4, _heartbeat_request, _heartbeat_response)

# -- LeaveGroup v1, v2, v4, v5 -------------------------------------------------------------------------------


def _leave_request(v: int, h: Hex) -> tuple[dict, str]:
    values = dict(group_id="g", member_id="m", members=[dict(member_id="m", group_instance_id="i-1", reason="r")])
    if v < 3:
        return values, h.s("g") + h.s("m")
    member = h.s("m") + h.s("i-1") + (h.s("r") if v >= 5 else "") + h.tags
    return values, h.s("g") + h.arr([member]) + h.tags


def _leave_response(v: int, h: Hex) -> tuple[dict, str]:
    values = dict(throttle_time_ms=0, error=0, members=[dict(member_id="m", group_instance_id="i-1", error=0)])
    body = i32(0) + i16(0)
    if v >= 3:
        body += h.arr([h.s("m") + h.s("i-1") + i16(0) + h.tags])
    return values, body + h.tags


golden(gm.LEAVE_GROUP_REQUEST, gm.LEAVE_GROUP_RESPONSE, (1, 2, 4, 5), 4, _leave_request, _leave_response)

# -- DescribeGroups v1-v5 ----------------------------------------------------------------------------------


def _describe_request(v: int, h: Hex) -> tuple[dict, str]:
    body = h.arr([h.s("g")]) + ("01" if v >= 3 else "")
    return dict(group_ids=["g"], include_authorized_operations=True), body + h.tags


def _describe_response(v: int, h: Hex) -> tuple[dict, str]:
    member = dict(
        member_id="m", group_instance_id=None, client_id="c", client_host="/h", member_metadata=META,
        member_assignment=ASSIGNMENT,
    )  # fmt: skip
    group = dict(
        error=0, group_id="g", state="Stable", protocol_type="consumer", protocol="range", members=[member],
        authorized_operations=-(1 << 31),
    )  # fmt: skip
    member_hex = h.s("m") + (h.s(None) if v >= 4 else "") + h.s("c") + h.s("/h") + h.b(META) + h.b(ASSIGNMENT)
    group_hex = i16(0) + h.s("g") + h.s("Stable") + h.s("consumer") + h.s("range") + h.arr([member_hex + h.tags])
    group_hex += i32(-(1 << 31)) if v >= 3 else ""
    return dict(throttle_time_ms=0, groups=[group]), i32(0) + h.arr([group_hex + h.tags]) + h.tags


golden(
    gm.DESCRIBE_GROUPS_REQUEST, gm.DESCRIBE_GROUPS_RESPONSE, range(1, 6), 5, _describe_request, _describe_response
)

# -- ListGroups v1-v4 -----------------------------------------------------------------------------------------


def _list_request(v: int, h: Hex) -> tuple[dict, str]:
    return dict(states_filter=["Stable"]), (h.arr([h.s("Stable")]) if v >= 4 else "") + h.tags


def _list_response(v: int, h: Hex) -> tuple[dict, str]:
    group = h.s("g") + h.s("consumer") + (h.s("Stable") if v >= 4 else "") + h.tags
    values = dict(throttle_time_ms=0, error=0, groups=[dict(group_id="g", protocol_type="consumer", group_state="Stable")])
    return values, i32(0) + i16(0) + h.arr([group]) + h.tags


golden(gm.LIST_GROUPS_REQUEST, gm.LIST_GROUPS_RESPONSE, range(1, 5), 3, _list_request, _list_response)

# -- DeleteGroups v0-v2 -------------------------------------------------------------------------------------


def _delete_groups_request(v: int, h: Hex) -> tuple[dict, str]:
    return dict(group_ids=["g", "h"]), h.arr([h.s("g"), h.s("h")]) + h.tags


def _delete_groups_response(v: int, h: Hex) -> tuple[dict, str]:
    values = dict(throttle_time_ms=0, results=[dict(group_id="g", error=0), dict(group_id="h", error=68)])
    results = [h.s("g") + i16(0) + h.tags, h.s("h") + i16(68) + h.tags]  # 68: NON_EMPTY_GROUP
    return values, i32(0) + h.arr(results) + h.tags


golden(
    gm.DELETE_GROUPS_REQUEST, gm.DELETE_GROUPS_RESPONSE, range(3), 2, _delete_groups_request, _delete_groups_response
)

# -- FindCoordinator v1-v4 ---------------------------------------------------------------------------------


def _find_request(v: int, h: Hex) -> tuple[dict, str]:
    values = dict(group_id="g", key_type=0, coordinator_keys=["g", "h"])
    if v >= 4:
        return values, i8(0) + h.arr([h.s("g"), h.s("h")]) + h.tags
    return values, h.s("g") + i8(0) + h.tags


def _find_response(v: int, h: Hex) -> tuple[dict, str]:
    coordinator = dict(key="g", node_id=1, host="h", port=9092, error=0, error_message=None)
    values = dict(throttle_time_ms=0, error=0, error_message=None, node_id=1, host="h", port=9092)
    if v >= 4:
        entry = h.s("g") + i32(1) + h.s("h") + i32(9092) + i16(0) + h.s(None) + h.tags
        return values | {"coordinators": [coordinator]}, i32(0) + h.arr([entry]) + h.tags
    return values, i32(0) + i16(0) + h.s(None) + i32(1) + h.s("h") + i32(9092) + h.tags


golden(oc.FIND_COORDINATOR_REQUEST, oc.FIND_COORDINATOR_RESPONSE, range(1, 5), 3, _find_request, _find_response)

# -- OffsetCommit v3-v8 --------------------------------------------------------------------------------------


def _commit_request(v: int, h: Hex) -> tuple[dict, str]:
    partition = dict(partition=0, offset=10, committed_leader_epoch=-1, metadata=None)
    values = dict(
        group_id="g", generation_id=1, member_id="m", group_instance_id=None, retention_time_ms=-1,
        topics=[dict(topic="t", partitions=[partition])],
    )  # fmt: skip
    body = h.s("g") + i32(1) + h.s("m")
    body += h.s(None) if v >= 7 else ""
    body += i64(-1) if v <= 4 else ""
    part = i32(0) + i64(10) + (i32(-1) if v >= 6 else "") + h.s(None) + h.tags
    return values, body + h.arr([h.s("t") + h.arr([part]) + h.tags]) + h.tags


def _commit_response(v: int, h: Hex) -> tuple[dict, str]:
    values = dict(throttle_time_ms=0, topics=[dict(topic="t", partitions=[dict(partition=0, error=0)])])
    topic = h.s("t") + h.arr([i32(0) + i16(0) + h.tags]) + h.tags
    return values, i32(0) + h.arr([topic]) + h.tags


golden(oc.OFFSET_COMMIT_REQUEST, oc.OFFSET_COMMIT_RESPONSE, range(3, 9), 8, _commit_request, _commit_response)

# -- OffsetFetch v2-v8 -------------------------------------------------------------------------------------


def _fetch_request(v: int, h: Hex) -> tuple[dict, str]:
    topics = [dict(topic="t", partitions=[0])]
    values = dict(
        group_id="g", topics=None if v == 2 else topics, require_stable=False,
        groups=[dict(group_id="g", topics=topics), dict(group_id="h", topics=None)],
    )  # fmt: skip
    topic = h.s("t") + h.arr([i32(0)]) + h.tags
    if v >= 8:
        groups = [h.s("g") + h.arr([topic]) + h.tags, h.s("h") + h.arr(None) + h.tags]
        return values, h.arr(groups) + "00" + h.tags  # require_stable false
    body = h.s("g") + (h.arr(None) if v == 2 else h.arr([topic]))
    return values, body + ("00" if v >= 7 else "") + h.tags


def _fetch_response(v: int, h: Hex) -> tuple[dict, str]:
    partition = dict(partition=0, offset=10, committed_leader_epoch=-1, metadata="", error=0)
    topics = [dict(topic="t", partitions=[partition])]
    values = dict(throttle_time_ms=0, topics=topics, error=0, groups=[dict(group_id="g", topics=topics, error=0)])
    part = i32(0) + i64(10) + (i32(-1) if v >= 5 else "") + h.s("") + i16(0) + h.tags
    topic = h.s("t") + h.arr([part]) + h.tags
    if v >= 8:
        return values, i32(0) + h.arr([h.s("g") + h.arr([topic]) + i16(0) + h.tags]) + h.tags
    body = (i32(0) if v >= 3 else "") + h.arr([topic]) + i16(0)
    return values, body + h.tags


golden(oc.OFFSET_FETCH_REQUEST, oc.OFFSET_FETCH_RESPONSE, range(2, 9), 6, _fetch_request, _fetch_response)

# -- OffsetDelete v0 -----------------------------------------------------------------------------------------


def _offset_delete_request(v: int, h: Hex) -> tuple[dict, str]:
    values = dict(group_id="g", topics=[dict(topic="t", partitions=[dict(partition=0)])])
    return values, h.s("g") + h.arr([h.s("t") + h.arr([i32(0)])])


def _offset_delete_response(v: int, h: Hex) -> tuple[dict, str]:
    values = dict(error=0, throttle_time_ms=0, topics=[dict(topic="t", partitions=[dict(partition=0, error=86)])])
    return values, i16(0) + i32(0) + h.arr([h.s("t") + h.arr([i32(0) + i16(86)])])  # 86: GROUP_SUBSCRIBED_TO_TOPIC


golden(
    oc.OFFSET_DELETE_REQUEST, oc.OFFSET_DELETE_RESPONSE, range(1), 1, _offset_delete_request, _offset_delete_response
)


@pytest.mark.parametrize("body, frame_hex", REQUESTS)
def test_request_golden_bytes(body, frame_hex):
    check_request(body, frame_hex)


@pytest.mark.parametrize("body, frame_hex", RESPONSES)
def test_response_golden_bytes(body, frame_hex):
    check_response(body, frame_hex)


def test_a_flexible_request_keeps_tagged_fields_it_does_not_know():
    """A JoinGroup v6 with an unknown tag (7: 2 bytes) in its body reads and writes it back."""
    h = Hex(True)
    body = h.s("g") + i32(45000) + i32(300000) + h.s("") + h.s(None) + h.s("consumer") + h.arr([])
    frame = request_frame(11, 6, True, body + "010702abcd")  # one tag: 7, 2 bytes
    cls = gm.JOIN_GROUP_REQUEST[6]
    value = make(cls, group_id="g", session_timeout=45000, rebalance_timeout=300000, member_id="",
                 group_instance_id=None, protocol_type="consumer", group_protocols=[])._replace(
        unknown_tagged_fields=((7, b"\xab\xcd"),))  # fmt: skip
    check_request(value, frame)

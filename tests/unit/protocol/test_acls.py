"""Golden bytes of DescribeAcls, CreateAcls and DeleteAcls v0-v3, both ways through the v08 codec. Hand-assembled
from Kafka 3.4's DescribeAcls/CreateAcls/DeleteAcls request and response JSON field tables: v1 adds the
pattern type after the resource name, v2 is flexible (compact strings and arrays, tag buffers), v3 as v2.
One ACL throughout: topic ``t`` (2), LITERAL (3), ``User:a`` from ``*``, Read (3), Allow (3); filters ANY (1).
Correlation id 7, client id "cli"."""

from __future__ import annotations

import pytest

from tests.unit.protocol.test_v08_client import check_request, check_response
from zkafka.protocol.acls import CREATE_ACLS_APIS, DELETE_ACLS_APIS, DESCRIBE_ACLS_APIS
from zkafka.protocol.versioned import make

TOPIC_FILTER = {
    "resource_type_filter": 2,
    "resource_name_filter": "t",
    "pattern_type_filter": 3,
    "principal_filter": None,
    "host_filter": None,
    "operation": 1,
    "permission_type": 1,
}
ACL = {"principal": "User:a", "host": "*", "operation": 3, "permission_type": 3}
BINDING = {"resource_type": 2, "resource_name": "t", "pattern_type": 3, **ACL}
V0, V1, FLEXIBLE = (0,), (1,), (2, 3)


def describe(version):
    return make(DESCRIBE_ACLS_APIS[version][0], **TOPIC_FILTER)


def described(version):
    resources = [{"resource_type": 2, "resource_name": "t", "pattern_type": 3, "acls": [ACL]}]
    response = DESCRIBE_ACLS_APIS[version][1]
    return make(response, throttle_time_ms=0, error=0, error_message=None, resources=resources)


def create(version):
    creation = {**BINDING, "resource_pattern_type": 3}
    return make(CREATE_ACLS_APIS[version][0], creations=[creation])


def created(version, error=0, message=None):
    return make(
        CREATE_ACLS_APIS[version][1], throttle_time_ms=0, results=[{"error": error, "error_message": message}]
    )


def delete(version):
    return make(DELETE_ACLS_APIS[version][0], filters=[TOPIC_FILTER])


def deleted(version):
    matching = {"error": 0, "error_message": None, **BINDING}
    result = {"error": 0, "error_message": None, "matching_acls": [matching]}
    return make(DELETE_ACLS_APIS[version][1], throttle_time_ms=0, filter_results=[result])


REQUESTS = [
    pytest.param(
        describe(0),
        "00000017 | 001d 0000 00000007 0003 636c69 | 02 0001 74 ffff ffff 01 01  # topic t, any principal/host",
        id="DescribeAclsRequestV0",
    ),
    pytest.param(
        describe(1),
        "00000018 | 001d 0001 00000007 0003 636c69 | 02 0001 74 03 ffff ffff 01 01  # LITERAL",
        id="DescribeAclsRequestV1",
    ),
    *(
        pytest.param(
            describe(v),
            f"00000017 | 001d 000{v} 00000007 0003 636c69 00 | 02 02 74 03 00 00 01 01 | 00  # compact, no tags",
            id=f"DescribeAclsRequestV{v}",
        )
        for v in FLEXIBLE
    ),
    pytest.param(
        create(0),
        "00000022 | 001e 0000 00000007 0003 636c69 | 00000001 02 0001 74 0006 557365723a61 0001 2a 03 03",
        id="CreateAclsRequestV0",
    ),
    pytest.param(
        create(1),
        "00000023 | 001e 0001 00000007 0003 636c69 | 00000001 02 0001 74 03 0006 557365723a61 0001 2a 03 03",
        id="CreateAclsRequestV1",
    ),
    *(
        pytest.param(
            create(v),
            f"00000020 | 001e 000{v} 00000007 0003 636c69 00 | 02 02 02 74 03 07 557365723a61 02 2a 03 03 00 | 00",
            id=f"CreateAclsRequestV{v}",
        )
        for v in FLEXIBLE
    ),
    pytest.param(
        delete(0),
        "0000001b | 001f 0000 00000007 0003 636c69 | 00000001 02 0001 74 ffff ffff 01 01",
        id="DeleteAclsRequestV0",
    ),
    pytest.param(
        delete(1),
        "0000001c | 001f 0001 00000007 0003 636c69 | 00000001 02 0001 74 03 ffff ffff 01 01",
        id="DeleteAclsRequestV1",
    ),
    *(
        pytest.param(
            delete(v),
            f"00000019 | 001f 000{v} 00000007 0003 636c69 00 | 02 02 02 74 03 00 00 01 01 00 | 00",
            id=f"DeleteAclsRequestV{v}",
        )
        for v in FLEXIBLE
    ),
]

RESPONSES = [
    pytest.param(
        described(0),
        """00000025 | 00000007 | 00000000 0000 ffff       # throttle 0, no error, null message
           00000001 02 0001 74 | 00000001 0006 557365723a61 0001 2a 03 03  # [t: [User:a from * Read Allow]]""",
        id="DescribeAclsResponseV0",
    ),
    pytest.param(
        described(1),
        """00000026 | 00000007 | 00000000 0000 ffff
           00000001 02 0001 74 03 | 00000001 0006 557365723a61 0001 2a 03 03  # LITERAL""",
        id="DescribeAclsResponseV1",
    ),
    *(
        pytest.param(
            described(v),
            """00000020 | 00000007 00 | 00000000 0000 00    # response header v1; null compact message
               02 02 02 74 03 | 02 07 557365723a61 02 2a 03 03 00 | 00 | 00""",
            id=f"DescribeAclsResponseV{v}",
        )
        for v in FLEXIBLE
    ),
    pytest.param(
        created(0), "00000010 | 00000007 | 00000000 | 00000001 0000 ffff", id="CreateAclsResponseV0"
    ),
    pytest.param(
        created(1, 42, "m"),
        "00000011 | 00000007 | 00000000 | 00000001 002a 0001 6d  # INVALID_REQUEST 'm'",
        id="CreateAclsResponseV1",
    ),
    *(
        pytest.param(
            created(v), "0000000f | 00000007 00 | 00000000 | 02 0000 00 00 | 00", id=f"CreateAclsResponseV{v}"
        )
        for v in FLEXIBLE
    ),
    pytest.param(
        deleted(0),
        """00000029 | 00000007 | 00000000 | 00000001 0000 ffff        # [no error:
           00000001 0000 ffff 02 0001 74 0006 557365723a61 0001 2a 03 03  #  [deleted: t User:a * Read Allow]]""",
        id="DeleteAclsResponseV0",
    ),
    pytest.param(
        deleted(1),
        """0000002a | 00000007 | 00000000 | 00000001 0000 ffff
           00000001 0000 ffff 02 0001 74 03 0006 557365723a61 0001 2a 03 03""",
        id="DeleteAclsResponseV1",
    ),
    *(
        pytest.param(
            deleted(v),
            """00000023 | 00000007 00 | 00000000 | 02 0000 00
               02 0000 00 02 02 74 03 07 557365723a61 02 2a 03 03 00 | 00 | 00""",
            id=f"DeleteAclsResponseV{v}",
        )
        for v in FLEXIBLE
    ),
]


@pytest.mark.parametrize("body, frame_hex", REQUESTS)
def test_request_golden_bytes(body, frame_hex):
    check_request(body, frame_hex)


@pytest.mark.parametrize("body, frame_hex", RESPONSES)
def test_response_golden_bytes(body, frame_hex):
    check_response(body, frame_hex)

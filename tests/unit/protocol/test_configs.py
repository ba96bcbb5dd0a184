"""Golden bytes of DescribeConfigs v0/v1/v4, AlterConfigs v0/v2 and DeleteRecords v0/v2, both ways through the
v08 codec. Hand-assembled from Kafka 3.4's DescribeConfigs/AlterConfigs/DeleteRecords request and response
JSON field tables: DescribeConfigs v1 adds ``include_synonyms`` and answers ``config_source`` (in place of
v0's ``is_default``) and ``synonyms``, v3 ``config_type`` and ``documentation``, v4 is flexible;
AlterConfigs v2 and DeleteRecords v2 are flexible. Correlation id 7, client id "cli"."""

from __future__ import annotations

import pytest

from tests.unit.protocol.test_v08_client import check_request, check_response
from zkafka.protocol.configs import ALTER_CONFIGS_APIS, DESCRIBE_CONFIGS_APIS
from zkafka.protocol.delete_records import DELETE_RECORDS_APIS
from zkafka.protocol.versioned import make

TOPIC_T = {"resource_type": 2, "resource_name": "t"}
CONFIG_KV = {
    "name": "k",
    "value": "v",
    "read_only": False,
    "is_default": True,
    "config_source": 5,
    "is_sensitive": False,
    "synonyms": [{"name": "k", "value": "v", "source": 5}],
    "config_type": 2,
    "documentation": None,
}


def describe(version, keys, synonyms=False):
    resources = [{**TOPIC_T, "configuration_keys": keys}]
    request = DESCRIBE_CONFIGS_APIS[version][0]
    return make(request, resources=resources, include_synonyms=synonyms, include_documentation=False)


def described(version, config):
    result = {**TOPIC_T, "error": 0, "error_message": None, "configs": [config]}
    return make(DESCRIBE_CONFIGS_APIS[version][1], throttle_time_ms=0, results=[result])


def alter(version):
    resources = [{**TOPIC_T, "configs": [{"name": "k", "value": "v"}]}]
    return make(ALTER_CONFIGS_APIS[version][0], resources=resources, validate_only=version == 2)


def altered(version, error, message):
    response = {**TOPIC_T, "error": error, "error_message": message}
    return make(ALTER_CONFIGS_APIS[version][1], throttle_time_ms=0, responses=[response])


DELETE_T0_AT_5 = [{"name": "t", "partitions": [{"partition": 0, "offset": 5}]}]
DELETED_T0_AT_5 = [{"name": "t", "partitions": [{"partition": 0, "low_watermark": 5, "error": 0}]}]

REQUESTS = [
    pytest.param(
        describe(0, None),
        "00000019 | 0020 0000 00000007 0003 636c69 | 00000001 02 0001 74 ffffffff  # [topic t, every key]",
        id="DescribeConfigsRequestV0",
    ),
    pytest.param(
        describe(1, ["k"], synonyms=True),
        "0000001d | 0020 0001 00000007 0003 636c69 | 00000001 02 0001 74 00000001 0001 6b | 01  # synonyms",
        id="DescribeConfigsRequestV1",
    ),
    pytest.param(
        describe(2, ["k"], synonyms=True),
        "0000001d | 0020 0002 00000007 0003 636c69 | 00000001 02 0001 74 00000001 0001 6b | 01  # as v1",
        id="DescribeConfigsRequestV2",
    ),
    pytest.param(
        describe(3, ["k"], synonyms=True),
        "0000001e | 0020 0003 00000007 0003 636c69 | 00000001 02 0001 74 00000001 0001 6b | 01 00  # no docs",
        id="DescribeConfigsRequestV3",
    ),
    pytest.param(
        describe(4, None),
        """00000017 | 0020 0004 00000007 0003 636c69 00   # header v2
           02 | 02 | 02 74 | 00 | 00                      # compact [topic t, null keys, no tags]
           00 00 | 00                                     # no synonyms, no documentation, no tags""",
        id="DescribeConfigsRequestV4",
    ),
    pytest.param(
        alter(0),
        "00000020 | 0021 0000 00000007 0003 636c69 | 00000001 02 0001 74 00000001 0001 6b 0001 76 | 00",
        id="AlterConfigsRequestV0",
    ),
    pytest.param(
        alter(1),
        "00000020 | 0021 0001 00000007 0003 636c69 | 00000001 02 0001 74 00000001 0001 6b 0001 76 | 00",
        id="AlterConfigsRequestV1",
    ),
    pytest.param(
        alter(2),
        """0000001b | 0021 0002 00000007 0003 636c69 00
           02 | 02 | 02 74 | 02 02 6b 02 76 00 | 00      # [topic t, [k=v]]
           01 | 00                                       # validate only, no tags""",
        id="AlterConfigsRequestV2",
    ),
    pytest.param(
        make(DELETE_RECORDS_APIS[0][0], topics=DELETE_T0_AT_5, timeout_ms=1000),
        """00000028 | 0015 0000 00000007 0003 636c69
           00000001 0001 74 00000001 00000000 0000000000000005 | 000003e8  # [t: [0 below 5]], 1000 ms""",
        id="DeleteRecordsRequestV0",
    ),
    pytest.param(
        make(DELETE_RECORDS_APIS[1][0], topics=DELETE_T0_AT_5, timeout_ms=1000),
        """00000028 | 0015 0001 00000007 0003 636c69
           00000001 0001 74 00000001 00000000 0000000000000005 | 000003e8  # as v0""",
        id="DeleteRecordsRequestV1",
    ),
    pytest.param(
        make(DELETE_RECORDS_APIS[2][0], topics=DELETE_T0_AT_5, timeout_ms=1000),
        """00000025 | 0015 0002 00000007 0003 636c69 00
           02 02 74 02 00000000 0000000000000005 00 00 | 000003e8 | 00""",
        id="DeleteRecordsRequestV2",
    ),
]

RESPONSES = [
    pytest.param(
        described(0, CONFIG_KV),
        """00000021 | 00000007 | 00000000 | 00000001 0000 ffff 02 0001 74  # throttle 0, [t: no error,
           00000001 0001 6b 0001 76 00 01 00                              #  [k=v, not read only, default]]""",
        id="DescribeConfigsResponseV0",
    ),
    pytest.param(
        described(1, CONFIG_KV),
        """0000002c | 00000007 | 00000000 | 00000001 0000 ffff 02 0001 74
           00000001 0001 6b 0001 76 00 05 00 | 00000001 0001 6b 0001 76 05  # source 5, synonym k=v (5)""",
        id="DescribeConfigsResponseV1",
    ),
    pytest.param(
        described(2, CONFIG_KV),
        """0000002c | 00000007 | 00000000 | 00000001 0000 ffff 02 0001 74
           00000001 0001 6b 0001 76 00 05 00 | 00000001 0001 6b 0001 76 05  # as v1""",
        id="DescribeConfigsResponseV2",
    ),
    pytest.param(
        described(3, CONFIG_KV),
        """0000002f | 00000007 | 00000000 | 00000001 0000 ffff 02 0001 74
           00000001 0001 6b 0001 76 00 05 00 | 00000001 0001 6b 0001 76 05 | 02 ffff  # STRING, no docs""",
        id="DescribeConfigsResponseV3",
    ),
    pytest.param(
        described(4, {**CONFIG_KV, "synonyms": []}),
        """0000001e | 00000007 00 | 00000000 | 02 0000 00 02 02 74   # response header v1; [t: no error,
           02 02 6b 02 76 00 05 00 01 02 00 00 | 00 | 00             #  [k=v, DEFAULT, no synonyms, STRING]]""",
        id="DescribeConfigsResponseV4",
    ),
    pytest.param(
        altered(0, 40, "m"),
        "00000015 | 00000007 | 00000000 | 00000001 0028 0001 6d 02 0001 74  # [INVALID_CONFIG 'm', topic t]",
        id="AlterConfigsResponseV0",
    ),
    pytest.param(
        altered(1, 40, "m"),
        "00000015 | 00000007 | 00000000 | 00000001 0028 0001 6d 02 0001 74  # as v0",
        id="AlterConfigsResponseV1",
    ),
    pytest.param(
        altered(2, 0, None),
        "00000012 | 00000007 00 | 00000000 | 02 0000 00 02 02 74 00 | 00",
        id="AlterConfigsResponseV2",
    ),
    pytest.param(
        make(DELETE_RECORDS_APIS[0][1], throttle_time_ms=0, topics=DELETED_T0_AT_5),
        "00000021 | 00000007 | 00000000 | 00000001 0001 74 00000001 00000000 0000000000000005 0000",
        id="DeleteRecordsResponseV0",
    ),
    pytest.param(
        make(DELETE_RECORDS_APIS[1][1], throttle_time_ms=0, topics=DELETED_T0_AT_5),
        "00000021 | 00000007 | 00000000 | 00000001 0001 74 00000001 00000000 0000000000000005 0000  # as v0",
        id="DeleteRecordsResponseV1",
    ),
    pytest.param(
        make(DELETE_RECORDS_APIS[2][1], throttle_time_ms=0, topics=DELETED_T0_AT_5),
        "0000001e | 00000007 00 | 00000000 | 02 02 74 02 00000000 0000000000000005 0000 00 00 | 00",
        id="DeleteRecordsResponseV2",
    ),
]


@pytest.mark.parametrize("body, frame_hex", REQUESTS)
def test_request_golden_bytes(body, frame_hex):
    check_request(body, frame_hex)


@pytest.mark.parametrize("body, frame_hex", RESPONSES)
def test_response_golden_bytes(body, frame_hex):
    check_response(body, frame_hex)

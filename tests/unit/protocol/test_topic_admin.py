"""Golden bytes of CreateTopics v0-v5, DeleteTopics v0-v4 and CreatePartitions v0-v2, both ways through the
v08 codec.

Hand-assembled from Kafka's CreateTopics/DeleteTopics/CreatePartitions request and response JSON field tables:
CreateTopics v1 adds ``validate_only`` and ``error_message``, v2 the throttle time, v5 is flexible and answers
partitions, replication factor and configs (``topic_config_error_code`` is tagged field 0); DeleteTopics v1
adds the throttle time, v4 is flexible; CreatePartitions v2 is flexible. Correlation id 7, client id "cli".
"""

from __future__ import annotations

import pytest

from tests.unit.protocol.test_v08_client import check_request, check_response
from zkafka.protocol import topic_admin as w

Config5 = w.CreatedTopicConfig.SCHEMA.flexible_version().record
Creatable5 = w.CreatableTopic.SCHEMA.flexible_version().record
TopicConfig5 = w.TopicConfig.SCHEMA.flexible_version().record
DeleteResult4 = w.DeleteTopicResult.SCHEMA.flexible_version().record
PartitionsTopic2 = w.PartitionsTopic.SCHEMA.flexible_version().record
Assignment2 = w.PartitionsAssignment.SCHEMA.flexible_version().record
PartitionsResult2 = w.PartitionsResult.SCHEMA.flexible_version().record
T2 = w.CreatableTopic("t", 2, 1, [], [w.TopicConfig("k", "v")])
T2_HEX = "00000001 | 0001 74 | 00000002 | 0001 | 00000000 | 00000001 0001 6b 0001 76  # [t: 2 partitions, RF 1, k=v]\n"


def create(version, *fields):
    return w.CREATE_TOPICS_APIS[version][0](*fields)


def created(version, *fields):
    return w.CREATE_TOPICS_APIS[version][1](*fields)


REQUESTS = [
    pytest.param(
        create(0, [T2], 1000),
        f"0000002c | 0013 0000 00000007 0003 636c69\n{T2_HEX} 000003e8",
        id="CreateTopicsRequestV0",
    ),
    pytest.param(
        create(1, [w.CreatableTopic("t", -1, -1, [w.ReplicaAssignment(0, [1, 2])], [])], 1000, False),
        """00000037 | 0013 0001 00000007 0003 636c69
           00000001 | 0001 74 | ffffffff | ffff                    # [t, no count, no RF,
           00000001 00000000 00000002 00000001 00000002 | 00000000  #  partition 0 on [1, 2], no configs]
           000003e8 | 00                                            # timeout 1000, not validate only""",
        id="CreateTopicsRequestV1",
    ),
    *(
        pytest.param(
            create(v, [T2], 1000, True),
            f"0000002d | 0013 000{v} 00000007 0003 636c69\n{T2_HEX} 000003e8 | 01  # validate only",
            id=f"CreateTopicsRequestV{v}",
        )
        for v in (2, 3, 4)
    ),
    pytest.param(
        create(5, [Creatable5("t", 2, 1, [], [TopicConfig5("k", "v")])], 1000, False),
        """00000025 | 0013 0005 00000007 0003 636c69 00   # header v2
           02 | 02 74 | 00000002 | 0001 | 01             # compact [t, 2, RF 1, no assignments,
           02 02 6b 02 76 00 | 00                        #   [k=v, no tags], no tags]
           000003e8 | 00 | 00                            # timeout, not validate only, no tags""",
        id="CreateTopicsRequestV5",
    ),
    *(
        pytest.param(
            w.DELETE_TOPICS_APIS[v][0](["t", "u"], 1000),
            f"0000001b | 0014 000{v} 00000007 0003 636c69 | 00000002 0001 74 0001 75 | 000003e8",
            id=f"DeleteTopicsRequestV{v}",
        )
        for v in (0, 1, 2, 3)
    ),
    pytest.param(
        w.DELETE_TOPICS_APIS[4][0](["t", "u"], 1000),
        "00000018 | 0014 0004 00000007 0003 636c69 00 | 03 02 74 02 75 | 000003e8 | 00",
        id="DeleteTopicsRequestV4",
    ),
    pytest.param(
        w.CREATE_PARTITIONS_APIS[0][0]([w.PartitionsTopic("t", 3, None)], 1000, False),
        "00000021 | 0025 0000 00000007 0003 636c69 | 00000001 0001 74 00000003 ffffffff | 000003e8 00",
        id="CreatePartitionsRequestV0",
    ),
    pytest.param(
        w.CREATE_PARTITIONS_APIS[1][0](
            [w.PartitionsTopic("t", 3, [w.PartitionsAssignment([1, 2])])], 1000, True
        ),
        """0000002d | 0025 0001 00000007 0003 636c69 | 00000001 0001 74 00000003
           00000001 | 00000002 00000001 00000002 | 000003e8 01  # [[1, 2]], validate only""",
        id="CreatePartitionsRequestV1",
    ),
    pytest.param(
        w.CREATE_PARTITIONS_APIS[2][0]([PartitionsTopic2("t", 3, [Assignment2([1, 2])])], 1000, False),
        """00000027 | 0025 0002 00000007 0003 636c69 00
           02 | 02 74 | 00000003 | 02 03 00000001 00000002 00 | 00 | 000003e8 | 00 | 00""",
        id="CreatePartitionsRequestV2",
    ),
]

RESPONSES = [
    pytest.param(
        created(0, [w.CreateTopicResult("t", 36)]),
        "0000000d | 00000007 | 00000001 0001 74 0024",
        id="CreateTopicsResponseV0",
    ),
    pytest.param(
        created(1, [w.CreateTopicResultV1("t", 0, None)]),
        "0000000f | 00000007 | 00000001 0001 74 0000 ffff",
        id="CreateTopicsResponseV1",
    ),
    pytest.param(
        created(2, 0, [w.CreateTopicResultV1("t", 0, None)]),
        "00000013 | 00000007 | 00000000 | 00000001 0001 74 0000 ffff",
        id="CreateTopicsResponseV2",
    ),
    pytest.param(
        created(3, 5, [w.CreateTopicResultV1("t", 38, "m")]),
        "00000014 | 00000007 | 00000005 | 00000001 0001 74 0026 0001 6d",
        id="CreateTopicsResponseV3",
    ),
    pytest.param(
        created(4, 0, [w.CreateTopicResultV1("t", 0, None)]),
        "00000013 | 00000007 | 00000000 | 00000001 0001 74 0000 ffff",
        id="CreateTopicsResponseV4",
    ),
    pytest.param(
        created(5, 0, [w.CreateTopicResultV5("t", 0, None, 2, 1, [Config5("k", "v", False, 5, False)])]),
        """00000020 | 00000007 00 | 00000000         # header v1, throttle
           02 | 02 74 0000 00 | 00000002 0001    # [t, no error, null message, 2 partitions, RF 1,
           02 02 6b 02 76 00 05 00 00 | 00       #  [k=v, not read-only, DEFAULT_CONFIG, not sensitive], no tags]
           00""",
        id="CreateTopicsResponseV5",
    ),
    pytest.param(
        created(5, 0, [w.CreateTopicResultV5("t", 40, "bad", -1, -1, None, 40)]),
        """0000001f | 00000007 00 | 00000000
           02 | 02 74 0028 04 626164 | ffffffff ffff | 00   # [t, INVALID_CONFIG "bad", -1, -1, null configs,
           01 00 02 0028                                    #  tag 0: topic_config_error_code 40]
           00""",
        id="CreateTopicsResponseV5-tagged",
    ),
    pytest.param(
        w.DELETE_TOPICS_APIS[0][1]([w.DeleteTopicResult("t", 0)]),
        "0000000d | 00000007 | 00000001 0001 74 0000",
        id="DeleteTopicsResponseV0",
    ),
    *(
        pytest.param(
            w.DELETE_TOPICS_APIS[v][1](0, [w.DeleteTopicResult("t", 3)]),
            "00000011 | 00000007 | 00000000 | 00000001 0001 74 0003",
            id=f"DeleteTopicsResponseV{v}",
        )
        for v in (1, 2, 3)
    ),
    pytest.param(
        w.DELETE_TOPICS_APIS[4][1](0, [DeleteResult4("t", 0)]),
        "00000010 | 00000007 00 | 00000000 | 02 02 74 0000 00 | 00",
        id="DeleteTopicsResponseV4",
    ),
    pytest.param(
        w.CREATE_PARTITIONS_APIS[0][1](0, [w.PartitionsResult("t", 37, "m")]),
        "00000014 | 00000007 | 00000000 | 00000001 0001 74 0025 0001 6d",
        id="CreatePartitionsResponseV0",
    ),
    pytest.param(
        w.CREATE_PARTITIONS_APIS[1][1](0, [w.PartitionsResult("t", 0, None)]),
        "00000013 | 00000007 | 00000000 | 00000001 0001 74 0000 ffff",
        id="CreatePartitionsResponseV1",
    ),
    pytest.param(
        w.CREATE_PARTITIONS_APIS[2][1](0, [PartitionsResult2("t", 0, None)]),
        "00000011 | 00000007 00 | 00000000 | 02 02 74 0000 00 00 | 00",
        id="CreatePartitionsResponseV2",
    ),
]


@pytest.mark.parametrize("body, frame_hex", REQUESTS)
def test_request_golden_bytes(body, frame_hex):
    check_request(body, frame_hex)


@pytest.mark.parametrize("body, frame_hex", RESPONSES)
def test_response_golden_bytes(body, frame_hex):
    check_response(body, frame_hex)

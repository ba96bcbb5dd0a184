"""OffsetForLeaderEpoch v0-v4 against an in-process 0.8 broker leading ``t-0``: where its epoch 0 ends (the log
end, being the latest), UNDEFINED (-1) for an epoch it never had, the fencing errors of v2+'s current leader
epoch, an unknown partition; advertised in ApiVersions; the ``leader-epoch-checkpoint`` it keeps."""

from __future__ import annotations

import pytest

from tests.support.server08 import Client08, produce_request, wait_for_leaders
from zkafka.protocol.api_versions import ApiVersionsRequestV0
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.leader_epoch import OFFSET_FOR_LEADER_EPOCH_APIS
from zkafka.protocol.versioned import make
from zkafka.records import format08

pytestmark = pytest.mark.integration


def ask(client: Client08, version: int, *partitions: tuple[int, int, int]) -> list[tuple[int, int, int]]:
    """(error, epoch, end offset) for each (partition, current leader epoch, leader epoch) of ``t``."""
    asked = [{"partition": p, "current_leader_epoch": c, "leader_epoch": e} for p, c, e in partitions]
    request = make(
        OFFSET_FOR_LEADER_EPOCH_APIS[version][0], replica_id=-1, topics=[{"topic": "t", "partitions": asked}]
    )
    (topic,) = client.call(request).topics
    return [(p.error, getattr(p, "leader_epoch", None), p.end_offset) for p in topic.partitions]


@pytest.mark.parametrize("version", range(5))
def test_a_leader_says_where_its_epochs_end(start_broker08, tmp_path, version):
    broker = start_broker08(0)
    with Client08(broker.port) as client:
        wait_for_leaders(client, ["t"])
        messages = format08.build_message_set([(None, b"m%d" % i) for i in range(3)])
        assert client.call(produce_request("t", 0, messages)).topics[0].partitions[0].error == 0
        answers = ask(client, version, (0, -1, 0), (0, -1, 1), (9, -1, 0))
        epoch = (lambda e: e) if version >= 1 else (lambda e: None)
        assert answers == [
            (ErrorCode.NONE, epoch(0), 3),  # the latest epoch ends at the log end
            (ErrorCode.NONE, epoch(-1), -1),  # never had epoch 1
            (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, epoch(-1), -1),
        ]
        if version >= 2:
            assert ask(client, version, (0, 1, 0), (0, 0, 0))[0][0] == ErrorCode.UNKNOWN_LEADER_EPOCH
        ranges = {
            r.api_key: (r.min_version, r.max_version)
            for r in client.call(ApiVersionsRequestV0()).api_versions
        }
        assert ranges[23] == (0, 4)
    assert (tmp_path / "broker08-0" / "t-0" / "leader-epoch-checkpoint").read_text() == "0\n1\n0 0\n"

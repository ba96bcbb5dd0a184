"""The 0.8 broker's log cleaner, run on the broker's disk pool: ``__consumer_offsets`` in small segments, the
same offset committed many times, compacted to its last value while the broker keeps serving. A real
ZooKeeper and an in-process 0.8 broker."""

from __future__ import annotations

import os

import pytest

from tests.integration.test_coordinator_wire import commit_v2, fetch_offsets, find_coordinator
from tests.support.server08 import Client08, wait_for_leaders
from zkafka.log.checkpoint import CLEANER_CHECKPOINT, OffsetCheckpoint
from zkafka.records.format08 import iter_messages
from zkafka.topic import OFFSETS_TOPIC
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration

COMMITS = 60


def test_the_offsets_topic_is_compacted_by_the_cleaner_on_the_disk_pool(start_broker08):
    broker = start_broker08(
        0,
        log_cleaner_enable="true",
        log_cleaner_backoff_ms="100",
        offsets_topic_num_partitions="1",
        offsets_topic_segment_bytes="600",
    )
    with Client08(broker.port) as client:
        wait_for_leaders(client, ["t"])
        find_coordinator(client, "g")
        for offset in range(COMMITS):
            assert commit_v2(client, "g", -1, "", {("t", 0): offset}) == {("t", 0): 0}
        log = broker.server.log_manager.get_log(OFFSETS_TOPIC, 0)
        checkpoint = OffsetCheckpoint(os.path.join(os.path.dirname(log.dir_path), CLEANER_CHECKPOINT))

        def cleaned() -> bool:
            sealed = log.segments[:-1]
            values = [m for s in sealed for m in iter_messages(s.read(0, s.size) if s.size else b"")]
            return checkpoint.read().get((OFFSETS_TOPIC, 0), 0) == log.segments[-1].start and len(
                {m.key for m in values}
            ) == len(values)

        wait_until(cleaned, 20, message="the offsets topic compacted up to its active segment")
        assert log.log_end_offset == COMMITS
        # still served, and the committed offset is the last one
        assert fetch_offsets(client, "g", [0]) == {("t", 0): (COMMITS - 1, "md", 0)}

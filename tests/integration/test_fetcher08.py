"""Fetcher08 against real 0.8 brokers: a partition fetched from a broker that does not lead it moves to its leader;
fetches sent ahead of decoding."""

from __future__ import annotations

import pytest
from gevent.queue import Empty, Queue

from tests.support.consumers08 import fetcher08, produce08, start_cluster08
from tests.support.server08 import Client08, fetch_request
from zkafka.consumer.partition_state import PartitionTopicInfo
from zkafka.consumer.simple08 import SimpleConsumer08
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.metadata import MetadataRequestV0
from zkafka.records import native
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration


def test_not_leader_sends_the_partition_back_to_the_leader_finder(start_broker08, zk_client):
    brokers = start_cluster08(start_broker08, zk_client, topics={"t": 2})
    sent = produce08(brokers, "t", 100)
    fetcher = fetcher08(lambda: [("127.0.0.1", b.port) for b in brokers])
    queue: Queue = Queue()
    try:
        fetcher.start([PartitionTopicInfo("t", 1, None, queue, "c-0", 0)])
        wait_until(lambda: ("t", 1) in fetcher.leaders(), message="partition 1 fetched")
        leader0 = _leader(brokers, 0)
        wrong = 1 - leader0
        with Client08(brokers[wrong].port) as client:
            answer = client.call(fetch_request("t", 0, 0)).topics[0].partitions[0]
        assert answer.error == ErrorCode.NOT_LEADER_FOR_PARTITION

        # partition 0 handed to a broker that does not lead it, as stale metadata would: it comes back to the
        # leader finder and is fetched from its leader
        info = PartitionTopicInfo("t", 0, None, queue, "c-0", 0)
        fetcher._add(info, (wrong, "127.0.0.1", brokers[wrong].port))
        wait_until(lambda: fetcher.leaders().get(("t", 0)) == leader0, message="moved to the leader")
        got = []
        while len(got) < len(sent):
            got += queue.get(timeout=10).items
        assert {m.message for m in got} == sent
        assert sorted(m.offset for m in got if m.partition == 0) == list(range(info.fetch_offset))
    finally:
        fetcher.stop()


def _leader(brokers, partition: int) -> int:
    with Client08(brokers[0].port) as client:
        answer = client.call(MetadataRequestV0(["t"]))
    return next(p.leader for p in answer.topics[0].partitions if p.partition == partition)


def test_fetches_ahead_deliver_every_message_once_in_order_and_a_stale_one_is_dropped(
    start_broker08, zk_client, monkeypatch
):
    if native.lib is None:
        pytest.skip("fetches go ahead on the native core only")
    brokers = start_cluster08(start_broker08, zk_client, brokers=1, topics={"t": 2})
    sent = produce08(brokers, "t", 600)
    ahead = []
    send_fetch = SimpleConsumer08.send_fetch

    def counted(consumer, fetches, *args):  # the real call, counted
        ahead.append(list(fetches))
        return send_fetch(consumer, fetches, *args)

    monkeypatch.setattr(SimpleConsumer08, "send_fetch", counted)
    # a few dozen messages a fetch: many fetches, each decoded while the next is sent
    fetcher = fetcher08(lambda: [("127.0.0.1", brokers[0].port)], fetch_size=2048)
    queue: Queue = Queue(4)  # the fetcher waits for the reader: fetches ahead stay in flight meanwhile
    infos = [PartitionTopicInfo("t", p, None, queue, "c-0", 0) for p in (0, 1)]
    got = []
    try:
        fetcher.start(infos)
        while len(got) < 100:
            got += queue.get(timeout=10).items
        infos[1].revoke()  # a fetch ahead that asks for partition 1 is no longer wanted
        while True:  # partition 0 to its end; then nothing more comes
            try:
                got += queue.get(timeout=2).items
            except Empty:
                break
    finally:
        fetcher.stop()
    assert len(ahead) >= 4 and all(offset >= 0 for fetch in ahead for _, _, offset, _ in fetch)
    for partition in (0, 1):
        offsets = [m.offset for m in got if m.partition == partition]
        assert offsets == list(range(len(offsets)))  # in order, none twice, none missing
    assert {m.message for m in got} <= sent
    log_end = infos[0].log_end
    assert [m.offset for m in got if m.partition == 0][-1] == log_end - 1  # partition 0 read to its end
    assert any(len(fetch) == 1 for fetch in ahead)  # after the revoke: partition 0 alone

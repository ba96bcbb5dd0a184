"""A slow disk stalls only the requests waiting for their own flush: the brokers of both lines fsync on their disk
pool, so other connections are served meanwhile, and what readers see is unchanged (0.7: flushed bytes only;
0.8: the high watermark, which does not wait for the disk).

The disk is a ``HeldDisk`` on a partition log's ``fsync`` seam: its fsyncs wait until the test releases them,
then fsync the real file. It stands in for a slow disk; the broker, its sockets and ZooKeeper are real.
"""

from __future__ import annotations

import pytest

from tests.support.logs import HeldDisk
from tests.support.server08 import Client08, fetch_request, produce_request, wait_for_leaders
from tests.support.wire import Producer, fetch
from zkafka.protocol.offsets import ListOffsetsRequestPartition, ListOffsetsRequestTopic, ListOffsetsRequestV0
from zkafka.protocol.v07 import ProducerRequest, encode_request
from zkafka.records import format08
from zkafka.records.message07 import build_message_set
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration


def test_07_other_connections_are_served_while_a_flush_waits_for_the_disk(start_broker):
    broker = start_broker(0, zk=None)  # every append flushes (log.flush.interval=1)
    with Producer(broker.port) as producer, Producer(broker.port) as other:
        first_end = producer.send("slow", 0, [b"first"])
        disk = HeldDisk()
        broker.server.log_manager.get_log("slow", 0).fsync = disk
        producer.sock.sendall(encode_request(ProducerRequest("slow", 0, build_message_set([b"held"]))))
        assert disk.started.wait(10)

        # Another connection: answered while the fsync waits, and it sees only what is on disk.
        assert other.log_end("slow", 0) == first_end
        assert fetch(broker.port, "slow", 0) == (0, [b"first"])
        assert other.send("fast", 0, [b"another partition"]) > 0
        assert fetch(broker.port, "fast", 0) == (0, [b"another partition"])

        disk.release()
        wait_until(lambda: other.log_end("slow", 0) > first_end, message="the held bytes flushed")
        assert fetch(broker.port, "slow", 0) == (0, [b"first", b"held"])


def test_08_other_connections_are_served_while_an_acked_flush_waits_for_the_disk(start_broker08):
    broker = start_broker08(0, log_flush_interval_messages="1")
    with Client08(broker.port) as producer, Client08(broker.port) as other:
        wait_for_leaders(producer, ["slow"])
        producer.call(produce_request("slow", 0, format08.build_message_set([(None, b"first")])))
        log = broker.server.log_manager.get_log("slow", 0)
        assert log.recovery_point == 1
        log.fsync = disk = HeldDisk()
        request = produce_request("slow", 0, format08.build_message_set([(None, b"held")]))
        producer.send(request)
        assert disk.started.wait(10)

        # The high watermark is the log end: the held message is readable before its fsync, as before.
        offsets = other.call(
            ListOffsetsRequestV0(
                -1, [ListOffsetsRequestTopic("slow", [ListOffsetsRequestPartition(0, -1, 1)])]
            )
        )
        assert offsets.topics[0].partitions[0].offsets == [2]
        data = other.call(fetch_request("slow", 0, 0)).topics[0].partitions[0].message_set
        assert [m.value for m in format08.iter_messages(data)] == [b"first", b"held"]
        assert log.recovery_point == 1

        disk.release()
        answer = producer.receive(request).body.topics[0].partitions[0]
        assert answer.error == 0
        assert log.recovery_point == 2

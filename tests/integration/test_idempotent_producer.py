"""The idempotent producer (KIP-98 without transactions) against real brokers and a real ZooKeeper: producer ids
from ``/latest_producer_id_block`` blocks on any broker, a hand-built idempotent batch sent twice stored once
(the retry answered with the first offset), a gap refused, a transactional id refused; librdkafka with
``enable.idempotence=true`` writes its batches with their producer id, every message once on every replica."""

from __future__ import annotations

import json

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")

from tests.integration.test_message_format_v2 import replica_batches, v2_topic  # noqa: E402
from tests.integration.test_replication import FAST  # noqa: E402
from tests.support.server08 import Client08  # noqa: E402
from zkafka.coordinator.producer_id_manager import PRODUCER_ID_BLOCK_PATH  # noqa: E402
from zkafka.errors import InvalidConfigError  # noqa: E402
from zkafka.producer.producer08 import KeyedMessage, Producer08  # noqa: E402
from zkafka.protocol.errors import ErrorCode  # noqa: E402
from zkafka.protocol.init_producer_id import INIT_PRODUCER_ID_APIS  # noqa: E402
from zkafka.protocol.produce import PRODUCE_APIS, ProduceRequestPartition, ProduceRequestTopic  # noqa: E402
from zkafka.protocol.versioned import make  # noqa: E402
from zkafka.records.default_record import Record  # noqa: E402
from zkafka.records.record_batch import build_batch  # noqa: E402
from zkafka.utils import wait_until  # noqa: E402

pytestmark = pytest.mark.integration


def init_producer_id(port: int, version: int = 4, transactional_id: str | None = None):
    request = INIT_PRODUCER_ID_APIS[version][0]
    with Client08(port) as client:
        return client.call(
            make(request, transactional_id=transactional_id, transaction_timeout_ms=60000, producer_id=-1,
                 producer_epoch=-1)
        )  # fmt: skip


def produce_v8(client: Client08, topic: str, batch: bytes):
    partitions = [ProduceRequestPartition(0, batch)]
    (answer,) = client.call(PRODUCE_APIS[8][0](None, -1, 10000, [ProduceRequestTopic(topic, partitions)])).topics
    return answer.partitions[0]


def idempotent(producer_id: int, sequence: int, *values: bytes) -> bytes:
    records = [Record(i, 1_700_000_000_000, None, v) for i, v in enumerate(values)]
    return build_batch(records, producer_id=producer_id, producer_epoch=0, base_sequence=sequence)


def test_producer_ids_come_in_blocks_and_a_retried_batch_is_stored_once(start_broker08, zk_client):
    brokers = {b: start_broker08(b, **FAST) for b in (1, 2)}
    first = init_producer_id(brokers[1].port)
    assert (first.error, first.producer_id, first.producer_epoch) == (0, 0, 0)
    assert init_producer_id(brokers[1].port, version=0).producer_id == 1
    assert init_producer_id(brokers[2].port, version=2).producer_id == 1000  # broker 2's own block
    block = json.loads(zk_client.get(PRODUCER_ID_BLOCK_PATH)[0])
    assert block == {"version": 1, "broker": 2, "block_start": "1000", "block_end": "1999"}
    refused = init_producer_id(brokers[1].port, transactional_id="tx")
    assert (refused.error, refused.producer_id) == (ErrorCode.GROUP_COORDINATOR_NOT_AVAILABLE, -1)

    bootstrap = v2_topic(brokers, zk_client, "idem")
    with Client08(int(bootstrap.rsplit(":", 1)[1])) as client:
        sent = produce_v8(client, "idem", idempotent(first.producer_id, 0, b"a", b"b"))
        again = produce_v8(client, "idem", idempotent(first.producer_id, 0, b"a", b"b"))
        gap = produce_v8(client, "idem", idempotent(first.producer_id, 5, b"c"))
        fresh = produce_v8(client, "idem", idempotent(first.producer_id + 1, 3, b"d"))
    assert (sent.error, sent.offset, again.error, again.offset) == (0, 0, 0, 0)
    assert (gap.error, fresh.error) == (ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, ErrorCode.UNKNOWN_PRODUCER_ID)
    for broker_id, batches in replica_batches(brokers, "idem", 2).items():
        assert [(r.offset, r.value) for b in batches for r in b.records] == [(0, b"a"), (1, b"b")], broker_id
        assert [b.header.producer_id for b in batches] == [0]


def test_librdkafka_with_idempotence_writes_every_message_once(start_broker08, zk_client):
    brokers = {b: start_broker08(b, **FAST) for b in (1, 2)}
    bootstrap = v2_topic(brokers, zk_client, "rdk-idem")
    producer = confluent_kafka.Producer(
        {"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5}
    )
    failed: list = []
    sent = [b"idem-%04d" % i for i in range(300)]
    for value in sent:
        producer.produce("rdk-idem", value=value, partition=0, on_delivery=lambda e, m: e and failed.append(e))
    assert producer.flush(30) == 0 and not failed
    for broker_id, batches in replica_batches(brokers, "rdk-idem", len(sent)).items():
        assert [r.value for b in batches for r in b.records] == sent, broker_id
        assert {b.header.producer_id for b in batches} != {-1}
        sequences = [b.header.base_sequence for b in batches]
        assert sequences[0] == 0 and sequences == sorted(sequences)
    leader = wait_until(lambda: [b for b in brokers.values() if b.server.replica_manager.partition("rdk-idem", 0)
                                 and b.server.replica_manager.partition("rdk-idem", 0).is_leader], 10)[0]  # fmt: skip
    state = leader.server.replica_manager.local_log("rdk-idem", 0).producer_state
    assert [e.last_seq for e in state.producers.values()] == [len(sent) - 1]


@pytest.mark.parametrize("in_flight", ["1", "5"], ids=["sync", "pipelined"])
def test_zkafka_producer_with_idempotence_seals_batches_and_a_retry_keeps_its_sequence(
    start_broker08, zk_client, in_flight
):
    brokers = {b: start_broker08(b, **FAST) for b in (1, 2)}
    bootstrap = v2_topic(brokers, zk_client, "zk-idem")
    config = {
        "metadata.broker.list": bootstrap,
        "request.required.acks": "-1",
        "enable.idempotence": "true",
        "max.in.flight.requests.per.connection": in_flight,
    }
    with pytest.raises(InvalidConfigError, match="request.required.acks"):
        Producer08({**config, "request.required.acks": "1"})
    sent = [b"zk-%03d" % i for i in range(60)]
    with Producer08(config) as producer:
        for i in range(0, 60, 10):
            producer.send(*(KeyedMessage("zk-idem", None, v) for v in sent[i : i + 10]))
        producer.flush()
        state = producer.handler.idempotence
        state_batches = [state.seal("zk-idem", 0, [Record(0, 1, None, b"again")], 0)]
        producer.handler.dispatch(state_batches)  # sent once, then its retry: the same bytes
        assert producer.handler.dispatch(state_batches) == []
    for broker_id, batches in replica_batches(brokers, "zk-idem", len(sent) + 1).items():
        assert [r.value for b in batches for r in b.records] == [*sent, b"again"], broker_id
        assert {b.header.producer_id for b in batches} == {state.producer_id}
        assert [b.header.base_sequence for b in batches] == [10 * i for i in range(7)]

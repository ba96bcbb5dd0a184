"""A live group under hostile input: while kafka-python consumes and commits in group GROUP, a second socket
sends random but well-formed JoinGroup, SyncGroup, Heartbeat, OffsetCommit and LeaveGroup requests with the
real member's id and generation, stale ones and made-up ones. Afterwards the real member's committed offsets
are what it committed, every fuzz commit the broker acknowledged is kept and no refused one is, the member
is in the broker's current generation, and the broker still serves. A real ZooKeeper, an in-process broker."""

from __future__ import annotations

import random
import threading

import pytest

kafka = pytest.importorskip("kafka")
from kafka import TopicPartition  # noqa: E402

from tests.integration.test_coordinator_kafka_python import (  # noqa: E402
    GROUP,
    TOPIC,
    group_consumer,
    produce,
    start_with_topic,
)
from tests.support.server08 import Client08, wait_for_leaders  # noqa: E402
from zkafka.consumer.group.assignors import RangeAssignor, encode_assignment, subscription_metadata  # noqa: E402
from zkafka.protocol import group_membership as g  # noqa: E402
from zkafka.protocol.errors import ErrorCode as E  # noqa: E402
from zkafka.protocol.offset_commit import (  # noqa: E402
    OffsetCommitRequestPartitionV0,
    OffsetCommitRequestTopicV0,
    OffsetCommitRequestV2,
    OffsetFetchRequestTopic,
    OffsetFetchRequestV1,
)
from zkafka.utils import wait_until  # noqa: E402

pytestmark = pytest.mark.integration

OTHER = "other"  # the fuzzer's commits go to this topic's partitions: the real member's stay its own
STEPS = 80
METADATA = subscription_metadata(RangeAssignor(), [TOPIC])  # well-formed: the real member's client decodes it


class Fuzzer(threading.Thread):
    """Sends STEPS random group requests; remembers which OffsetCommits to OTHER were acknowledged."""

    def __init__(self, port: int, real: callable, seed: int) -> None:
        super().__init__(daemon=True)
        self.port, self.real, self.rng = port, real, random.Random(seed)
        self.ids = ["ghost", ""]
        self.acknowledged: dict[int, int] = {}  # OTHER partition -> last offset acknowledged
        self.refused: dict[int, set[int]] = {}
        self.errors: list[BaseException] = []
        self.codes: set[int] = set()

    def run(self) -> None:
        client = Client08(self.port, client_id="fuzz")
        try:
            for step in range(STEPS):
                try:
                    self.step(client, step)
                except TimeoutError:  # a parked JoinGroup or SyncGroup: drop the socket
                    client.sock.close()
                    client = Client08(self.port, client_id="fuzz")
        except BaseException as error:  # noqa: BLE001 - reported by the test
            self.errors.append(error)
        finally:
            client.sock.close()

    def target(self) -> tuple[str, int]:
        generation, member = self.real()
        member = self.rng.choice([member, member, *self.ids])
        return member, generation + self.rng.choice([0, 0, -1, 1, -5])

    def step(self, client: Client08, step: int) -> None:
        client.sock.settimeout(2)
        member, generation = self.target()
        kind = self.rng.choices(["join", "sync", "heartbeat", "commit", "leave"], [1, 2, 2, 5, 1])[0]
        if kind == "join":
            protocols = [g.GroupProtocol(self.rng.choice(["range", "roundrobin"]), METADATA)]
            answer = client.call(g.JoinGroupRequestV0(GROUP, 1000, member, "consumer", protocols))
            if answer.error == E.NONE:
                self.ids.append(answer.member_id)
        elif kind == "sync":
            assignment = encode_assignment({TOPIC: sorted(self.rng.sample(range(4), self.rng.randrange(5)))})
            assignments = [g.SyncGroupAssignment(member, assignment)] if self.rng.random() < 0.5 else []
            client.call(g.SyncGroupRequestV0(GROUP, generation, member, assignments))
        elif kind == "heartbeat":
            client.call(g.HeartbeatRequestV0(GROUP, generation, member))
        elif kind == "leave" and member != self.real()[1]:  # the real member leaving is legitimate churn
            client.call(g.LeaveGroupRequestV0(GROUP, member))
        elif kind == "commit":
            partition = self.rng.randrange(2)
            topic = OffsetCommitRequestTopicV0(
                OTHER, [OffsetCommitRequestPartitionV0(partition, step, "fuzz")]
            )
            answer = client.call(OffsetCommitRequestV2(GROUP, generation, member, -1, [topic]))
            error = answer.topics[0].partitions[0].error
            if error == E.NONE:
                self.acknowledged[partition] = step
            else:
                self.refused.setdefault(partition, set()).add(step)
                self.codes.add(error)


def poll(consumer) -> dict:
    """The real member's poll. A fuzzer member leading a generation may sync without an assignment for it, and
    the coordinator then hands it an empty one, as Kafka's does; kafka-python cannot decode that (ValueError
    from its join) and would keep its old assignment: it is told to join again instead."""
    try:
        return consumer.poll(200)
    except ValueError:
        consumer._coordinator.request_rejoin()
        return {}


def test_a_live_group_keeps_its_offsets_and_generation_under_hostile_requests(start_broker08):
    broker = start_with_topic(start_broker08, **{"group.min.session.timeout.ms": "1000"})
    bootstrap = f"127.0.0.1:{broker.port}"
    client = Client08(broker.port)
    try:
        wait_for_leaders(client, [OTHER])
    finally:
        client.sock.close()
    produce(bootstrap, 40)
    consumer = group_consumer(bootstrap)
    coordinator = consumer._coordinator

    def real() -> tuple[int, str]:
        generation = coordinator._generation
        return generation.generation_id, generation.member_id

    committed: dict[TopicPartition, int] = {}
    try:
        wait_until(lambda: consumer.poll(200) is not None and consumer.assignment(), 30, message="assignment")
        fuzzer = Fuzzer(broker.port, real, seed=25)
        generation_before = real()[0]
        fuzzer.start()
        while fuzzer.is_alive():
            for tp, records in poll(consumer).items():
                committed[tp] = records[-1].offset + 1
            if committed:
                try:
                    consumer.commit({tp: kafka.OffsetAndMetadata(o, "", -1) for tp, o in committed.items()})
                except kafka.errors.KafkaError:
                    pass  # a rebalance the fuzzer caused: the next poll rejoins
            fuzzer.join(0.05)
        assert not fuzzer.errors, fuzzer.errors
        assert fuzzer.codes <= {E.ILLEGAL_GENERATION, E.UNKNOWN_MEMBER_ID, E.REBALANCE_IN_PROGRESS}, (
            fuzzer.codes
        )
        assert fuzzer.refused and fuzzer.acknowledged and len(fuzzer.ids) > 2, "the fuzzer missed a case"
        assert committed, "the real member consumed nothing"

        # the fuzzer's members expire; the real member ends alone in a current, Stable generation
        def settled() -> bool:
            poll(consumer)
            client = Client08(broker.port)
            try:
                (group,) = client.call(g.DescribeGroupsRequestV0([GROUP])).groups
                generation, member = real()
                beat = client.call(g.HeartbeatRequestV0(GROUP, generation, member)).error
            finally:
                client.sock.close()
            return group.state == "Stable" and [m.member_id for m in group.members] == [member] and beat == 0

        wait_until(settled, 60, message="the real member alone in a Stable group")
        assert real()[0] >= generation_before
        consumer.commit({tp: kafka.OffsetAndMetadata(o, "", -1) for tp, o in committed.items()})
        client = Client08(broker.port)
        try:
            offsets = committed_offsets(client, TOPIC, range(4))
            others = committed_offsets(client, OTHER, range(2))
        finally:
            client.sock.close()
        assert {tp.partition: o for tp, o in committed.items()} == {
            p: o for p, o in offsets.items() if o >= 0
        }
        for partition, offset in fuzzer.acknowledged.items():
            assert others[partition] == offset
        for partition in set(fuzzer.refused) - set(fuzzer.acknowledged):
            assert others[partition] == -1

        produce(bootstrap, 5, start=1000)  # the broker still serves: the member reads what comes next
        got: list = []
        wait_until(
            lambda: got.extend(r for rs in consumer.poll(200).values() for r in rs) or len(got) >= 5, 30
        )
    finally:
        consumer.close()


def committed_offsets(client: Client08, topic: str, partitions) -> dict[int, int]:
    answer = client.call(OffsetFetchRequestV1(GROUP, [OffsetFetchRequestTopic(topic, list(partitions))]))
    return {p.partition: p.offset for t in answer.topics for p in t.partitions}

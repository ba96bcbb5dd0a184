"""aiokafka's latest release against zkafka with its defaults: AIOKafkaProducer writes record batches with
headers to a log of ``log.message.format.version=2.2``; two AIOKafkaConsumers of one group split its partitions,
read every record with its headers and timestamp, commit; a new member of the group resumes after the
committed offsets and reads only what came after. A real ZooKeeper, an in-process broker."""

from __future__ import annotations

import asyncio

import pytest

aiokafka = pytest.importorskip("aiokafka")

from tests.integration.test_coordinator_kafka_python import start_with_topic  # noqa: E402

pytestmark = pytest.mark.integration

TOPIC = "orders"  # start_with_topic's
T0 = 1_700_000_000_000


def consumer(bootstrap: str) -> aiokafka.AIOKafkaConsumer:
    return aiokafka.AIOKafkaConsumer(
        TOPIC,
        bootstrap_servers=bootstrap,
        group_id="aio",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=6000,
        heartbeat_interval_ms=300,
    )


async def produce(bootstrap: str, start: int, count: int) -> None:
    producer = aiokafka.AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()
    try:
        for i in range(start, start + count):
            await producer.send_and_wait(
                TOPIC, b"v%d" % i, key=b"k%d" % i, headers=[("n", b"%d" % i)], timestamp_ms=T0 + i
            )
    finally:
        await producer.stop()


async def read_until(consumers: list, count: int) -> dict[bytes, tuple]:
    got: dict[bytes, tuple] = {}
    async with asyncio.timeout(60):
        while len(got) < count:
            for c in consumers:
                for records in (await c.getmany(timeout_ms=200)).values():
                    got.update({r.value: (r.timestamp, list(r.headers)) for r in records})
    return got


async def scenario(bootstrap: str) -> None:
    await produce(bootstrap, 0, 20)
    members = [consumer(bootstrap), consumer(bootstrap)]
    for member in members:
        await member.start()
    try:
        got = await read_until(members, 20)
        assert got == {b"v%d" % i: (T0 + i, [("n", b"%d" % i)]) for i in range(20)}
        assert all(m.assignment() for m in members)  # both members took partitions
        for member in members:
            await member.commit()
    finally:
        for member in members:
            await member.stop()
    await produce(bootstrap, 20, 5)
    resumed = consumer(bootstrap)
    await resumed.start()
    try:
        got = await read_until([resumed], 5)
        assert sorted(got) == sorted(b"v%d" % i for i in range(20, 25))
    finally:
        await resumed.stop()


def test_aiokafka_produces_headers_and_a_group_reads_commits_and_resumes(start_broker08):
    broker = start_with_topic(start_broker08, **{"log.message.format.version": "2.2"})
    asyncio.run(scenario(f"127.0.0.1:{broker.port}"))

"""Client quotas (KIP-13) with a real client: ``zkafka configs`` sets ``producer_byte_rate`` on client id c1 in
ZooKeeper, the broker takes it from the change notification, and a librdkafka producer as c1 is held to within
10% of 1 MB/s over 6 s, told the throttle time in its answers, while another librdkafka producer as
c2, producing in the same window, is not held back. The quota's windows are made short
(``quota.window.num=2``) so that the initial allowance (one window's worth) does not weigh on the measure."""

from __future__ import annotations

import json
import logging
import time

import confluent_kafka
import pytest

from tests.support.consumers08 import produce08, start_cluster08
from tests.support.quotas import configs, hold_consumer, throttling
from zkafka.consumer.group.consumer import GroupConsumer
from zkafka.consumer.simple08 import SimpleConsumer08
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration

QUOTA = 1024 * 1024
VALUE = b"q" * 10_000
# Kafka's rate over two 1 s samples lets a burst through each time the older sample expires (every 2 s): the
# span measured is a whole number of those cycles, after the first second's allowance.
WARM_UP_S, MEASURED_S = 1.0, 6.0


class Flood:
    """A librdkafka producer as ``client_id`` sending VALUEs as fast as it is let: when each was acknowledged,
    and the largest throttle time its statistics reported."""

    def __init__(self, port: int, client_id: str) -> None:
        self.acked: list[float] = []
        self.throttle_ms = 0
        self.producer = confluent_kafka.Producer(
            {
                "bootstrap.servers": f"127.0.0.1:{port}",
                "client.id": client_id,
                "acks": 1,
                "linger.ms": 5,
                "batch.num.messages": 10,  # 100 kB requests: the measure is not a few large ones
                "queue.buffering.max.kbytes": 2048,
                "statistics.interval.ms": 500,
                "stats_cb": self._stats,
            }
        )

    def _stats(self, text: str) -> None:
        for broker in json.loads(text)["brokers"].values():
            self.throttle_ms = max(self.throttle_ms, broker["throttle"]["max"])

    def _delivered(self, error, _message) -> None:
        if error is None:
            self.acked.append(time.monotonic())

    def send(self) -> None:
        try:
            self.producer.produce("quotas", VALUE, on_delivery=self._delivered)
        except BufferError:  # its queue is full: let the acknowledgements come
            self.producer.poll(0.001)
        self.producer.poll(0)

    def rate(self, start: float, end: float) -> float:
        return sum(1 for t in self.acked if start <= t < end) * len(VALUE) / (end - start)


def test_a_producer_is_held_to_its_byte_rate_and_another_client_is_not(start_broker08, zk_connect, zk_client):
    broker = start_broker08(0, **{"quota.window.num": "2", "quota.window.size.seconds": "1"})
    entity = ("--entity-type", "clients", "--entity-name", "c1")
    added = configs(zk_connect, "--alter", "--add-config", f"producer_byte_rate={QUOTA}", *entity)
    assert added == "Completed Updating config for entity: client-id 'c1'.\n"
    described = configs(zk_connect, "--describe", *entity)
    assert described == f"Configs for client-id 'c1' are producer_byte_rate={QUOTA}\n"
    produce = broker.server.quota_configs.managers.produce
    wait_until(lambda: produce.quota("ANONYMOUS", "c1") == QUOTA, 10, message="the broker took the quota")

    held, other = Flood(broker.port, "c1"), Flood(broker.port, "c2")
    start = time.monotonic()
    end = start + WARM_UP_S + MEASURED_S
    while time.monotonic() < end:
        held.send()
        other.send()
    for flood in (held, other):
        flood.producer.flush(30)
        flood.producer = None  # its librdkafka handle destroyed before the broker stops

    rate = held.rate(start + WARM_UP_S, end)
    assert abs(rate - QUOTA) <= 0.1 * QUOTA, f"c1 produced {rate:.0f} B/s against its quota of {QUOTA}"
    assert held.throttle_ms > 0  # told in the answers' throttle_time_ms
    assert other.rate(start + WARM_UP_S, end) > 2 * QUOTA, f"c2 produced {other.rate(start, end):.0f} B/s"

    # A user's client (here the default user's) and a removal, as kafka-configs.sh names them.
    user_client = (
        "--entity-type",
        "users",
        "--entity-default",
        "--entity-type",
        "clients",
        "--entity-name",
        "c 3",
    )
    added = configs(zk_connect, "--alter", "--add-config", "consumer_byte_rate=2048", *user_client)
    assert added == "Completed Updating config for entity: default user-principal, client-id 'c 3'.\n"
    assert zk_client.exists("/config/users/<default>/clients/c%203")
    fetch = broker.server.quota_configs.managers.fetch
    wait_until(
        lambda: fetch.quota("alice", "c 3") == 2048, 10, message="the broker took the user's client quota"
    )
    every_client = configs(zk_connect, "--describe", "--entity-type", "clients")
    assert every_client == f"Configs for client-id 'c1' are producer_byte_rate={QUOTA}\n"
    configs(zk_connect, "--alter", "--delete-config", "producer_byte_rate", *entity)
    wait_until(lambda: produce.quota("ANONYMOUS", "c1") > QUOTA, 10, message="the broker dropped c1's quota")


@pytest.mark.parametrize("read_batches", [False, True], ids=["v0", "negotiated"])
def test_a_consumer_held_to_its_byte_rate_reads_everything(start_broker08, zk_connect, zk_client, read_batches):
    """A fetch over the quota is answered with no partitions (KIP-219, every version): the consumer reads
    nothing from it, takes no error, and once the throttle time has passed reads on to the end."""
    windows = {"quota.window.num": "2", "quota.window.size.seconds": "1"}
    (broker,) = start_cluster08(start_broker08, zk_client, 1, {"q": 1}, **windows)
    values = produce08([broker], "q", 4000, prefix="held")
    hold_consumer(zk_connect, [broker], "slow", 40960)

    read, throttled, offset = [], 0, 0
    with SimpleConsumer08("127.0.0.1", broker.port, client_id="slow", read_batches=read_batches) as consumer:
        while len(read) < len(values):
            fetched = consumer.fetch("q", 0, offset, 16384)
            if not fetched.data:
                throttled += 1
                assert fetched.high_watermark == -1  # a throttled answer says nothing of the log
            read += [bytes(m.value) for m in fetched]
            offset = max(offset, fetched.next_offset)
    assert set(read) == values and len(read) == len(values)
    assert throttled > 0, "no fetch was throttled"


@pytest.mark.parametrize(
    "windows, messages",
    [("2", 4000), ("3", 1000)],  # 3 windows: throttle times (~2 s) longer than a fetch's timeout (1.1 s)
    ids=["short-throttles", "long-throttles"],
)
def test_a_group_consumer_held_to_its_byte_rate_reads_everything(
    start_broker08, zk_connect, zk_client, caplog, windows, messages
):
    """Its fetches are capped at what the quota's windows take at once (else each would be throttled and
    answered empty), and a throttled answer holds its next fetch back (else it waits in the muted connection
    past its timeout and the consumer takes the broker for dead)."""
    caplog.set_level(logging.INFO, logger="zkafka.consumer.group.fetcher")
    props = {"quota.window.num": windows, "quota.window.size.seconds": "1"}
    (broker,) = start_cluster08(start_broker08, zk_client, 1, {"g": 2}, **props)
    values = produce08([broker], "g", messages, prefix="grouped")
    hold_consumer(zk_connect, [broker], "slow", 40960 if windows == "2" else 10240)
    consumer = GroupConsumer(
        {"bootstrap.servers": f"127.0.0.1:{broker.port}", "group.id": "held", "client.id": "slow",
         "auto.offset.reset": "earliest", "fetch.max.wait.ms": "100", "heartbeat.interval.ms": "1000"}
    )  # fmt: skip
    read: list[bytes] = []
    throttled = False  # seen in the quota's throttle-time metric while reading
    try:
        consumer.subscribe(["g"])
        deadline = time.monotonic() + 60
        while len(read) < len(values) and time.monotonic() < deadline:
            read += [r.value for records in consumer.poll(100).values() for r in records]
            throttled = throttled or throttling(broker)
    finally:
        consumer.close()
    assert len(read) == len(values) and set(read) == values
    assert throttled, "no fetch was throttled"
    failed = [r.getMessage() for r in caplog.records if r.getMessage().startswith("fetch from")]
    assert not failed, failed


def test_librdkafka_consumer_held_to_its_byte_rate_reads_everything(start_broker08, zk_connect, zk_client):
    """A real client's fetch (librdkafka: fetch.max.bytes 50 MB) is capped at what the quota takes at once, so it
    is not throttled and answered empty every time; it reads the backlog whole."""
    windows = {"quota.window.num": "2", "quota.window.size.seconds": "1"}
    (broker,) = start_cluster08(start_broker08, zk_client, 1, {"r": 2}, **windows)
    values = produce08([broker], "r", 4000, prefix="rdkafka")
    hold_consumer(zk_connect, [broker], "rdk", 40960)
    consumer = confluent_kafka.Consumer(
        {"bootstrap.servers": f"127.0.0.1:{broker.port}", "group.id": "rdk-held", "client.id": "rdk",
         "auto.offset.reset": "earliest", "enable.auto.commit": False}
    )  # fmt: skip
    read: list[bytes] = []
    throttled = False
    try:
        consumer.subscribe(["r"])
        deadline = time.monotonic() + 60
        while len(read) < len(values) and time.monotonic() < deadline:
            message = consumer.poll(0.1)
            if message is not None and message.error() is None:
                read.append(message.value())
            throttled = throttled or throttling(broker)
    finally:
        consumer.close()
    assert len(read) == len(values) and set(read) == values, f"{len(read)} of {len(values)} read"
    assert throttled, "no fetch was throttled"

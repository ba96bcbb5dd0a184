"""Helpers for the consumer tests: consumer configs, test data, stream collectors, group state in ZooKeeper.

Run as ``python -m tests.support.consumers consume ...`` it is a child consumer process that prints every
message it gets (``topic partition offset payload``) and commits often, for the kill -9 tests.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import gevent
from kazoo.exceptions import NoNodeError

from tests.support.wire import Producer
from zkafka.consumer import ConsumerTimeoutError, KafkaStream, MessageAndMetadata, ZookeeperConsumerConnector

# Small timeouts: the test ZooKeeper has tickTime 200, so sessions of 2-4 s are allowed.
FAST_CONSUMER = {
    "zk.sessiontimeout.ms": "3000",
    "zk.connectiontimeout.ms": "10000",
    "rebalance.backoff.ms": "200",
    "rebalance.retries.max": "10",
    "fetcher.backoff.ms": "50",
    "autocommit.interval.ms": "100",
    "socket.timeout.ms": "10000",
}


def with_overrides(props: dict[str, str], overrides: dict[str, Any]) -> dict[str, str]:
    """``props`` with keyword ``overrides`` applied (``auto_commit_enable=False`` sets ``auto.commit.enable``)."""
    return {**props, **{k.replace("_", "."): str(v) for k, v in overrides.items()}}


def consumer_config(zk_connect: str, group: str, **overrides: Any) -> dict[str, str]:
    return with_overrides({"zk.connect": zk_connect, "groupid": group, **FAST_CONSUMER}, overrides)


def produce_numbered(
    producers: dict[int, Producer], topic: str, partitions: int, count: int, prefix: str = "m"
) -> set[bytes]:
    """``count`` distinct payloads spread round-robin over every broker's ``partitions`` partitions."""
    targets = [(b, p) for b in sorted(producers) for p in range(partitions)]
    batches: dict[tuple[int, int], list[bytes]] = {t: [] for t in targets}
    payloads = set()
    for i in range(count):
        payload = f"{prefix}-{topic}-{i}".encode()
        payloads.add(payload)
        batches[targets[i % len(targets)]].append(payload)
    for (broker, partition), batch in batches.items():
        if batch:
            producers[broker].send(topic, partition, batch)
    return payloads


# Every Collector made by the running test: the fixture teardown fails the test on their stream errors.
_collectors: list[Collector] = []


class Collector:
    """Greenlets draining streams into one list of MessageAndMetadata (until stopped or the streams end).

    An exception a stream raises (other than ConsumerTimeoutError) ends that stream's greenlet and fails the
    test, at ``stop()`` or at the latest in the test's teardown (``check_collectors``), unless the test says
    ``expect_errors=True`` and reads ``errors`` itself.
    """

    def __init__(
        self, streams: Iterable[KafkaStream], on_message: Callable | None = None, expect_errors: bool = False
    ) -> None:
        self.messages: list[MessageAndMetadata] = []
        self.errors: list[BaseException] = []
        self.on_message = on_message
        self.expect_errors = expect_errors
        self.greenlets = [gevent.spawn(self._drain, s) for s in streams]
        _collectors.append(self)

    def _drain(self, stream: KafkaStream) -> None:
        while True:
            try:
                for item in stream:
                    self.messages.append(item)
                    if self.on_message is not None:
                        self.on_message(item)
                return
            except ConsumerTimeoutError:
                continue
            except Exception as exc:
                self.errors.append(exc)
                return

    def payloads(self) -> list[bytes]:
        return [m.message.payload for m in self.messages]

    def counts(self) -> Counter:
        return Counter(self.payloads())

    def stop(self) -> None:
        """Stop draining; AssertionError if a stream raised and the test did not expect it."""
        gevent.killall(self.greenlets)
        self.check()

    def check(self) -> None:
        if self.errors and not self.expect_errors:
            raise AssertionError(f"a consumer stream raised: {self.errors!r}")


def check_collectors() -> None:
    """Stop every Collector of the test that has just run; AssertionError on any unexpected stream error."""
    collectors = list(_collectors)
    _collectors.clear()
    for collector in collectors:
        gevent.killall(collector.greenlets)
    unexpected = [e for c in collectors if not c.expect_errors for e in c.errors]
    if unexpected:
        raise AssertionError(f"consumer streams raised errors no test expected: {unexpected!r}")


def connector_factory(connector_class, make_config) -> Iterator[Callable]:
    """For a fixture: ``make(*args, **overrides)`` is ``connector_class(make_config(*args, **overrides))``
    (e.g. ``make(zk_connect, group, ...)``); every connector made is shut down at the end."""
    made = []

    def make(*args: Any, **overrides: Any):
        connector = connector_class(make_config(*args, **overrides))
        made.append(connector)
        return connector

    yield make
    for connector in made:
        connector.shutdown()


def group_settled(owners_now: dict, connectors, expected: dict) -> bool:
    """ZooKeeper's owners (``owners_now``) equal ``expected`` and every live connector owns exactly its part."""
    if owners_now != expected:
        return False
    for c in connectors:
        mine = {k: v for k, v in expected.items() if v.startswith(c.consumer_id + "-")}
        if c.owned_partitions() != mine:
            return False
    return True


def owners(zk_client, group: str, partition: Callable[[str], Any] = str) -> dict[tuple[str, Any], str]:
    """``(topic, partition) -> owning thread id`` as stored under /consumers/<group>/owners; ``partition``
    turns a znode name into the key's partition (0.7: the name ``b-p`` itself)."""
    result = {}
    base = f"/consumers/{group}/owners"
    for topic in zk_client.get_children(base) if zk_client.exists(base) else []:
        for name in zk_client.get_children(f"{base}/{topic}"):
            try:
                result[(topic, partition(name))] = zk_client.get(f"{base}/{topic}/{name}")[0].decode()
            except NoNodeError:
                pass  # released between the listing and the read
    return result


def committed(zk_client, group: str, topic: str, partition: Callable[[str], Any] = str) -> dict[Any, int]:
    """``partition -> committed offset`` under /consumers/<group>/offsets/<topic> (``partition`` as in
    ``owners``)."""
    base = f"/consumers/{group}/offsets/{topic}"
    if not zk_client.exists(base):
        return {}
    return {partition(name): int(zk_client.get(f"{base}/{name}")[0]) for name in zk_client.get_children(base)}


# -- a consumer in a child process ---------------------------------------------------------------------------


def _child_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["consume"])
    parser.add_argument("--zookeeper", required=True)
    parser.add_argument("--group", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--consumerid", required=True)
    parser.add_argument("--streams", type=int, default=1)
    args = parser.parse_args(argv)
    config = consumer_config(args.zookeeper, args.group, consumerid=args.consumerid)
    config["autocommit.interval.ms"] = "50"
    connector = ZookeeperConsumerConnector(config)
    streams = connector.create_message_streams({args.topic: args.streams})[args.topic]
    print("READY", flush=True)
    out = sys.stdout

    def show(item: MessageAndMetadata) -> None:
        out.write(f"{item.topic} {item.partition} {item.offset} {item.message.payload.decode()}\n")
        out.flush()

    collector = Collector(streams, on_message=show)
    gevent.joinall(collector.greenlets)
    collector.check()  # a stream error ends the child with a traceback and a non-zero status


if __name__ == "__main__":
    _child_main(sys.argv[1:])

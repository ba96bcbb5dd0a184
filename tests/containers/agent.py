"""Load agent of the fault drills, run inside the zkafka image: a producer or one consumer-group member (0.7),
an acks=-1 producer or a watcher of a partition (0.8).

Writes one JSON object per line to stdout, for the drill to read back with ``docker logs``:

- ``produce``: ``{"e": "sent"|"error", "t", "first", "n"}`` per batch of messages ``<run>:<seq>:...``, then
  ``{"e": "done", "sent", "failed"}``. Sends ``rate`` messages a second in batches; a batch goes to one
  partition chosen at random among those registered in ZooKeeper (sync producer: no acknowledgement).
- ``consume``: ``{"e": "msg", "t", "p", "o", "v"}`` per message (partition ``b-p``, the offset after it,
  the payload's ``<run>:<seq>``), ``{"e": "own", "t", "parts", "ctimes"}`` when the owned partitions change
  (with the creation times of the member's owner znodes, as ZooKeeper stamped them),
  ``{"e": "stray", ...}`` for a message of a partition the member did not own when it got it, and
  ``{"e": "done"}`` after a clean shutdown.
- ``produce08``: Producer08, sync, acks=-1, batches of values ``<run>-<seq>`` to ``--brokers``;
  ``{"e": "acked", "t", "v": [values]}`` per acknowledged batch, ``{"e": "error", "t", "err", "n"}`` per batch
  given up after the producer's retries.
- ``watch08``: SimpleConsumer08 following partition 0's leader (found by Metadata);
  ``{"e": "seen", "t", "m": [[offset, value], ...]}`` per fetch that returned messages.
- ``member09``: a GroupConsumer member of ``--group`` (the 0.9 coordinator) that commits what it delivered
  after every poll: ``{"e": "assigned", "t", "g", "m", "parts"}`` (generation, member id, partitions),
  ``{"e": "recs", "t", "g", "m", "r": [[partition, offset, value], ...]}`` per poll,
  ``{"e": "committed", "t", "g", "m", "o": {partition: next offset}}`` per acknowledged commit,
  ``{"e": "commit-failed", "t", "err"}``.

``produce08 --keyed`` makes each value its own key (spread over the partitions by hash).

All stop on SIGTERM (or after ``--max-seconds``).
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import time

import gevent
import gevent.event


def emit(**event) -> None:
    sys.stdout.write(json.dumps(event, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def stop_event(max_seconds: float) -> gevent.event.Event:
    stop = gevent.event.Event()
    gevent.signal_handler(signal.SIGTERM, stop.set)
    gevent.signal_handler(signal.SIGINT, stop.set)
    gevent.spawn_later(max_seconds, stop.set)
    return stop


def produce(args: argparse.Namespace) -> None:
    from zkafka.producer import Producer

    stop = stop_event(args.max_seconds)
    producer = Producer(
        {
            "zk.connect": args.zk,
            "producer.type": "sync",
            "zk.sessiontimeout.ms": str(args.session_ms),
            "socket.timeout.ms": "5000",
        }
    )
    emit(e="ready", t=time.time())
    seq = sent = failed = 0
    interval = args.batch / args.rate
    next_send = time.monotonic()
    while seq < args.count and not stop.is_set():
        n = min(args.batch, args.count - seq)
        batch = [f"{args.run}:{seq + i}:".encode().ljust(args.size, b".") for i in range(n)]
        try:
            producer.send(args.topic, batch)
            sent += n
            emit(e="sent", t=time.time(), first=seq, n=n)
        except Exception as exc:  # a broker gone under the producer: count it, go on
            failed += n
            emit(e="error", t=time.time(), first=seq, n=n, err=f"{type(exc).__name__}: {exc}")
        seq += n
        next_send += interval
        stop.wait(max(0.0, next_send - time.monotonic()))
    producer.close()
    emit(e="done", t=time.time(), sent=sent, failed=failed)


def consume(args: argparse.Namespace) -> None:
    from kazoo.exceptions import NoNodeError

    from zkafka.consumer import ConsumerTimeoutError, create_consumer_connector

    stop = stop_event(args.max_seconds)
    connector = create_consumer_connector(
        {
            "zk.connect": args.zk,
            "groupid": args.group,
            "consumerid": args.id,
            "zk.sessiontimeout.ms": str(args.session_ms),
            "autocommit.interval.ms": str(args.autocommit_ms),
            "consumer.timeout.ms": "200",
            "autooffset.reset": "smallest",
            "rebalance.backoff.ms": "500",
            "rebalance.retries.max": "20",
            "fetcher.backoff.ms": "100",
        }
    )
    stream = connector.create_message_streams({args.topic: 1})[args.topic][0]
    me = f"{args.group}_{args.id}-0"
    owned: dict[str, int | None] = {}  # partition -> creation time (ms) of my owner znode, once read

    def claim_time(partition: str) -> int | None:
        """ctime of my owner znode of ``partition``; -1 if another thread holds it; None if unreadable now."""
        try:
            data, stat = connector.zk.get(connector.dirs.owner_path(args.topic, partition))
        except NoNodeError:
            return -1
        except Exception:
            return None
        return stat.ctime if data.decode() == me else -1

    def report_owned() -> set[str]:
        now = {p for (_, p) in connector.owned_partitions()}
        changed = now != set(owned)
        for p in set(owned) - now:
            del owned[p]
        missing = [p for p in now if owned.get(p) is None]
        for p in missing:
            owned[p] = claim_time(p) if connector.zk.connected else None
        if changed or any(owned[p] is not None for p in missing):
            ctimes = {p: c for p, c in owned.items() if c is not None and c >= 0}
            emit(e="own", t=time.time(), parts=sorted(owned), ctimes=ctimes)
        return now

    report_owned()
    while not stop.is_set():
        try:
            for mm in stream:
                t = time.time()
                part = mm.partition.name
                value = bytes(mm.payload).split(b":", 2)
                emit(e="msg", t=t, p=part, o=mm.offset, v=b":".join(value[:2]).decode())
                if part not in report_owned():
                    emit(e="stray", t=t, p=part, o=mm.offset)
                if stop.is_set():
                    break
        except ConsumerTimeoutError:
            pass
        report_owned()
    connector.shutdown()
    emit(e="done", t=time.time())


# -- the 0.8 line: acks=-1 and a watcher of the partition leader's log ----------------------------------


def produce08(args: argparse.Namespace) -> None:
    from zkafka.producer.errors import FailedToSendMessageError
    from zkafka.producer.producer08 import KeyedMessage, Producer08

    stop = stop_event(args.max_seconds)
    config = {
        "metadata.broker.list": args.brokers,
        "request.required.acks": "-1",
        "request.timeout.ms": "5000",
        "message.send.max.retries": "40",
        "retry.backoff.ms": "250",
    }
    seq = 0
    with Producer08(config) as producer:
        emit(e="ready", t=time.time())
        while not stop.is_set():
            values = [f"{args.run}-{seq + i}" for i in range(args.batch)]
            try:
                producer.send(
                    *(
                        KeyedMessage(args.topic, v.encode() if args.keyed else None, v.encode())
                        for v in values
                    )
                )
                emit(e="acked", t=time.time(), v=values)
            except FailedToSendMessageError as exc:
                emit(e="error", t=time.time(), n=len(values), err=str(exc))
            seq += len(values)
            stop.wait(args.pause)
    emit(e="done", t=time.time())


def leader_of(brokers: list[tuple[str, int]], topic: str) -> tuple[str, int] | None:
    from zkafka.consumer.simple08 import SimpleConsumer08

    for host, port in brokers:
        try:
            with SimpleConsumer08(host, port, socket_timeout_ms=3000) as c:
                answer = c.topic_metadata([topic])
        except Exception:  # noqa: BLE001 - that broker is down: ask the next
            continue
        where = {b.node_id: (b.host, b.port) for b in answer.brokers}
        for t in answer.topics:
            for p in t.partitions:
                if p.partition == 0 and p.leader in where:
                    return where[p.leader]
    return None


def watch08(args: argparse.Namespace) -> None:
    from zkafka.consumer.simple08 import SimpleConsumer08

    stop = stop_event(args.max_seconds)
    brokers = [(h, int(p)) for h, p in (b.rsplit(":", 1) for b in args.brokers.split(","))]
    offset, consumer = 0, None
    while not stop.is_set():
        try:
            if consumer is None:
                leader = leader_of(brokers, args.topic)
                if leader is None:
                    stop.wait(0.1)
                    continue
                consumer = SimpleConsumer08(*leader, socket_timeout_ms=3000)
            fetched = consumer.fetch(args.topic, 0, offset, max_wait_ms=200, min_bytes=1)
            fetched.check_error()
            seen = [[m.offset, m.value.decode()] for m in fetched.messages()]
            if seen:
                emit(e="seen", t=time.time(), m=seen)
            offset = fetched.next_offset
        except Exception:  # noqa: BLE001 - the leader moved or died: find it again
            if consumer is not None:
                consumer.close()
            consumer = None
            stop.wait(0.1)
    emit(e="done", t=time.time())


def member09(args: argparse.Namespace) -> None:
    from zkafka.consumer.group import GroupConsumer, TopicPartition

    stop = stop_event(args.max_seconds)
    consumer = GroupConsumer(
        {
            "bootstrap.servers": args.brokers,
            "group.id": args.group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": "false",
            "session.timeout.ms": str(args.session_ms),
            "heartbeat.interval.ms": str(max(args.session_ms // 6, 100)),
            "request.timeout.ms": str(args.session_ms + 10000),
            "fetch.max.wait.ms": "100",
        }
    )
    positions: dict[int, int] = {}  # partition -> next offset, of those delivered in the current assignment

    def ident() -> dict:
        return {"g": consumer.coordinator.generation, "m": consumer.coordinator.member_id}

    class Report:
        def on_partitions_revoked(self, revoked) -> None:
            positions.clear()

        def on_partitions_assigned(self, assigned) -> None:
            emit(e="assigned", t=time.time(), parts=sorted(tp.partition for tp in assigned), **ident())

    consumer.subscribe([args.topic], listener=Report())
    while not stop.is_set():
        batches = consumer.poll(200)
        if not batches:
            continue
        records = [[r.partition, r.offset, r.value.decode()] for rs in batches.values() for r in rs]
        tags = ident()
        emit(e="recs", t=time.time(), r=records, **tags)
        for partition, offset, _ in records:
            positions[partition] = offset + 1
        offsets = dict(positions)
        try:
            consumer.commit({TopicPartition(args.topic, p): o for p, o in offsets.items()})
        except Exception as exc:  # noqa: BLE001 - reported; the member goes on as an application would
            emit(e="commit-failed", t=time.time(), err=f"{type(exc).__name__}: {exc}")
            continue
        emit(e="committed", t=time.time(), o=offsets, **tags)
    consumer.close()
    emit(e="done", t=time.time())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["produce", "consume", "produce08", "watch08", "member09"])
    parser.add_argument("--zk", help="0.7: ZooKeeper")
    parser.add_argument("--brokers", help="0.8: host:port,... to bootstrap from")
    parser.add_argument("--topic", required=True)
    parser.add_argument("--session-ms", type=int, default=4000)
    parser.add_argument("--max-seconds", type=float, default=300)
    parser.add_argument("--run", default="r", help="produce: payload prefix")
    parser.add_argument("--count", type=int, default=100000, help="produce: messages at most")
    parser.add_argument("--rate", type=float, default=200, help="produce: messages a second")
    parser.add_argument("--batch", type=int, default=10, help="produce: messages a send")
    parser.add_argument("--pause", type=float, default=0.02, help="produce08: seconds between sends")
    parser.add_argument("--size", type=int, default=100, help="produce: bytes a message")
    parser.add_argument("--keyed", action="store_true", help="produce08: each value its own key")
    parser.add_argument("--group", help="consume, member09: the group")
    parser.add_argument("--id", help="consume: the consumerid")
    parser.add_argument("--autocommit-ms", type=int, default=1000)
    args = parser.parse_args()
    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    logging.getLogger("kazoo").setLevel(logging.INFO)
    modes = {
        "produce": produce,
        "consume": consume,
        "produce08": produce08,
        "watch08": watch08,
        "member09": member09,
    }
    modes[args.mode](args)


if __name__ == "__main__":
    main()

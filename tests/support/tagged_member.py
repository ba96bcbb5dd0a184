"""A group member as a child process that says which generation and member id delivered each record and which
commits were acknowledged, for the coordinator failover drill (tests/integration/test_coordinator_failover.py).

    python -m tests.support.tagged_member CLIENT BOOTSTRAP GROUP TOPIC [SESSION_TIMEOUT_MS]

CLIENT is ``zkafka`` (GroupConsumer), ``kafka-python`` (told the broker is 0.9) or ``kafka-python-probe``
(unpinned: it asks ApiVersions). One line per event, flushed at once, ``-`` for an empty field:
``assigned <generation> <member> <partitions>``, ``record <generation> <member> <partition> <offset> <value>``,
``committed <generation> <member> <partition>:<next offset>,...`` after each acknowledged commit (of the
positions the member delivered), ``commit-failed <error>`` when a commit is not acknowledged.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable


class Tags:
    """The (generation, member id) a client says it is in now, and the commit of explicit offsets."""

    def __init__(self, client: str, bootstrap: str, group: str, topic: str, session_timeout_ms: int) -> None:
        self.topic = topic
        self.listener_base: type = object
        heartbeat_ms = max(session_timeout_ms // 6, 100)
        if client == "zkafka":
            from zkafka.consumer.group import GroupConsumer, TopicPartition

            self.consumer = GroupConsumer(
                {
                    "bootstrap.servers": bootstrap,
                    "group.id": group,
                    "auto.offset.reset": "earliest",
                    "enable.auto.commit": "false",
                    "session.timeout.ms": str(session_timeout_ms),
                    "heartbeat.interval.ms": str(heartbeat_ms),
                    "request.timeout.ms": str(session_timeout_ms + 10000),
                    "fetch.max.wait.ms": "100",
                }
            )
            self.poll: Callable[[], dict] = lambda: self.consumer.poll(200)
            self._commit = lambda offsets: self.consumer.commit(
                {TopicPartition(topic, p): o for p, o in offsets.items()}
            )
            self.ident = lambda: (self.consumer.coordinator.generation, self.consumer.coordinator.member_id)
        else:
            from kafka import ConsumerRebalanceListener, KafkaConsumer, OffsetAndMetadata, TopicPartition

            self.listener_base = ConsumerRebalanceListener
            pinned = {"api_version": (0, 9)} if client == "kafka-python" else {}
            self.consumer = KafkaConsumer(
                bootstrap_servers=bootstrap,
                group_id=group,
                auto_offset_reset="earliest",
                enable_auto_commit=False,
                session_timeout_ms=session_timeout_ms,
                heartbeat_interval_ms=heartbeat_ms,
                request_timeout_ms=session_timeout_ms + 10000,
                fetch_max_wait_ms=100,
                **pinned,
            )
            self.poll = lambda: self.consumer.poll(timeout_ms=200)
            self._commit = lambda offsets: self.consumer.commit(
                {TopicPartition(topic, p): OffsetAndMetadata(o, "", -1) for p, o in offsets.items()}
            )

            def ident() -> tuple[int, str]:
                generation = self.consumer._coordinator._generation  # test-only peek at kafka-python's state
                return generation.generation_id, generation.member_id

            self.ident = ident


def main(client: str, bootstrap: str, group: str, topic: str, session_timeout_ms: int = 10000) -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    tags = Tags(client, bootstrap, group, topic, session_timeout_ms)
    positions: dict[int, int] = {}  # partition -> next offset, of those delivered in the current assignment

    def say(*words: object) -> None:
        print(*(w if w != "" else "-" for w in words), flush=True)

    class Report(tags.listener_base):
        def on_partitions_revoked(self, revoked) -> None:
            positions.clear()

        def on_partitions_assigned(self, assigned) -> None:
            say("assigned", *tags.ident(), ",".join(str(tp.partition) for tp in sorted(assigned)) or "-")

    tags.consumer.subscribe([topic], listener=Report())
    while True:
        batches = tags.poll()
        generation, member = tags.ident()
        for records in batches.values():
            for r in records:
                say("record", generation, member, r.partition, r.offset, r.value.decode())
                positions[r.partition] = r.offset + 1
        if not batches:
            continue
        offsets = dict(positions)
        try:
            tags._commit(offsets)
        except Exception as exc:  # noqa: BLE001 - reported, the member goes on as an application would
            say("commit-failed", type(exc).__name__)
            continue
        say("committed", generation, member, ",".join(f"{p}:{o}" for p, o in sorted(offsets.items())))


if __name__ == "__main__":
    main(*sys.argv[1:5], *(int(a) for a in sys.argv[5:6]))

"""A kafka-python group member as a child process, for tests that kill consumers with SIGKILL.

    python -m tests.support.kafka_python_member BOOTSTRAP GROUP TOPIC [SESSION_TIMEOUT_MS]

It tells kafka-python the broker is 0.9, subscribes, and prints one line per event, flushed at once:
``assigned <partitions>`` after each rebalance, ``record <partition> <offset> <value>`` per message, and
``committed`` after the synchronous commit that follows every non-empty poll.
"""

from __future__ import annotations

import logging
import sys

from kafka import ConsumerRebalanceListener, KafkaConsumer


def main(bootstrap: str, group: str, topic: str, session_timeout_ms: int = 2000) -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        api_version=(0, 9),
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=session_timeout_ms,
        heartbeat_interval_ms=max(session_timeout_ms // 6, 100),
        request_timeout_ms=session_timeout_ms + 10000,
    )

    class Report(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked):
            pass

        def on_partitions_assigned(self, assigned):
            print("assigned", ",".join(str(tp.partition) for tp in sorted(assigned)), flush=True)

    consumer.subscribe([topic], listener=Report())
    report_forever(lambda: consumer.poll(timeout_ms=200), consumer.commit)


def report_forever(poll, commit) -> None:
    """Print every record ``poll()`` returns, then ``commit()`` and say so (any client with the 0.9 shape)."""
    while True:
        batches = poll()
        for records in batches.values():
            for r in records:
                print("record", r.partition, r.offset, r.value.decode(), flush=True)
        if batches:
            commit()
            print("committed", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], *(int(a) for a in sys.argv[4:5]))

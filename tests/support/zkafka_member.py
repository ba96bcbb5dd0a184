"""A zkafka GroupConsumer member as a child process, for tests that kill consumers with SIGKILL; it prints
what tests/support/kafka_python_member.py prints (``assigned``, ``record``, ``committed`` lines).

    python -m tests.support.zkafka_member BOOTSTRAP GROUP TOPIC [SESSION_TIMEOUT_MS]
"""

from __future__ import annotations

import logging
import sys

from tests.support.kafka_python_member import report_forever
from zkafka.consumer.group import GroupConsumer


class Report:
    def on_partitions_revoked(self, revoked) -> None:
        pass

    def on_partitions_assigned(self, assigned) -> None:
        print("assigned", ",".join(str(tp.partition) for tp in sorted(assigned)), flush=True)


def main(bootstrap: str, group: str, topic: str, session_timeout_ms: int = 2000) -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    consumer = GroupConsumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": "false",
            "session.timeout.ms": str(session_timeout_ms),
            "heartbeat.interval.ms": str(max(session_timeout_ms // 6, 100)),
            "request.timeout.ms": str(session_timeout_ms + 10000),
            "fetch.max.wait.ms": "100",
        }
    )
    consumer.subscribe([topic], listener=Report())
    report_forever(lambda: consumer.poll(200), consumer.commit)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], *(int(a) for a in sys.argv[4:5]))

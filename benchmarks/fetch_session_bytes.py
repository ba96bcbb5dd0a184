"""What a fetch session (KIP-227) saves on the wire: the bytes of Fetch v11 requests and answers, full and
incremental, for a consumer of ``--partitions`` partitions spread over ``--topics`` topics, as the codec
encodes them (no broker needed).

A caught-up consumer's full fetch names every partition and its answer carries every partition (empty);
in a session the next fetch names only the partitions whose fetch offset moved (``--changed``) and the answer
only the partitions with something new.

    python benchmarks/fetch_session_bytes.py [--partitions 100] [--topics 10] [--changed 1]
"""

from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from zkafka.protocol import v08  # noqa: E402
from zkafka.protocol.fetch import FETCH_RESPONSE, fetch_request, response_partition_class  # noqa: E402
from zkafka.protocol.versioned import make  # noqa: E402

VERSION = 11
SESSION_ID = 123456789


def partitions(count: int, topics: int) -> list[tuple[str, int]]:
    """``count`` partitions over ``topics`` topics named like a service's ("payments.events-03")."""
    return [(f"payments.events-{i % topics:02d}", i // topics) for i in range(count)]


def request(tps: list[tuple[str, int]], session_id: int, epoch: int) -> bytes:
    body = fetch_request(
        VERSION,
        [(topic, partition, 1_234_567, 1 << 20) for topic, partition in tps],
        leader_epochs=[0] * len(tps),
        max_wait_ms=500,
        min_bytes=1,
        max_bytes=50 << 20,
        session_id=session_id,
        session_epoch=epoch,
    )
    return v08.encode_request(body, 1, "rdkafka")


def response(tps: list[tuple[str, int]], session_id: int) -> int:
    topics: dict[str, list] = {}
    for topic, partition in tps:
        values = {
            "partition": partition,
            "error": 0,
            "high_watermark": 1_234_567,
            "last_stable_offset": 1_234_567,
            "log_start_offset": 0,
            "aborted_transactions": None,
            "preferred_read_replica": -1,
            "message_set": b"",
        }
        topics.setdefault(topic, []).append(make(response_partition_class(VERSION), **values))
    body = make(
        FETCH_RESPONSE[VERSION],
        throttle_time_ms=0,
        error=0,
        session_id=session_id,
        topics=[{"topic": t, "partitions": ps} for t, ps in topics.items()],
    )
    return sum(len(part) for part in v08.encode_response(1, body))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--topics", type=int, default=10)
    parser.add_argument("--changed", type=int, default=1)
    args = parser.parse_args()
    tps = partitions(args.partitions, args.topics)
    changed = tps[: args.changed]
    rows = [
        ("full request (every partition)", len(request(tps, 0, 0))),
        (f"incremental request ({args.changed} changed)", len(request(changed, SESSION_ID, 5))),
        ("incremental request (none changed)", len(request([], SESSION_ID, 5))),
        ("full answer, nothing new", response(tps, SESSION_ID)),
        (f"incremental answer ({args.changed} with news)", response(changed, SESSION_ID)),
        ("incremental answer, nothing new", response([], SESSION_ID)),
    ]
    print(f"Fetch v{VERSION}, {args.partitions} partitions over {args.topics} topics (bytes on the wire):")
    for name, size in rows:
        print(f"  {name:<40} {size:>6}")


if __name__ == "__main__":
    main()

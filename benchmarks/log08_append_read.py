"""0.8 log micro-benchmark: leader appends (offset assignment, index) and reads (index lookup + scan).

Appends 100-byte messages in message sets of about 1 MB to one Log08 (1 GiB segments, index every 4 KiB,
no flush), then times fetch-sized reads (1 MB) and small reads (one message) at random offsets, which
each resolve an offset to a file position through the index and a scan of at most one index interval.

    python benchmarks/log08_append_read.py [--messages 1000000] [--message-size 100] [--set-bytes 1000000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time

from zkafka.log.log08 import Log08
from zkafka.log.log_config import LogConfig
from zkafka.records.compression import GZIP
from zkafka.records.format08 import build_message_set


def run(messages: int, message_size: int, set_bytes: int, codec: int, reads: int) -> dict:
    per_set = max(1, set_bytes // (message_size + 26))
    data = build_message_set([(None, b"x" * message_size)] * per_set, codec)
    sets = max(1, messages // per_set)
    with tempfile.TemporaryDirectory() as log_dir:
        path = os.path.join(log_dir, "bench-0")
        os.makedirs(path)
        log = Log08(path, "bench", 0, LogConfig(), need_recovery=False)
        start = time.perf_counter()
        for _ in range(sets):
            log.append(data)
        append_s = time.perf_counter() - start
        end = log.log_end_offset
        rng = random.Random(7)
        targets = [rng.randrange(end) for _ in range(reads)]
        start = time.perf_counter()
        total = 0
        for offset in targets:
            total += log.read(offset, 1_000_000).length
        fetch_s = time.perf_counter() - start
        start = time.perf_counter()
        for offset in targets:
            log.read(offset, message_size + 26)
        small_s = time.perf_counter() - start
        log.close()
    appended = sets * per_set
    return {
        "codec": codec,
        "messages": appended,
        "messages_per_set": per_set,
        "append_seconds": round(append_s, 3),
        "append_messages_per_sec": round(appended / append_s),
        "append_mb_per_sec": round(sets * len(data) / append_s / 1e6, 1),
        "fetch_reads_per_sec": round(reads / fetch_s),
        "fetch_mean_bytes": total // reads,
        "small_reads_per_sec": round(reads / small_s),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--message-size", type=int, default=100)
    parser.add_argument("--set-bytes", type=int, default=1_000_000)
    parser.add_argument("--reads", type=int, default=5000)
    parser.add_argument("--gzip", action="store_true", help="send gzip wrappers (the leader recompresses)")
    args = parser.parse_args()
    codec = GZIP if args.gzip else 0
    print(json.dumps(run(args.messages, args.message_size, args.set_bytes, codec, args.reads), indent=2))


if __name__ == "__main__":
    main()

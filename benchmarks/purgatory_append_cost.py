"""What parked delayed operations cost an append: ``check_and_complete`` timed with and without 10,000
operations parked on other keys.

Each row times ``--calls`` checks of one key, on a key nobody watches and on a key with one waiter whose
condition does not hold yet (so it is tried and stays parked), with 0 and with ``--parked`` operations
parked on other keys, each with its own timer. Also times parking and the expiry of all parked operations,
and the process CPU spent while they wait.

    python benchmarks/purgatory_append_cost.py [--calls 200000] [--parked 10000]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from zkafka.server.purgatory import DelayedOperation, Purgatory  # noqa: E402


class WaitForBytes(DelayedOperation):
    """Completes when its partition holds ``min_bytes`` (a DelayedFetch reduced to its condition)."""

    def __init__(self, timeout_ms: int, log: dict, key, min_bytes: int = 1) -> None:
        super().__init__(timeout_ms)
        self.log, self.key, self.min_bytes = log, key, min_bytes

    def try_complete(self) -> bool:
        return self.force_complete() if self.log.get(self.key, 0) >= self.min_bytes else False

    def on_complete(self):
        return self.log.get(self.key, 0)


def time_checks(purgatory: Purgatory, key, calls: int) -> float:
    """Nanoseconds per ``check_and_complete(key)`` (best of three runs)."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter_ns()
        for _ in range(calls):
            purgatory.check_and_complete(key)
        best = min(best, (time.perf_counter_ns() - started) / calls)
    return best


def measure(calls: int, parked_count: int) -> list[tuple[int, str, float]]:
    rows = []
    for parked in (0, parked_count):
        purgatory, log = Purgatory("fetch"), {}
        others = [WaitForBytes(60_000, log, ("other", i)) for i in range(parked)]
        for op in others:
            purgatory.try_complete_else_watch(op, [op.key])
        rows.append((parked, "unrelated key", time_checks(purgatory, ("t", 0), calls)))
        waiter = WaitForBytes(60_000, log, ("t", 1), min_bytes=1 << 30)
        purgatory.try_complete_else_watch(waiter, [("t", 1)])
        rows.append((parked, "key with 1 waiter", time_checks(purgatory, ("t", 1), calls)))
        purgatory.shutdown()
    return rows


def measure_parking(parked: int, timeout_ms: int = 1000) -> dict[str, float]:
    purgatory, log = Purgatory("fetch"), {}
    ops = [WaitForBytes(timeout_ms, log, ("other", i)) for i in range(parked)]
    started = time.perf_counter()
    for op in ops:
        purgatory.try_complete_else_watch(op, [op.key])
    park_us = (time.perf_counter() - started) / parked * 1e6
    cpu, wall = time.process_time(), time.perf_counter()
    ops[-1].result.get(timeout=timeout_ms / 1000 + 30)
    for op in ops:
        op.result.get(timeout=30)
    return {
        "park_us": park_us,
        "expire_all_s": time.perf_counter() - started,
        "cpu_while_waiting_s": time.process_time() - cpu,
        "wall_while_waiting_s": time.perf_counter() - wall,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200_000)
    parser.add_argument("--parked", type=int, default=10_000)
    args = parser.parse_args()

    print(f"{'parked on other keys':>20}  {'checked key':<18}  {'ns per check_and_complete':>25}")
    for parked, what, ns in measure(args.calls, args.parked):
        print(f"{parked:>20}  {what:<18}  {ns:>25.0f}")
    parking = measure_parking(args.parked)
    print(
        f"\nparking {args.parked} operations: {parking['park_us']:.1f} us each; all expired "
        f"{parking['expire_all_s']:.2f} s after the first was parked (timeout 1 s); process CPU while "
        f"they waited: {parking['cpu_while_waiting_s']:.3f} s of {parking['wall_while_waiting_s']:.2f} s"
    )


if __name__ == "__main__":
    main()

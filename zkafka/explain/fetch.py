"""``zkafka explain fetch``: what the leader does with one fetch, given the bytes readable past its offset, its
``min_bytes`` (fetch.min.bytes) and ``max_wait_ms`` (fetch.max.wait.ms), and appends arriving later.

The broker answers at once when ``max_wait_ms`` is 0 or less, when the bytes readable already reach
``min_bytes``, or when reading fails (not the leader, an unknown partition) or the offset lies a whole
segment behind; otherwise the fetch is parked in the fetch purgatory as a ``DelayedFetch`` watched under its
partition, every append re-checks it, and it is answered when the readable bytes reach ``min_bytes`` or at
``max_wait_ms`` with whatever there is. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from zkafka.explain.steps import Explanation, Step

HANDLE_FETCH = "zkafka.server.fetch_apis.FetchApis.handle_fetch"
READ = "zkafka.server.log_read.read_from_local_log"
DELAYED_FETCH = "zkafka.server.delayed_fetch.DelayedFetch.is_satisfied"
APPEND = "zkafka.server.replica_manager.ReplicaManager.try_complete_delayed_fetch"
EXPIRE = "zkafka.server.purgatory.DelayedOperation.force_complete"


def explain_fetch(
    available_bytes: int,
    min_bytes: int = 1,
    max_wait_ms: int = 500,
    appends: Sequence[tuple[int, int]] = (),
    error: str | None = None,
    behind: bool = False,
) -> Explanation:
    """The steps of one fetch; ``appends`` are ``(ms after the fetch arrived, bytes appended)``."""
    title = (
        f"a fetch with min_bytes {min_bytes}, max_wait_ms {max_wait_ms}: {available_bytes} bytes readable "
        "past its fetch offset when it arrives"
    )
    steps = [
        Step(
            "the leader reads each partition from the fetch offset, up to the high watermark (a follower: up "
            "to the log end offset)",
            READ,
            [f"{available_bytes} bytes readable now; min_bytes {min_bytes}"],
        )
    ]
    now_reason = _answer_now(available_bytes, min_bytes, max_wait_ms, error, behind)
    if now_reason:
        steps.append(Step(f"answered at once: {now_reason}", HANDLE_FETCH, [_sent(available_bytes, 0)]))
        return Explanation(title, steps, {})
    steps.append(
        Step(
            "not enough to answer: parked in the fetch purgatory as a DelayedFetch, watched under its partition, "
            f"with a timer of max_wait_ms {max_wait_ms}",
            HANDLE_FETCH,
            [f"{available_bytes} < min_bytes {min_bytes}"],
        )
    )
    readable = available_bytes
    for at_ms, size in sorted(appends):
        if at_ms >= max_wait_ms:
            break
        readable += size
        done = readable >= min_bytes
        steps.append(
            Step(
                f"+{at_ms} ms: an append of {size} bytes to the partition re-checks the parked fetch: "
                f"{readable} bytes readable, {'enough: completed' if done else 'still below min_bytes: stays parked'}",
                DELAYED_FETCH if not done else APPEND,
                [_sent(readable, at_ms)] if done else [],
            )
        )
        if done:
            return Explanation(title, steps, {})
    steps.append(
        Step(
            f"+{max_wait_ms} ms: max_wait_ms ends; the purgatory's timer completes the fetch with whatever is "
            "readable then",
            EXPIRE,
            [_sent(readable, max_wait_ms)],
        )
    )
    return Explanation(title, steps, {})


def _answer_now(available: int, min_bytes: int, max_wait_ms: int, error: str | None, behind: bool) -> str:
    if error:
        return f"reading failed ({error}): the error is the answer"
    if max_wait_ms <= 0:
        return f"max_wait_ms {max_wait_ms} <= 0: the consumer does not want to wait"
    if behind:
        return "the fetch offset lies in an older segment than the log's last: a whole segment is readable"
    if available >= min_bytes:
        return f"{available} bytes readable >= min_bytes {min_bytes}"
    return ""


def _sent(size: int, at_ms: int) -> str:
    what = f"{size} bytes" if size else "an empty message set"
    return f"the response (at +{at_ms} ms) carries {what}, sent from the segment files with sendfile"

"""Hostile input on the 0.8 line, against a real 0.8 broker process: thousands of fuzzed frames of every
request type (tests/support/fuzz08.py), each on its own connection, while a good client keeps producing and
fetching on another; and compression bombs refused without being inflated.

What must hold: a frame that cannot be a request closes its connection; a well-formed produce of a corrupt
set is answered with error 2, a bomb with error 10; every answer is a well-formed response; nothing is
appended to any log but the good client's (and the coordinator's own __consumer_offsets); the broker
process is alive at the end. ``ZKAFKA_FUZZ_FRAMES`` (default 10000, ~10 s) and ``ZKAFKA_FUZZ_SEED`` scale it.
"""

from __future__ import annotations

import os
import selectors
import socket
import struct
import time
from pathlib import Path

import pytest

from tests.support.bombs import bomb_set08
from tests.support.fuzz08 import ANSWER, ANY, CLOSE, VICTIM, Frame, base_frames, fuzz_frames
from tests.support.server08 import Client08, fetch_request, produce_request, wait_for_leaders
from zkafka.admin.topics import create_topic_with_assignment
from zkafka.protocol import v08
from zkafka.protocol.api_keys import API_VERSIONS
from zkafka.protocol.offsets import ListOffsetsRequestPartition, ListOffsetsRequestTopic, ListOffsetsRequestV0
from zkafka.records import format08
from zkafka.records.compression import GZIP, LZ4, SNAPPY
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration

MESSAGE_MAX_BYTES = 100_000
GOOD = "good"
WINDOW = 48  # connections in flight at once
ANY_WAIT = 1.0  # a frame that may be a request is given this long to be answered (a long poll parks)
CLOSE_WAIT = 10.0  # a frame that cannot be one must be closed by then


def start(broker08_process, zk_client, **props) -> tuple:
    broker = broker08_process(
        0,
        auto_create_topics_enable="false",
        offsets_topic_num_partitions="1",
        offsets_topic_replication_factor="1",
        **props,
    )
    for topic in (VICTIM, GOOD):
        create_topic_with_assignment(zk_client, topic, "0")
    client = wait_until(lambda: _connect(broker.port), 30, message="the 0.8 broker process listening")
    wait_for_leaders(client, [VICTIM, GOOD])
    return broker, client


def _connect(port: int) -> Client08 | None:
    try:
        return Client08(port)
    except OSError:
        return None


def produce(client: Client08, topic: str, values: list[bytes]) -> int:
    message_set = format08.build_message_set([(None, v) for v in values])
    part = client.call(produce_request(topic, 0, message_set)).topics[0].partitions[0]
    assert part.error == 0, f"the good client's produce to {topic} failed with {part.error}"
    return part.offset


def fetch(client: Client08, topic: str, offset: int) -> list[bytes]:
    part = client.call(fetch_request(topic, 0, offset)).topics[0].partitions[0]
    assert part.error == 0
    return [m.value for m in format08.iter_messages(part.message_set, offset)]


def log_sizes(log_dir: Path) -> dict[str, int]:
    """Bytes of every log segment under the broker's log dir, by partition directory and file."""
    return {
        f"{path.parent.name}/{path.name}": path.stat().st_size
        for path in log_dir.glob("*/*.log")
        if not path.parent.name.startswith("__consumer_offsets")
    }


class Outcome:
    __slots__ = ("frame", "sock", "got", "deadline", "result")

    def __init__(self, frame: Frame, sock: socket.socket, deadline: float) -> None:
        self.frame, self.sock, self.deadline = frame, sock, deadline
        self.got = bytearray()
        self.result: str | None = None


def send(frame: Frame, port: int) -> Outcome:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    outcome = Outcome(frame, sock, time.monotonic() + (ANY_WAIT if frame.expect == ANY else CLOSE_WAIT))
    try:
        sock.sendall(frame.data)
        if frame.half_close:
            sock.shutdown(socket.SHUT_WR)
    except OSError:  # the broker closed while the frame was still being sent (a bomb of a bad frame)
        outcome.result = "closed"
    sock.setblocking(False)
    return outcome


def read(outcome: Outcome) -> None:
    try:
        chunk = outcome.sock.recv(1 << 16)
    except BlockingIOError:
        return
    except OSError:
        chunk = b""
    if not chunk:
        outcome.result = "closed"
        return
    outcome.got += chunk
    if len(outcome.got) >= 4 and len(outcome.got) >= 4 + struct.unpack_from(">i", outcome.got)[0]:
        outcome.result = "answered"


def check(outcome: Outcome) -> None:
    """The outcome is one the frame allows; an answer is a well-formed response to it."""
    frame, result = outcome.frame, outcome.result or "parked"
    if frame.expect == CLOSE:
        assert result == "closed", f"{frame.name}: {result}, not closed"
    if frame.expect == ANSWER:
        assert result == "answered", f"{frame.name}: {result}, not answered"
    if result != "answered":
        return
    api_key, api_version, correlation_id = struct.unpack_from(">hhi", frame.data, 4)
    if api_key == API_VERSIONS and (api_key, api_version) not in v08.SCHEMAS:
        api_version = 0  # a newer ApiVersions is answered v0-shaped (UNSUPPORTED_VERSION and the ranges)
    size = struct.unpack_from(">i", outcome.got)[0]
    assert len(outcome.got) == 4 + size, f"{frame.name}: bytes after the answer"
    answer = v08.decode_response(api_key, api_version, bytes(outcome.got[4:]))
    assert answer.correlation_id == correlation_id, frame.name
    if frame.expect == ANSWER:
        errors = {p.error for t in answer.body.topics for p in t.partitions}
        assert errors == set(frame.errors), f"{frame.name}: answered {errors}, not {set(frame.errors)}"


def run(frames: list[Frame], port: int, good: Client08, every: int = 200) -> dict[str, int]:
    """Send every frame on its own connection, WINDOW at a time; the good client produces one message and
    fetches it back after each ``every`` frames started. Returns the counts of each outcome and of the good
    client's messages."""
    counts = {"closed": 0, "answered": 0, "parked": 0, "good": 0}
    selector = selectors.DefaultSelector()
    pending = list(reversed(frames))
    started = good_next = 0
    in_flight: dict[int, Outcome] = {}

    def finish(outcome: Outcome) -> None:
        if outcome.sock.fileno() in in_flight:
            selector.unregister(outcome.sock)
            del in_flight[outcome.sock.fileno()]
        check(outcome)
        counts[outcome.result or "parked"] += 1
        outcome.sock.close()

    while pending or in_flight:
        while pending and len(in_flight) < WINDOW:
            outcome = send(pending.pop(), port)
            started += 1
            if outcome.result:
                finish(outcome)
                continue
            in_flight[outcome.sock.fileno()] = outcome
            selector.register(outcome.sock, selectors.EVENT_READ, outcome)
        for key, _ in selector.select(timeout=0.05):
            read(key.data)
            if key.data.result:
                finish(key.data)
        now = time.monotonic()
        for outcome in [o for o in in_flight.values() if o.deadline < now]:
            finish(outcome)
        if started >= good_next:
            good_next += every
            value = f"good {started}".encode()
            offset = produce(good, GOOD, [value])
            assert fetch(good, GOOD, offset) == [value], "the good client's message did not come back"
            counts["good"] += 1
    selector.close()
    return counts


def test_fuzzed_frames_of_every_request_type_close_only_their_connection(
    broker08_process, zk_client, tmp_path, capsys
):
    count = int(os.environ.get("ZKAFKA_FUZZ_FRAMES", "10000"))
    seed = int(os.environ.get("ZKAFKA_FUZZ_SEED", "14"))
    broker, good = start(broker08_process, zk_client, message_max_bytes=str(MESSAGE_MAX_BYTES))
    produce(good, VICTIM, [b"v0", b"v1", b"v2"])  # something for fuzzed fetches to read
    good_end = produce(good, GOOD, [b"first"]) + 1
    log_dir = tmp_path / "broker08-0"
    before = log_sizes(log_dir)

    frames = fuzz_frames(count, seed, MESSAGE_MAX_BYTES)
    started = time.monotonic()
    counts = run(frames, broker.port, good)
    elapsed = time.monotonic() - started
    with capsys.disabled():
        print(
            f"\nfuzz: {len(frames)} frames tried, {counts['closed']} closed, {counts['answered']} answered, "
            f"{counts['parked']} parked (long polls) in {elapsed:.1f} s (seed {seed})"
        )

    assert broker.proc.poll() is None, "the broker process died"
    assert fetch(good, VICTIM, 0) == [b"v0", b"v1", b"v2"]
    offsets = ListOffsetsRequestV0(
        -1, [ListOffsetsRequestTopic(VICTIM, [ListOffsetsRequestPartition(0, -1, 1)])]
    )
    assert good.call(offsets).topics[0].partitions[0].offsets == [3], "bytes were appended to the victim"
    assert produce(good, GOOD, [b"last"]) == good_end + counts["good"]
    after = log_sizes(log_dir)
    grown = {name for name in after if after[name] != before.get(name)}
    assert grown <= {f"{GOOD}-0/00000000000000000000.log"}, f"logs written by fuzzed frames: {grown}"
    assert counts["closed"] + counts["answered"] + counts["parked"] == len(frames)
    good.close()


@pytest.mark.parametrize(
    "codec, inflated",
    [(GZIP, 500 * 1_000_012), (SNAPPY, 19 * 1_000_012), (LZ4, 200 * 1_000_012)],  # as far as each goes
    ids=["gzip-500x", "snappy-19x", "lz4-200x"],
)
def test_a_bomb_is_refused_with_error_10_without_being_inflated(
    broker08_process, zk_client, capsys, codec, inflated
):
    broker, good = start(broker08_process, zk_client)  # message.max.bytes at its default, 1000012
    bomb = bomb_set08(inflated, codec)
    assert len(bomb) < 1_000_012
    peak_before = _peak_rss(broker.proc.pid)
    answer = good.call(produce_request(VICTIM, 0, bomb))
    assert answer.topics[0].partitions[0].error == 10
    grown = _peak_rss(broker.proc.pid) - peak_before
    with capsys.disabled():
        print(
            f"\nbomb: {len(bomb)} bytes inflating to {inflated}: the broker's peak memory grew {grown >> 10} KiB"
        )
    assert grown < 48 << 20, (
        f"the broker's peak memory grew by {grown >> 20} MB"
    )  # all of it: 500 / 19 / 200 MB
    assert fetch(good, VICTIM, 0) == []
    assert produce(good, VICTIM, [b"after"]) == 0  # the same connection goes on
    good.close()


def _peak_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def test_the_fuzzer_starts_from_every_fetch_and_list_offsets_version():
    names = {name for name, *_ in base_frames(MESSAGE_MAX_BYTES)}
    wanted = {f"FetchRequestV{v}" for v in range(12)} | {f"ListOffsetsRequestV{v}" for v in range(6)}
    assert wanted <= names

"""Fault drills on the compose cluster (ZooKeeper, three brokers) with a producer and a two-member consumer
group running as containers on the cluster's network.

Each drill drives load, injects one fault, waits (with deadlines) for the cluster to settle, then checks:
no message flushed before the fault is lost (read back from the brokers, and consumed by the group), no
member got a message while ZooKeeper named another member owner of its partition, committed offsets never
went backwards, and every partition ends with exactly one owner. "Flushed before the fault" is what the
brokers served below their OFFSETS -1 answer (the flushed end) just before it: 0.7 produce has no ack.
Each drill records its figures; the terminal summary prints them.
"""

from __future__ import annotations

import re
import time
from collections import Counter

import pytest

from tests.containers.cluster import BROKERS, Cluster
from tests.containers.conftest import FIGURES
from tests.containers.observe import (
    Ledger,
    ZkWatcher,
    double_owner_deliveries,
    send_times,
    sent_ids,
    settled,
    with_claims,
)
from zkafka.utils import wait_until

pytestmark = [pytest.mark.drill, pytest.mark.container, pytest.mark.timeout(300)]

TOPIC = "drill"
GROUP = "drill"
PARTITIONS = 2  # num.partitions in compose/zkafka/server.properties
ALL_PARTS = {f"{b}-{p}" for b in BROKERS for p in range(PARTITIONS)}
ALL_BROKERS = {str(b) for b in BROKERS}
MEMBERS = ("c1", "c2")
SESSION_MS = 3000  # brokers' and consumers' ZooKeeper session timeout
RATE = 200  # messages a second from the producer agent
ZK = "zookeeper:2181"  # as the containers reach it


class Drill:
    """One drill's cluster, load and observations."""

    def __init__(self, cluster: Cluster, name: str) -> None:
        self.cluster = cluster
        self.name = name
        self.run = name
        self.started = time.monotonic()
        self.figures: dict[str, object] = {}
        self.watcher: ZkWatcher | None = None
        self.members: dict[str, object] = {}
        self.producer = None

    # -- load ----------------------------------------------------------------------------------------------

    def start(self) -> None:
        c = self.cluster
        self.figures["cluster_up_s"] = round(c.up(), 1)
        c.make_topic(TOPIC)
        self.watcher = ZkWatcher(c.zk_connect, GROUP, TOPIC).start()
        wait_until(lambda: self.latest_has(topic_brokers=ALL_BROKERS), timeout=20, message="topic on all")
        for member in MEMBERS:
            self.members[member] = c.run_agent(
                member, "consume", "--zk", ZK, "--topic", TOPIC, "--group", GROUP, "--id", member,
                "--session-ms", str(SESSION_MS), "--max-seconds", "280",
            )  # fmt: skip
        self.wait_settled(MEMBERS, ALL_BROKERS, timeout=60)
        self.producer = c.run_agent(
            "producer", "produce", "--zk", ZK, "--topic", TOPIC, "--run", self.run, "--rate", str(RATE),
            "--count", "40000", "--session-ms", str(SESSION_MS), "--max-seconds", "240",
        )  # fmt: skip
        wait_until(
            lambda: self.consumed_count() >= 5 * RATE, timeout=60, interval=0.5, message="load flowing"
        )

    def latest_has(self, topic_brokers: set[str]) -> bool:
        sample = self.watcher.latest()
        return sample is not None and sample.topic_brokers == topic_brokers

    def events(self, container) -> list[dict]:
        return self.cluster.events(container)

    def deliveries(self) -> dict[str, list[dict]]:
        return {m: [e for e in self.events(c) if e["e"] == "msg"] for m, c in self.members.items()}

    def consumed_count(self) -> int:
        return sum(len(v) for v in self.deliveries().values())

    def produced(self) -> list[dict]:
        return self.events(self.producer)

    # -- state -----------------------------------------------------------------------------------------------

    def is_settled(self, members=MEMBERS, brokers=ALL_BROKERS, since: float = 0.0) -> bool:
        """Settled as given in the latest ZooKeeper sample, if that was taken after ``since``."""
        sample = self.watcher.latest()
        if sample is None or sample.t < since:
            return False
        partitions = {f"{b}-{p}" for b in brokers for p in range(PARTITIONS)}
        consumers = {f"{GROUP}_{m}" for m in members}
        return sample.topic_brokers == set(brokers) and settled(sample, partitions, consumers, set(brokers))

    def wait_settled(self, members=MEMBERS, brokers=ALL_BROKERS, timeout: float = 60) -> float:
        """Seconds until the group and the brokers are settled as given (in a sample taken from now on)."""
        start, since = time.monotonic(), time.time()
        wait_until(
            lambda: self.is_settled(members, brokers, since),
            timeout=timeout,
            interval=0.1,
            message=f"settled with members {sorted(members)} and brokers {sorted(brokers)}",
        )
        return time.monotonic() - start

    def settled_now(self) -> bool:
        """Whether a fresh sample (within a second) shows every partition owned once, by a live member."""
        try:
            self.wait_settled(timeout=1)
        except TimeoutError:
            return False
        return True

    def flushed(self) -> set[str]:
        """Every message the brokers serve now (all below their flushed ends)."""
        return {m for part in self.cluster.snapshot(TOPIC, PARTITIONS).values() for m in part}

    # -- end ---------------------------------------------------------------------------------------------------

    def finish(self, flushed_before: set[str]) -> tuple[Ledger, dict[str, list[str]]]:
        """Stop the producer, let the group drain what is stored, stop the group; check the invariants."""
        c = self.cluster
        assert c.stop_agent(self.producer) == 0, c.events(self.producer)[-3:]

        last: list[dict] = []

        def stable_ends() -> bool:
            """The same flushed ends twice in a row, 0.5 s apart (the flusher runs every 0.2 s)."""
            ends = {p: len(v) for p, v in c.snapshot(TOPIC, PARTITIONS).items()}
            same = bool(last) and ends == last[-1]
            last.append(ends)
            return same

        wait_until(stable_ends, timeout=30, interval=0.5, message="the brokers' flushed ends stable")
        stored_parts = c.snapshot(TOPIC, PARTITIONS)
        stored = Counter(m for part in stored_parts.values() for m in part)

        def drained():
            got = {e["v"] for events in self.deliveries().values() for e in events}
            return set(stored) <= got

        drain_start = time.monotonic()
        wait_until(drained, timeout=60, interval=0.5, message="the group consumed everything stored")
        self.figures["drain_s"] = round(time.monotonic() - drain_start, 1)
        final_settled = self.settled_now()
        for member, container in self.members.items():
            assert c.stop_agent(container) == 0, f"{member}: {c.events(container)[-3:]}"
        self.watcher.stop()

        sent, failed = sent_ids(self.produced(), self.run)
        deliveries = self.deliveries()
        consumed = Counter(e["v"] for events in deliveries.values() for e in events)
        ledger = Ledger(sent, failed, flushed_before, stored, consumed)
        polled = self.watcher.owner_history()
        claims = {
            f"{GROUP}_{m}-0": [e for e in self.events(container) if e["e"] == "own"]
            for m, container in self.members.items()
        }
        history = with_claims(polled, claims)
        doubles = double_owner_deliveries(history, deliveries)
        strays = [
            e for container in self.members.values() for e in self.events(container) if e["e"] == "stray"
        ]
        regressions = self.watcher.offset_regressions()
        self.figures.update(ledger.figures())
        self.figures.update(
            double_owner_deliveries=len(doubles),
            stray_deliveries=len(strays),
            offset_regressions=len(regressions),
            zk_samples=len(self.watcher.samples),
            owner_znodes=sum(map(len, history.values())),
            owner_znodes_missed_by_poller=sum(map(len, history.values())) - sum(map(len, polled.values())),
            drill_s=round(time.monotonic() - self.started, 1),
        )
        FIGURES.append((self.name, self.figures))

        assert ledger.figures()["lost_flushed"] == 0, sorted(flushed_before - set(stored))[:20]
        assert ledger.figures()["flushed_not_consumed"] == 0
        assert not doubles, doubles[:10]
        assert not strays, strays[:10]
        assert not regressions, regressions[:10]
        assert final_settled, self.watcher.latest()
        return ledger, stored_parts


@pytest.fixture
def drill(request, drill_images):
    """A Drill on a fresh compose project, removed afterwards whatever happened."""
    cluster = Cluster(broker_session_ms=SESSION_MS)
    d = Drill(cluster, request.node.name.removeprefix("test_"))
    try:
        d.start()
        yield d
    finally:
        if d.watcher is not None:
            d.watcher.stop()
        report = getattr(request.node, "report_call", None)
        if report is None or report.failed:
            print_diagnostics(d)
        cluster.down()


def print_diagnostics(drill: Drill) -> None:
    """The figures so far and the last lines every container of the drill wrote (shown with the failure)."""
    print(f"figures: {drill.figures}")
    containers = {name: drill.members.get(name) for name in MEMBERS} | {"producer": drill.producer}
    for service in ("zookeeper", *(f"broker-{b}" for b in BROKERS)):
        try:
            containers[service] = drill.cluster.container(service)
        except Exception as exc:
            print(f"--- {service}: {exc}")
    for name, container in containers.items():
        if container is None:
            continue
        try:
            tail = container.logs(
                tail=40, stdout=name in ("zookeeper",) or name.startswith("broker"), stderr=True
            )
        except Exception as exc:
            tail = str(exc).encode()
        print(f"--- {name}\n{tail.decode('utf-8', 'replace')}")


def test_pause_broker_past_its_session(drill: Drill) -> None:
    c = drill.cluster
    flushed_before = drill.flushed()
    session_before = drill.watcher.latest().brokers["2"]
    broker = c.container("broker-2")
    broker.pause()
    paused = time.time()
    try:
        wait_until(
            lambda: "2" not in drill.watcher.latest().brokers, timeout=SESSION_MS / 1000 + 10, interval=0.1
        )
        gone = time.time()
        assert "2" not in drill.watcher.latest().topic_brokers
        drill.wait_settled(brokers={"1", "3"}, timeout=30)  # the group rebalanced without broker 2
        # Keep it paused until the producer has sent for a while around it.
        wait_until(
            lambda: sent_between(drill, gone + 1, time.time()) >= RATE,
            timeout=20,
            interval=0.2,
        )
    finally:
        broker.unpause()
    unpaused = time.time()
    settle_s = drill.wait_settled(timeout=60)
    back = time.time()
    assert drill.watcher.latest().brokers["2"] != session_before  # registered again, by a new session
    wait_until(
        lambda: sent_between(drill, back + 1, time.time()) >= RATE,
        timeout=20,
        interval=0.2,
    )
    ledger, stored = drill.finish(flushed_before)

    # Routed around: nothing sent while broker 2 was out of ZooKeeper landed on it; and back after it returned.
    when = send_times(drill.produced(), drill.run)
    on_broker2 = {m for part, ids in stored.items() if part.startswith("2-") for m in ids}
    during = {m for m, t in when.items() if gone + 1 < t < unpaused}
    after = {m for m, t in when.items() if t > back + 1}
    assert during and not (during & on_broker2), sorted(during & on_broker2)[:10]
    assert after & on_broker2
    drill.figures.update(
        paused_s=round(unpaused - paused, 1),
        session_gone_after_s=round(gone - paused, 1),
        settle_s=round(settle_s, 1),
        sent_while_out=len(during),
        sent_after_back_to_broker2=len(after & on_broker2),
    )


def test_kill_broker_mid_stream(drill: Drill) -> None:
    c = drill.cluster
    flushed_before = drill.flushed()
    broker = c.container("broker-3")
    broker.kill(signal="SIGKILL")
    killed = time.time()
    # A restart inside the old session's lifetime would meet its own znode, so wait for it to expire.
    wait_until(
        lambda: "3" not in drill.watcher.latest().brokers, timeout=SESSION_MS / 1000 + 15, interval=0.1
    )
    gone = time.time()
    torn_file, torn_bytes, torn_check = tear_last_segment(c, "broker-3", f"{TOPIC}-0")
    assert torn_check == 1, "dump-log-segments must reject the torn segment"
    broker.start()
    started = time.time()
    c.wait_healthy(["broker-3"], timeout=60)
    drill.wait_settled(timeout=60)
    settle_s = time.time() - started
    logs = c.logs("broker-3", since=started - 1)
    truncations = [int(n) for n in re.findall(r"truncated (\d+) bytes", logs)]
    assert torn_bytes in truncations, logs[-2000:]
    ledger, stored = drill.finish(flushed_before)
    checks = {f"broker-{b}": validate_segments(c, f"broker-{b}") for b in BROKERS}
    assert all(code == 0 for code, _ in checks.values()), checks
    drill.figures.update(
        session_gone_after_s=round(gone - killed, 1),
        settle_s=round(settle_s, 1),
        torn_segment="/".join(torn_file.split("/")[-2:]),
        torn_bytes_appended=torn_bytes,
        truncated_bytes=sum(truncations),
        segments_validated=sum(n for _, n in checks.values()),
    )


def test_consumer_cut_off_past_its_session(drill: Drill) -> None:
    c = drill.cluster
    flushed_before = drill.flushed()
    network = c.docker.networks.get(c.network)
    member = drill.members["c1"]
    network.disconnect(member)
    cut = time.time()
    try:
        settle_out = drill.wait_settled(members=("c2",), timeout=SESSION_MS / 1000 + 30)
        gone = time.time()
        # Keep it cut off while c2 consumes on its own for a while.
        consumed = drill.consumed_count()
        wait_until(lambda: drill.consumed_count() >= consumed + RATE, timeout=20, interval=0.2)
    finally:
        network.connect(member)
    reconnected = time.time()
    settle_s = drill.wait_settled(timeout=60)
    drill.finish(flushed_before)
    drill.figures.update(
        cut_off_s=round(reconnected - cut, 1),
        taken_over_after_s=round(gone - cut, 1),
        group_without_c1_settled_s=round(settle_out, 1),
        settle_s=round(settle_s, 1),
    )


def test_restart_zookeeper(drill: Drill) -> None:
    c = drill.cluster
    flushed_before = drill.flushed()
    before = drill.watcher.latest()
    zookeeper = c.container("zookeeper")
    zookeeper.stop(timeout=10)
    stopped = time.time()
    # Down for twice the session timeout, and while the producer goes on sending (it needs no ZooKeeper).
    outage = 2 * SESSION_MS / 1000
    wait_until(
        lambda: time.time() - stopped >= outage and sent_between(drill, stopped, time.time()) >= RATE,
        timeout=outage + 20,
        interval=0.2,
    )
    zookeeper.start()
    started = time.time()
    c.wait_healthy(["zookeeper"], timeout=60)
    healthy = time.time()
    last_before = last_seq_sent_before(drill, started)

    def resumed() -> bool:
        """Every member got messages sent after ZooKeeper came back, and the group is settled."""
        newest = {
            m: max(
                (int(e["v"].split(":")[1]) for e in events if e["v"].startswith(f"{drill.run}:")), default=-1
            )
            for m, events in drill.deliveries().items()
        }
        return all(seq > last_before for seq in newest.values()) and drill.settled_now()

    wait_until(resumed, timeout=90, interval=0.5, message="work resumed after the restart")
    settled_at = time.time()
    after = drill.watcher.latest()
    drill.finish(flushed_before)
    drill.figures.update(
        zookeeper_down_s=round(started - stopped, 1),
        sent_while_down=sent_between(drill, stopped, started),
        zookeeper_healthy_s=round(healthy - started, 1),
        settle_s=round(settled_at - started, 1),
        broker_sessions_kept=sum(before.brokers[b] == after.brokers.get(b) for b in before.brokers),
        consumer_sessions_kept=sum(before.consumers[m] == after.consumers.get(m) for m in before.consumers),
        failed_zk_polls=drill.watcher.failed_polls,
    )


def sent_between(drill: Drill, start: float, end: float) -> int:
    return sum(e["n"] for e in drill.produced() if e["e"] == "sent" and start < e["t"] < end)


def last_seq_sent_before(drill: Drill, t: float) -> int:
    return max(
        (e["first"] + e["n"] - 1 for e in drill.produced() if e["e"] == "sent" and e["t"] < t), default=-1
    )


# -- segment files -------------------------------------------------------------------------------------------


def _volume(cluster: Cluster, service: str) -> str:
    mounts = cluster.container(service).attrs["Mounts"]
    return next(m["Name"] for m in mounts if m["Destination"] == "/var/lib/zkafka")


def tear_last_segment(cluster: Cluster, service: str, partition_dir: str) -> tuple[str, int, int]:
    """Append half of a message to the last segment of a stopped broker's partition, as a write torn by a
    crash leaves it; return (file, bytes appended, exit status of dump-log-segments on it)."""
    script = f"""
import glob, os, struct, subprocess, sys
path = sorted(glob.glob("/var/lib/zkafka/logs/{partition_dir}/*.kafka"))[-1]
torn = struct.pack(">i", 120) + bytes([1, 0]) + b"torn-write"
with open(path, "ab") as f:
    f.write(torn)
check = subprocess.run(["zkafka", "dump-log-segments", "--noprint", path], capture_output=True)
print(path, len(torn), check.returncode)
"""
    out = cluster.docker.containers.run(
        cluster.image,
        entrypoint=["python", "-c", script],
        volumes={_volume(cluster, service): {"bind": "/var/lib/zkafka", "mode": "rw"}},
        labels={"org.zkafka.drill": cluster.project},
        network_mode="none",
        remove=True,
    )
    path, size, code = out.decode().split()
    return path, int(size), int(code)


def validate_segments(cluster: Cluster, service: str) -> tuple[int, int]:
    """(exit status, number of files) of dump-log-segments over every segment of a running broker."""
    code, out = cluster.container(service).exec_run(
        ["sh", "-c", "f=$(ls /var/lib/zkafka/logs/*/*.kafka); echo $f | wc -w >&2; "
         "zkafka dump-log-segments --noprint $f >/dev/null"],
        demux=True,
    )  # fmt: skip
    files = int((out[1] or b"0").decode().strip().splitlines()[0])
    return code, files

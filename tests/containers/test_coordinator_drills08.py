"""Coordinator failover on the 0.8-line compose cluster (compose/docker-compose-08.yml: ZooKeeper and three
brokers, replication factor 3, min.insync.replicas 2): three zkafka GroupConsumer members and a keyed acks=-1
Producer08 as agents on the cluster's network (tests/containers/agent.py ``member09``, ``produce08 --keyed``),
a six-partition topic; docker kill (SIGKILL) of the group's coordinator.

Checked from the host through the published ports, as tests/integration/test_coordinator_failover.py does with
processes: the new coordinator has every commit acknowledged before the kill, every acknowledged message is
consumed, duplicates stay within the records delivered past a member's last acknowledged commit, and no
partition is read by two members of one generation. Figures go to the terminal summary, by phase (the new
coordinator answering, the producer acknowledging again, each partition consumed again, the first commit); when
every partition took longer than the members' session timeout and 2 s (issue 24's bound) the agents' log lines
from the kill on go there too, as seconds after it: the slow path's story.
"""

from __future__ import annotations

import datetime
import random
import re
import time

import pytest
from kazoo.client import KazooClient

from tests.containers.cluster import BROKERS, COMPOSE_FILE_08, Cluster
from tests.containers.conftest import FIGURES
from tests.support.drills import settle
from tests.support.group_drills import (
    MemberLog,
    acknowledged,
    answering,
    coordinator_of,
    missing_commits,
    one_generation,
    redeliveries,
    shared_partitions,
    uncommitted_tails,
)
from zkafka.admin.topics import create_topic
from zkafka.utils import wait_until

pytestmark = [pytest.mark.drill, pytest.mark.container, pytest.mark.timeout(300)]

TOPIC = "failover08"
PARTITIONS = 6
GROUP = "failover"
MEMBERS = 3
SESSION_MS = 6000  # the brokers' zookeeper.session.timeout.ms
MEMBER_SESSION_MS = 10000  # the members' session.timeout.ms
BOOTSTRAP = ",".join(f"broker-{b}:9092" for b in BROKERS)


SLOW_S = MEMBER_SESSION_MS / 1000 + 2  # issue 24: every partition consumed again within the session and 2 s
# the agents' log lines that tell the slow path: the group's coordinator and membership, the producer's sends
STORY = re.compile(r"coordinator_channel|consumer_coordinator|event_handler08: producing")


def member_log(events: list[dict]) -> MemberLog:
    """A member agent's events as the drill checks read them (stamped with the agent's wall clock)."""
    log = MemberLog()
    for e in events:
        if e["e"] == "assigned":
            log.assigned.append((e["t"], e["g"], e["m"], set(e["parts"])))
        elif e["e"] == "recs":
            log.records.extend((e["t"], e["g"], e["m"], p, o, v) for p, o, v in e["r"])
        elif e["e"] == "committed":
            log.commits.append((e["t"], e["g"], e["m"], {int(p): o for p, o in e["o"].items()}))
        elif e["e"] == "commit-failed":
            log.commit_failures.append(e["err"])
    return log


@pytest.fixture
def cluster(request, drill_images):
    cluster = Cluster(broker_session_ms=SESSION_MS, compose_file=COMPOSE_FILE_08)
    try:
        yield cluster
    finally:
        report = getattr(request.node, "report_call", None)
        if report is None or report.failed:
            for service in ("zookeeper", *(f"broker-{b}" for b in BROKERS)):
                try:
                    print(f"--- {service}\n{cluster.logs(service)[-3000:]}")
                except Exception as exc:  # noqa: BLE001 - diagnostics only
                    print(f"--- {service}: {exc}")
        cluster.down()


def test_kill_9_of_the_group_coordinator(cluster: Cluster) -> None:
    figures: dict[str, object] = {"cluster_up_s": round(cluster.up(), 1)}
    zk = KazooClient(hosts=cluster.zk_connect)
    zk.start()
    try:
        _drill(cluster, zk, figures)
    finally:
        zk.stop()
    FIGURES.append(("0.8 kill -9 group coordinator", figures))


def _drill(cluster: Cluster, zk: KazooClient, figures: dict[str, object]) -> None:
    def ports() -> list[int]:
        out = []
        for b in BROKERS:
            container = cluster.container(f"broker-{b}")
            container.reload()
            if container.status == "running":
                out.append(cluster.broker_port(b))
        return out

    create_topic(zk, TOPIC, PARTITIONS, 3, rng=random.Random(TOPIC))
    settle(zk, ports, TOPIC, PARTITIONS)
    common = ("--brokers", BOOTSTRAP, "--topic", TOPIC, "--max-seconds", "280")
    producer = cluster.run_agent("produce08", "produce08", *common, "--keyed", "--pause", "0.05")
    members = [
        cluster.run_agent(
            f"member{i}", "member09", *common, "--group", GROUP, "--session-ms", str(MEMBER_SESSION_MS)
        )
        for i in range(MEMBERS)
    ]

    def logs() -> list[MemberLog]:
        return [member_log(cluster.events(m)) for m in members]

    def acked() -> set[str]:
        return {v for e in cluster.events(producer) if e["e"] == "acked" for v in e["v"]}

    wait_until(lambda: one_generation(logs(), PARTITIONS), 120, interval=0.5, message="one stable generation")
    victim = wait_until(lambda: coordinator_of(ports(), GROUP), 30, message="the coordinator")
    generation = logs()[0].generation()
    wait_until(
        lambda: sum(len(m.commits) for m in logs()) >= 10 * MEMBERS, 60, interval=0.5, message="commits"
    )

    cluster.container(f"broker-{victim}").kill(signal="SIGKILL")
    killed = time.time()
    acked_before = acknowledged(
        logs(), before=killed - 0.5
    )  # the agents' lines come back through docker logs

    def new_coordinator():
        node = coordinator_of(ports(), GROUP)
        if node is None or node == victim:
            return None
        offsets = answering(cluster.broker_port(node), GROUP, TOPIC, PARTITIONS)
        return (node, offsets) if offsets is not None else None

    new, loaded = wait_until(
        new_coordinator, SESSION_MS / 1000 + 30, interval=0.1, message="a new coordinator"
    )
    coordinator_s = time.time() - killed
    acked_before = acknowledged(logs(), before=killed)  # stamped by the agents when acknowledged
    behind = missing_commits(acked_before, loaded)
    assert not behind, f"acknowledged commits missing at the new coordinator (acked, found): {behind}"

    def resumed() -> float | None:
        firsts = []
        for p in range(PARTITIONS):
            times = [r[0] for m in logs() for r in m.records if r[3] == p and r[0] > killed]
            if not times:
                return None
            firsts.append(min(times))
        return max(firsts)

    consumed_again = wait_until(resumed, 60, interval=0.5, message="every partition consumed again")
    # the time to every partition consumed again (issue 24's target: the members' session + 2 s) is a figure
    # of the drill's output, with its phases, not an assertion (wall-clock bounds belong in benchmarks)
    if consumed_again - killed > SLOW_S:
        FIGURES.append(("0.8 kill -9 group coordinator, slow path", _story([producer, *members], killed)))
    at = len(acked())
    wait_until(lambda: len(acked()) >= at + 100, 60, interval=0.5, message="100 more acknowledged")
    cluster.stop_agent(producer)
    sent = acked()
    wait_until(
        lambda: sent <= {r[5] for m in logs() for r in m.records}, 60, interval=0.5, message="all consumed"
    )
    wait_until(
        lambda: all(m.records and m.commits and m.commits[-1][0] >= m.records[-1][0] for m in logs()),
        30,
        interval=0.5,
        message="each member's last records committed",
    )
    for member in members:
        cluster.stop_agent(member)
    final_logs = logs()
    (duplicates, resent), tails = redeliveries(final_logs), uncommitted_tails(final_logs)
    assert duplicates <= tails, f"{duplicates} duplicates, only {tails} records delivered past a commit"
    shared = shared_partitions(final_logs)
    assert not shared, f"partitions read by two members of one generation: {shared}"
    final = answering(cluster.broker_port(new), GROUP, TOPIC, PARTITIONS)
    assert final is not None
    behind = missing_commits(acknowledged(final_logs), final)
    assert not behind, f"acknowledged commits missing at the end (acked, found): {behind}"
    figures.update(
        killed=victim,
        new_coordinator=new,
        coordinator_answering_after_s=round(coordinator_s, 1),
        every_partition_consumed_again_after_s=round(consumed_again - killed, 1),
        **_phases(final_logs, cluster.events(producer), killed),
        acked=len(sent),
        consumed=sum(len(m.records) for m in final_logs),
        duplicates=duplicates,
        uncommitted_tails=tails,
        producer_resends_in_log=resent,
        generation_at_kill=generation,
        assignments_after_kill=sum(1 for m in final_logs for a in m.assigned if a[0] > killed),
        commit_failures=sum(len(m.commit_failures) for m in final_logs),
    )


def _phases(logs: list[MemberLog], producer_events: list[dict], killed: float) -> dict[str, object]:
    """Seconds after the kill until the producer had a send acknowledged, each partition was consumed, a
    member had a commit acknowledged."""
    acked = [e["t"] for e in producer_events if e["e"] == "acked" and e["t"] > killed]
    firsts = {
        p: min((r[0] for m in logs for r in m.records if r[3] == p and r[0] > killed), default=None)
        for p in range(PARTITIONS)
    }
    commits = [c[0] for m in logs for c in m.commits if c[0] > killed]
    return {
        "producer_acked_again_after_s": round(min(acked) - killed, 1) if acked else None,
        "partition_consumed_again_after_s": {p: round(t - killed, 1) for p, t in firsts.items() if t},
        "first_commit_after_s": round(min(commits) - killed, 1) if commits else None,
    }


def _story(agents: list, killed: float) -> list[str]:
    """The agents' log lines about the coordinator, the membership and the produces, from the kill on, each
    stamped with the seconds since the kill and its agent (repeats of a line dropped)."""
    lines: list[tuple[float, str]] = []
    for agent in agents:
        name = agent.name.rsplit("-", 1)[-1]
        seen: set[str] = set()
        for line in agent.logs(stdout=False, stderr=True).decode("utf-8", "replace").splitlines():
            at = _stamp(line)
            text = re.sub(r"\S*: ", "", line[24:], count=1)  # without the logger's name
            if at is None or not killed - 0.5 <= at <= killed + 30 or not STORY.search(line) or text in seen:
                continue
            seen.add(text)
            lines.append((at - killed, f"{at - killed:+6.2f} {name}: {text[:150]}"))
    return [line for _, line in sorted(lines)]


def _stamp(line: str) -> float | None:
    """The wall-clock time of an agent's log line (logging's asctime, the agent's clock is the host's)."""
    try:
        stamp = datetime.datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f")
    except ValueError:
        return None
    return stamp.replace(tzinfo=datetime.UTC).timestamp()

"""A ZooKeeper ensemble for tests: three real ZooKeeper processes on 127.0.0.1 forming one quorum.

Every port (client, quorum, election) is free when chosen; the four-letter words are enabled, so who leads
is read from ``srvr`` and how much each member holds from ``mntr``. ``stop()`` stops exactly these processes.
Registered as a plugin by tests/conftest.py: the ``zookeeper_ensemble`` fixture is in every test's scope.
"""

from __future__ import annotations

import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import gevent
import pytest
from kazoo.client import KazooClient

from zkafka.launch.zookeeper_server import ZooKeeperServer, four_letter_word, free_port
from zkafka.utils import wait_until

# The test server's tick (tests/support/zookeeper.py): a leader lost is noticed in syncLimit (5) ticks, 1 s.
TICK_TIME_MS = 200


class Ensemble:
    """``size`` ZooKeeper processes, ids 1..size, each with its own data directory under ``root``."""

    def __init__(self, root: Path, size: int = 3, tick_time: int = TICK_TIME_MS) -> None:
        ports = {i: (free_port(), free_port(), free_port()) for i in range(1, size + 1)}
        servers = {f"server.{i}": f"127.0.0.1:{quorum}:{election}" for i, (_, quorum, election) in ports.items()}
        self.members = {
            i: ZooKeeperServer(str(root / f"zk-{i}"), port=client, tick_time=tick_time, extra=servers, myid=i)
            for i, (client, _, _) in ports.items()
        }

    @property
    def connect_string(self) -> str:
        """Every member's client address, as a client's or broker's zookeeper.connect lists them."""
        return ",".join(m.connect_string for m in self.members.values())

    def start(self, timeout: float = 60.0) -> Ensemble:
        for member in self.members.values():
            member.start(wait=False)
        self.wait_serving(timeout)
        return self

    def mode(self, myid: int) -> str | None:
        """``leader`` or ``follower`` from the member's ``srvr``; None when it is down or not serving."""
        member = self.members[myid]
        try:
            answer = four_letter_word(member.host, member.port, "srvr", timeout=1.0)
        except OSError:
            return None
        modes = [line.split(":", 1)[1].strip() for line in answer.splitlines() if line.startswith("Mode:")]
        return modes[0] if modes else None

    def leader(self) -> int | None:
        leaders = [i for i in self.members if self.mode(i) == "leader"]
        return leaders[0] if len(leaders) == 1 else None

    def followers(self) -> list[int]:
        return [i for i in self.members if self.mode(i) == "follower"]

    def wait_serving(self, timeout: float = 60.0, members: list[int] | None = None) -> int:
        """Wait until one leader leads and every running member (or those named) serves; the leader's id."""
        names = members or [i for i, m in self.members.items() if m.is_running()]

        def serving() -> int | None:
            leader = self.leader()
            return leader if leader and all(self.mode(i) in ("leader", "follower") for i in names) else None

        return wait_until(serving, timeout, interval=0.05, message=f"a leader, members {names} serving")

    def znode_count(self, myid: int) -> int:
        """How many znodes the member holds (``mntr``'s zk_znode_count)."""
        member = self.members[myid]
        for line in four_letter_word(member.host, member.port, "mntr").splitlines():
            if line.startswith("zk_znode_count"):
                return int(line.split()[1])
        raise AssertionError(f"no zk_znode_count in mntr of ZooKeeper {member.connect_string}")

    def kill(self, *myids: int) -> float:
        """kill -9 those members; the monotonic time it was done."""
        for myid in myids:
            self.members[myid].stop(signum=signal.SIGKILL)
        return time.monotonic()

    def restart(self, *myids: int, empty: bool = False) -> None:
        """Start those members again; ``empty``: with no snapshot or transaction log (only their myid)."""
        for myid in myids:
            member = self.members[myid]
            if empty:
                shutil.rmtree(Path(member.data_dir) / "version-2", ignore_errors=True)
            member.start(wait=False)

    def stop(self) -> None:
        for member in self.members.values():
            member.stop()


@pytest.fixture
def zookeeper_ensemble(tmp_path: Path) -> Iterator[Ensemble]:
    """A started three-member ensemble, stopped at the end of the test."""
    ensemble = Ensemble(tmp_path / "ensemble")
    try:
        yield ensemble.start()
    finally:
        ensemble.stop()


# -- the drills: four ZooKeeper faults under a line's load, in turn -------------------------------------------


class Load(Protocol):
    """What a drill watches: messages acknowledged and consumed so far."""

    def acked(self) -> int: ...

    def consumed(self) -> int: ...


def ephemeral_owners(zk: KazooClient, parent: str = "/brokers/ids") -> dict[str, int]:
    """Each child of ``parent`` (the brokers' registrations) with the session that owns it; retried while the
    test's own client moves to another member."""

    def read() -> dict[str, int]:
        return {child: zk.exists(f"{parent}/{child}").ephemeralOwner for child in zk.get_children(parent)}

    return zk.retry(read)


def flowing(load: Load, count: int = 50, timeout: float = 45.0) -> float:
    """Seconds until ``count`` more messages are acknowledged and ``count`` more consumed."""
    began, acked, consumed = time.monotonic(), load.acked(), load.consumed()
    wait_until(
        lambda: load.acked() >= acked + count and load.consumed() >= consumed + count,
        timeout,
        interval=0.01,
        message=f"{count} more messages acknowledged and consumed",
    )
    return round(time.monotonic() - began, 2)


def run_ensemble_drills(ensemble: Ensemble, zk: KazooClient, load: Load, outage_s: float) -> dict[str, dict]:
    """Kill a follower, kill the leader, take away the quorum for ``outage_s``, and restart a member with an
    empty data directory, each while ``load`` runs; figures per fault. Asserts what each fault must keep:
    the brokers' registrations by the same sessions (by some session after the outage), the flow resuming."""
    figures: dict[str, dict] = {}
    owners = ephemeral_owners(zk)
    leader = ensemble.leader()
    follower = next(i for i in ensemble.members if i != leader)
    ensemble.kill(follower)
    figures["kill zk follower"] = {"killed": follower, "flow_s": flowing(load)}
    assert ensemble.leader() == leader and ephemeral_owners(zk) == owners
    ensemble.restart(follower)
    ensemble.wait_serving(members=list(ensemble.members))

    killed = ensemble.kill(leader)
    elected = ensemble.wait_serving()
    figures["kill zk leader"] = {
        "killed": leader, "new_leader": elected, "elected_s": round(time.monotonic() - killed, 2),
        "flow_s": flowing(load),
    }  # fmt: skip
    assert ephemeral_owners(zk) == owners, "a broker's session did not survive the election"
    ensemble.restart(leader)
    ensemble.wait_serving(members=list(ensemble.members))

    figures["quorum lost"] = quorum_outage(ensemble, zk, load, owners, outage_s)

    follower = ensemble.followers()[0]
    ensemble.kill(follower)
    ensemble.restart(follower, empty=True)
    began = time.monotonic()
    ensemble.wait_serving(members=list(ensemble.members))
    leader = ensemble.leader()
    wait_until(lambda: ensemble.znode_count(follower) == ensemble.znode_count(leader), 30, message="synced")
    figures["empty data dir"] = {
        "member": follower, "rejoined_s": round(time.monotonic() - began, 2),
        "znodes": ensemble.znode_count(follower), "flow_s": flowing(load),
    }  # fmt: skip
    return figures


def quorum_outage(ensemble: Ensemble, zk: KazooClient, load: Load, owners: dict, outage_s: float) -> dict:
    """Two of three members down for ``outage_s``: no ZooKeeper writes or reads; then back."""
    leader = ensemble.leader()
    down = [leader, next(i for i in ensemble.members if i != leader)]
    began = ensemble.kill(*down)
    acked, consumed = load.acked(), load.consumed()
    gevent.sleep(outage_s)  # the outage itself: held on purpose, the load running on
    during = {"acked_during": load.acked() - acked, "consumed_during": load.consumed() - consumed}
    ensemble.restart(*down)
    ensemble.wait_serving(members=list(ensemble.members))
    quorum_s = round(time.monotonic() - began - outage_s, 2)
    brokers = wait_until(lambda: len(ephemeral_owners(zk)) == len(owners) and ephemeral_owners(zk), 30)
    kept = brokers == owners
    return {"down": down, "outage_s": outage_s, **during, "quorum_back_s": quorum_s, "flow_s": flowing(load),
            "sessions_kept": kept}  # fmt: skip

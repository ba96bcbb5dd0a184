"""Replication drill support: three broker processes (``start_cluster``), acks=-1 load from zkafka's Producer08
recording what was acknowledged, a ZooKeeper pass-through that learns each broker's session (id and password)
so a drill can expire it, the settle and no-loss checks, and the drills' figures printed at the end of the run
(a plugin: tests/conftest.py lists it).
"""

from __future__ import annotations

import random
import signal
import socket
import struct
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from tests.support.replication import leader_port, leaders_seen, read_all, zk_state
from zkafka.admin.topics import create_topic
from zkafka.producer.errors import FailedToSendMessageError
from zkafka.producer.producer08 import KeyedMessage, Producer08
from zkafka.records import format08
from zkafka.utils import wait_until
from zkafka.utils.hub import destroy_thread_hub
from zkafka.zk.paths08 import PartitionState

FIGURES: list[tuple[str, dict | list[str]]] = []  # (drill, figures or lines), printed in the terminal summary

Ports = Callable[[], list[int]]


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if not FIGURES:
        return
    terminalreporter.section("drill figures")
    for drill, figures in FIGURES:
        if isinstance(figures, list):  # lines of a drill's story, one a line
            terminalreporter.write_line(f"{drill}:")
            for line in figures:
                terminalreporter.write_line(f"  {line}")
            continue
        terminalreporter.write_line(f"{drill}: " + ", ".join(f"{k}={v}" for k, v in figures.items()))


# -- who leads ------------------------------------------------------------------------------------------------


def settle(zk: KazooClient, ports: Ports, topic: str, partitions: int = 1, replicas: int = 3):
    """Wait until every partition has one leader in a full ISR, named by the state znode and by every live
    broker's metadata alike; the partitions' states."""

    def agreed() -> list[PartitionState] | None:
        states = [zk_state(zk, topic, p) for p in range(partitions)]
        if any(s is None or s.leader < 0 or len(s.isr) != replicas for s in states):
            return None
        for port in ports():
            try:
                seen = leaders_seen(port, topic)
            except OSError:
                return None
            if [seen.get(p, (-1,))[0] for p in range(partitions)] != [s.leader for s in states]:
                return None
        return states

    return wait_until(agreed, 45, interval=0.1, message=f"{topic}: one leader per partition, agreed by all")


# -- three broker processes ---------------------------------------------------------------------------------


DRILL_PROPS = {
    "replica_fetch_wait_max_ms": "100",
    "replica_lag_time_max_ms": "1500",
    "controlled_shutdown_retry_backoff_ms": "300",
    "unclean_leader_election_enable": "false",
    "replica_high_watermark_checkpoint_interval_ms": "500",
}


class Cluster:
    """Three broker processes (session timeout 4 s unless told), each reaching ZooKeeper through its own
    SessionSnoop so that a drill can expire its session."""

    def __init__(self, broker08_process, zk_connect: str, zk, **props: str) -> None:
        self.zk = zk
        host_port, chroot = zk_connect.split("/", 1)
        host, port = host_port.split(":")
        self.snoops = {b: SessionSnoop(host, int(port)) for b in (1, 2, 3)}
        self.procs = {
            b: broker08_process(b, zookeeper_connect=s.connect_string("/" + chroot), **(DRILL_PROPS | props))
            for b, s in self.snoops.items()
        }
        wait_until(
            lambda: zk.exists("/brokers/ids") and len(zk.get_children("/brokers/ids")) == 3,
            30,
            message="3 brokers registered",
        )

    def __getitem__(self, broker_id: int):
        return self.procs[broker_id]

    def ports(self) -> list[int]:
        return [p.port for p in self.procs.values() if p.proc.poll() is None]

    def port_of(self, broker_id: int) -> int:
        return self.procs[broker_id].port

    def replica_log(self, broker_id: int, topic: str, partition: int = 0) -> list[tuple[int, bytes]]:
        """Every (offset, value) in the broker's copy of the partition (0.8 message sets), from its files."""
        files = segment_files(self.procs[broker_id], topic, partition)
        return [(m.offset, m.value) for path in files for m in format08.iter_messages(path.read_bytes())]

    def logs_agree(self, topic: str, state: PartitionState, partition: int = 0) -> int:
        """Wait until the log of every replica in the partition's ISR equals the leader's, record by record,
        read from their files; its length."""

        def agreed() -> tuple[int] | None:  # a tuple: an empty log's length is falsy
            leader = self.replica_log(state.leader, topic, partition)
            logs = [self.replica_log(b, topic, partition) for b in state.isr]
            return (len(leader),) if all(log == leader for log in logs) else None

        message = f"{topic}-{partition}: every replica's log the leader's"
        return wait_until(agreed, 30, interval=0.2, message=message)[0]

    def topic(self, name: str, partitions: int = 1, seed: int = 1):
        create_topic(self.zk, name, partitions, 3, rng=random.Random(seed))
        return settle(self.zk, self.ports, name, partitions)

    def close(self) -> None:
        for proc in self.procs.values():
            proc.signal(signal.SIGCONT)
        for snoop in self.snoops.values():
            snoop.close()


def segment_files(proc, topic: str, partition: int = 0) -> list[Path]:
    """The segment files of a broker process's copy of ``topic-partition``, in offset order."""
    props = dict(line.split("=", 1) for line in proc.props_path.read_text().splitlines() if "=" in line)
    return sorted((Path(props["log.dirs"]) / f"{topic}-{partition}").glob("*.log"))


@pytest.fixture
def start_cluster(broker08_process, zk_connect, zk_client):
    """Factory: ``start_cluster(**broker props)`` starts a Cluster, closed at the end of the test."""
    started = []

    def start(**props: str) -> Cluster:
        started.append(Cluster(broker08_process, zk_connect, zk_client, **props))
        return started[-1]

    yield start
    for c in started:
        c.close()


# -- load -----------------------------------------------------------------------------------------------------


class Producer08Load(threading.Thread):
    """zkafka's Producer08, sync, acks=-1, batches of 10 numbered values, until stopped; ``acked`` holds the
    values acknowledged (value -> None: the producer does not say the offset), ``failures`` the sends it gave
    up on after its retries. ``keyed``: each value is its own key (spread over the partitions by hash, not
    all to one random partition); ``pause_s`` between batches; ``config``: more producer properties."""

    def __init__(
        self, ports: Ports, topic: str, *, keyed: bool = False, pause_s: float = 0.0, **config: str
    ) -> None:
        super().__init__(daemon=True)
        self.ports, self.topic, self.config = ports, topic, config
        self.keyed, self.pause_s = keyed, pause_s
        self.acked: dict[bytes, int | None] = {}
        self.failures: list[str] = []
        self._stopping = threading.Event()
        self.exception: BaseException | None = None

    def stop(self) -> None:
        self._stopping.set()
        self.join(90)
        if self.exception is not None:
            raise self.exception

    def run(self) -> None:
        try:
            self.produce()
        except BaseException as exc:  # noqa: BLE001 - reported by stop()
            self.exception = exc
        finally:
            destroy_thread_hub()

    def produce(self) -> None:
        config = {
            "metadata.broker.list": ",".join(f"127.0.0.1:{p}" for p in self.ports()),
            "request.required.acks": "-1",
            "request.timeout.ms": "5000",
            "message.send.max.retries": "20",
            "retry.backoff.ms": "250",
            **self.config,
        }
        n = 0
        with Producer08(config) as producer:
            while not self._stopping.is_set():
                values = [b"%s-%07d" % (self.topic.encode(), i) for i in range(n, n + 10)]
                try:
                    producer.send(*(KeyedMessage(self.topic, v if self.keyed else None, v) for v in values))
                except FailedToSendMessageError as exc:
                    self.failures.append(str(exc))
                else:
                    self.acked.update(dict.fromkeys(values))
                n += len(values)
                if self.pause_s:
                    self._stopping.wait(self.pause_s)


def check_no_loss(
    zk: KazooClient,
    ports: Ports,
    topic: str,
    acked: dict[bytes, int | None],
    seen: dict[int, bytes],
    port_of: Callable[[int], int] | None = None,
    partitions: int = 1,
    replicas: int = 3,
) -> tuple[PartitionState, int]:
    """After the dust settles (``settle``): every value acknowledged to partition 0 is in its leader's log (at
    its offset when the client said), and every message a consumer was given is still there; (partition 0's
    state, its log's length). ``port_of(broker id)``: where the test reaches a broker, when not where its
    metadata says."""
    state = settle(zk, ports, topic, partitions, replicas)[0]
    port = port_of(state.leader) if port_of else leader_port(ports, topic)
    high_watermark, messages = read_all(port, topic, 0)
    log = dict(messages)
    where = {v: o for o, v in messages}
    lost = [v for v, o in acked.items() if v not in where or (o is not None and where[v] != o)]
    assert not lost, f"{len(lost)} acknowledged messages lost or moved, e.g. {lost[:3]}"
    truncated = [o for o, v in seen.items() if log.get(o) != v]
    assert not truncated, f"a consumer read {len(truncated)} messages later truncated, at {truncated[:5]}"
    assert len(messages) == high_watermark
    return state, high_watermark


# -- a ZooKeeper pass-through that learns sessions -----------------------------------------------------------


class SessionSnoop:
    """Forwards TCP connections on a local port to ZooKeeper and reads the session id and password from each
    ConnectResponse, so a test can expire a child process's session with ``expire_session``."""

    def __init__(self, zk_host: str, zk_port: int) -> None:
        self.target = (zk_host, zk_port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sessions: list[tuple[int, bytes]] = []
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def connect_string(self, chroot: str) -> str:
        return f"127.0.0.1:{self.port}{chroot}"

    def session(self) -> tuple[int, bytes]:
        """The latest session ZooKeeper granted through this pass-through."""
        return wait_until(lambda: self.sessions and self.sessions[-1], 10, message="a session through snoop")

    def close(self) -> None:
        self._closed = True
        self.listener.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self.listener.accept()
                server = socket.create_connection(self.target, timeout=5)
            except OSError:
                continue
            server.settimeout(None)
            threading.Thread(target=self._pipe, args=(client, server, False), daemon=True).start()
            threading.Thread(target=self._pipe, args=(server, client, True), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, from_server: bool) -> None:
        first = b""
        try:
            while data := source.recv(65536):
                if from_server and first is not None:
                    first += data
                    if len(first) >= 4 and len(first) >= 4 + struct.unpack(">i", first[:4])[0]:
                        self._learn(first)
                        first = None
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()

    def _learn(self, frame: bytes) -> None:
        # ConnectResponse: length, protocolVersion, timeOut, sessionId, passwd (length-prefixed bytes)
        _, _, _, session_id, length = struct.unpack(">iiiqi", frame[:24])
        if session_id:
            self.sessions.append((session_id, frame[24 : 24 + length]))

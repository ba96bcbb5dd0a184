"""The demo's 0.8-line variant: three replicating brokers, a keyed Producer08 and two groups side by side.

A real ZooKeeper and three 0.8 broker processes serve a topic with replication factor 3. Two groups of
``GroupConsumer``s are managed by a coordinator broker (JoinGroup/SyncGroup), one rebalancing eagerly (range:
every member stops), one cooperatively (cooperative-sticky, KIP-429: members keep what they keep), and a third
by ZooKeeper (``ZookeeperConsumerConnector08``), all reading the same topic, so one view compares the rebalances.
``kill-leader`` kills (SIGKILL) the broker leading partition 0: the controller elects a new leader from the
ISR once the broker's ZooKeeper session expires; ``start-broker`` brings it back.
"""

from __future__ import annotations

import logging
import signal
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import gevent

from zkafka.admin.topics import create_topic
from zkafka.consumer.connector08 import ZookeeperConsumerConnector08
from zkafka.consumer.group import GroupConsumer
from zkafka.consumer.group.coordinator_groups import CoordinatorGroups
from zkafka.demo import DemoCluster, ZkGroupMember
from zkafka.launch.zookeeper_server import free_port
from zkafka.producer.producer08 import KeyedMessage, Producer08
from zkafka.ui.cluster_state import read_controller, read_topics, read_zk_groups
from zkafka.zk.line import LINE_08

log = logging.getLogger(__name__)

ACTIONS08 = (
    "add-consumer",
    "stop-consumer",
    "kill-leader",
    "start-broker",
    "pause-producer",
    "resume-producer",
)


def settings08(
    broker_id: int, port: int, log_dir: str, zk_connect: str, partitions: int, replication: int = 3
) -> dict:
    """A 0.8 demo broker's server.properties: ``replication`` copies, a small offsets topic, short sessions."""
    return {
        "broker.id": broker_id,
        "host.name": "127.0.0.1",
        "advertised.host.name": "127.0.0.1",
        "port": port,
        "log.dirs": log_dir,
        "zookeeper.connect": zk_connect,
        "zookeeper.session.timeout.ms": 4000,
        "num.partitions": partitions,
        "default.replication.factor": replication,
        "offsets.topic.num.partitions": 4,
        "offsets.topic.replication.factor": replication,
        "controlled.shutdown.max.retries": 1,
        "controlled.shutdown.retry.backoff.ms": 200,
        "log.flush.offset.checkpoint.interval.ms": 1000,
        "metrics.port": free_port(),  # its /requests: the request log the web view's protocol panel reads
    }


class _GroupMember:
    """A coordinator-group member: a GroupConsumer polled on its own greenlet."""

    def __init__(self, name: str, bootstrap: str, group: str, topic: str, strategy: str = "range") -> None:
        self.id = name
        self.consumed = 0
        self.consumer = GroupConsumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "client.id": name,
                "auto.offset.reset": "earliest",
                "session.timeout.ms": "6000",
                "heartbeat.interval.ms": "1000",
                "fetch.max.wait.ms": "100",
                "auto.commit.interval.ms": "1000",
                "partition.assignment.strategy": strategy,
            }
        )
        self.consumer.subscribe([topic])
        self.greenlet = gevent.spawn(self._consume)

    def _consume(self) -> None:
        while True:
            try:
                self.consumed += sum(len(records) for records in self.consumer.poll(200).values())
            except Exception as exc:  # a broker just died: the consumer finds the new leader or coordinator
                log.info("demo group member %s: %s", self.id, exc)
                gevent.sleep(0.2)

    def stop(self) -> None:
        self.greenlet.kill()
        self.consumer.close()


class DemoCluster08(DemoCluster):
    """A ZooKeeper, 3 brokers of the 0.8 line, a topic with RF 3, a keyed Producer08, a ZooKeeper group and a
    coordinator group of ``consumers`` members each."""

    line = LINE_08
    actions = ACTIONS08

    def __init__(self, brokers: int = 3, partitions: int = 4, consumers: int = 2, **kwargs: Any) -> None:
        super().__init__(brokers=brokers, partitions=partitions, consumers=consumers, **kwargs)
        self.group = f"{self.topic}-zk-group"
        self.coordinator_group = f"{self.topic}-coordinator-group"
        self.cooperative_group = f"{self.topic}-cooperative-group"
        self.members: list[_GroupMember] = []
        self.cooperative_members: list[_GroupMember] = []
        self._last_leaders: dict[int, int] = {}
        self._last_generation: int | None = None

    broker_note = " (0.8 line)"
    consumer_note = "starting a member of each group"

    def broker_settings(self, zk_connect: str) -> Callable[[int, int, str], dict]:
        return partial(
            settings08, zk_connect=zk_connect, partitions=self.partitions, replication=self._replication
        )

    @property
    def _replication(self) -> int:
        return min(3, self._broker_count)

    def _before_producer(self) -> None:
        self._wait(lambda: read_controller(self._zk) is not None, "a controller elected")
        create_topic(self._zk, self.topic, self.partitions, self._replication)
        self._wait(lambda: len(self.leaders()) == self.partitions, "a leader for every partition")

    def make_producer(self) -> Producer08:
        return Producer08(
            {
                "metadata.broker.list": self.bootstrap(all_brokers=True),
                "request.required.acks": "-1",  # parked until the ISR has it: the replication sequence
                "serializer.class": "kafka.serializer.StringEncoder",
                "key.serializer.class": "kafka.serializer.StringEncoder",
                "retry.backoff.ms": "200",
            }
        )

    def _send(self, user: str) -> None:
        self._producer.send(KeyedMessage(self.topic, user, f"event {self.produced} of {user}"))

    def bootstrap(self, all_brokers: bool = False) -> str:
        """``host:port`` of the running brokers (every broker with ``all_brokers``)."""
        chosen = [b for b in self.brokers.values() if all_brokers or b.running]
        return ",".join(f"127.0.0.1:{b.port}" for b in chosen)

    def request_logs(self) -> list[str]:
        """The running brokers' request-log URLs (``metrics.port``'s ``/requests``)."""
        return [
            f"http://127.0.0.1:{b.settings['metrics.port']}/requests"
            for b in self.brokers.values()
            if b.running
        ]

    def leaders(self) -> dict[int, int]:
        """Partition -> leader of the demo topic, from ZooKeeper (partitions without a leader left out)."""
        topics = [t for t in read_topics(self._zk, LINE_08) if t["name"] == self.topic]
        return {p["partition"]: p["leader"] for t in topics for p in t["partitions"] if p["leader"] >= 0}

    def close(self, keep: bool = False) -> None:
        for member in self.members + self.cooperative_members:
            member.stop()
        self.members, self.cooperative_members = [], []
        super().close(keep)

    # -- actions ----------------------------------------------------------------------------------------------

    def add_consumer(self) -> None:
        """One more member in each group (ZooKeeper, eager coordinator, cooperative coordinator)."""
        name = f"consumer-{self._next_consumer}"
        self._next_consumer += 1
        connector = ZookeeperConsumerConnector08(
            {
                "zookeeper.connect": self.zookeeper.connect_string,
                "group.id": self.group,
                "consumer.id": name,
                "auto.commit.interval.ms": "1000",
                "rebalance.backoff.ms": "1000",
                "consumer.timeout.ms": "200",
                "auto.offset.reset": "smallest",
                "refresh.leader.backoff.ms": "200",
            }
        )
        consumer = ZkGroupMember(connector, self.topic)
        self.consumers.append(consumer)
        self.members.append(_GroupMember(name, self.bootstrap(), self.coordinator_group, self.topic))
        self.cooperative_members.append(
            _GroupMember(name, self.bootstrap(), self.cooperative_group, self.topic, "cooperative-sticky")
        )
        self._record(f"{name} joined both groups")

    def stop_consumer(self) -> None:
        """Stop the newest member of each group."""
        if not self.members:
            return
        member = self.members.pop()
        member.stop()
        if self.cooperative_members:
            self.cooperative_members.pop().stop()
        consumer = self.consumers.pop()
        consumer.stop()
        self._stopped_consumers[consumer.id] = consumer.consumed + member.consumed
        self._record(f"{member.id} left both groups")

    def kill_leader(self) -> None:
        """SIGKILL the leader of partition 0, while another broker keeps running."""
        leader = self.leaders().get(0)
        broker = self.brokers.get(leader)
        if broker is None or not broker.running or sum(b.running for b in self.brokers.values()) < 2:
            return
        broker.stop(signum=signal.SIGKILL)
        self._record(f"broker {broker.id} (leader of {self.topic}-0) killed")

    # -- what the view shows ------------------------------------------------------------------------------

    def snapshot08(self) -> dict[str, Any]:
        """The facts of the moment (brokers, partitions with leader/ISR, both groups); notes leader changes
        and rebalances of either group as events."""
        zk = self._zk
        topics = [t for t in read_topics(zk, LINE_08) if t["name"] == self.topic]
        partitions = topics[0]["partitions"] if topics else []
        zk_groups = [view for _, view in read_zk_groups(zk, LINE_08) if view["name"] == self.group]
        coordinator = CoordinatorGroups(self.bootstrap().split(",")[0]).read() or []
        group = next((g for g in coordinator if g["name"] == self.coordinator_group), None)
        leaders = {p["partition"]: p["leader"] for p in partitions}
        for partition, leader in sorted(leaders.items()):
            before = self._last_leaders.get(partition)
            if before is not None and before != leader and leader >= 0:
                isr = next(p["isr"] for p in partitions if p["partition"] == partition)
                self._record(
                    f"leader election: {self.topic}-{partition} leader {before} -> {leader} "
                    f"(ISR {isr}; trigger: {self._last_action})",
                    action=False,
                )
        self._last_leaders = {p: lead for p, lead in leaders.items() if lead >= 0}
        rows = zk_groups[0]["partitions"] if zk_groups else []
        owners = {row["partition"]: row["owner"] for row in rows}
        if owners and all(owners.values()) and owners != self._last_owners:
            moved = "every partition owned" if self._last_owners is None else "partitions changed owners"
            self._record(f"ZooKeeper group rebalance: {moved} (trigger: {self._last_action})", action=False)
            self._last_owners = owners
        if group and group["state"] == "Stable" and group["generation"] != self._last_generation:
            self._record(
                f"coordinator group rebalance: generation {group['generation']}, "
                f"{len(group['members'])} members (trigger: {self._last_action})",
                action=False,
            )
            self._last_generation = group["generation"]
        running = {b.id for b in self.brokers.values() if b.running}
        return {
            "elapsed": time.monotonic() - self.started,
            "produced": self.produced,
            "controller": read_controller(zk),
            "brokers": {b_id: b_id in running for b_id in sorted(self.brokers)},
            "partitions": partitions,
            "zk_rows": rows,
            "coordinator_group": group,
            "consumed": {m.id: m.consumed for m in self.members},
            "zk_consumed": {c.id: c.consumed for c in self.consumers},
            "events": self.events[-10:],
        }


def render08(snapshot: dict[str, Any], topic: str, zk_group: str, coordinator_group: str) -> list[str]:
    """A 0.8 snapshot as lines, for ``--no-ui`` and the terminal view."""
    lines = [
        f"zkafka demo (0.8 line)  t={snapshot['elapsed']:.1f}s  produced={snapshot['produced']}  "
        f"controller={snapshot['controller']}"
    ]
    brokers = "  ".join(f"{b}:{'running' if up else 'stopped'}" for b, up in snapshot["brokers"].items())
    lines.append(f"brokers: {brokers}")
    lines.append(
        f"partitions of {topic} (leader, replicas and ISR in ZooKeeper; high watermark from the leader):"
    )
    for p in snapshot["partitions"]:
        lines.append(
            f"  {topic}-{p['partition']} leader={p['leader']} replicas={p['replicas']} isr={p['isr']} "
            f"hw={p['high_watermark']}"
        )
    lines.append(f"ZooKeeper group {zk_group} (owners and offsets in ZooKeeper):")
    for row in snapshot["zk_rows"]:
        lines.append(
            f"  {row['topic']}-{row['partition']} committed={row['committed']} lag={row['lag']} "
            f"owner={row['owner'] or '(none)'}"
        )
    group = snapshot["coordinator_group"]
    if group is None:
        lines.append(f"coordinator group {coordinator_group}: (not yet known)")
    else:
        lines.append(
            f"coordinator group {coordinator_group} (coordinator broker {group['coordinator']}): "
            f"state={group['state']} generation={group['generation']} members={len(group['members'])}"
        )
        for member in group["members"]:
            assigned = ",".join(str(p) for ps in member["assignment"].values() for p in sorted(ps))
            lines.append(f"  member {member['client_id']} partitions={assigned or '-'}")
    consumed = ", ".join(f"{k}: {v}" for k, v in snapshot["consumed"].items()) or "(none)"
    zk_consumed = ", ".join(f"{k}: {v}" for k, v in snapshot["zk_consumed"].items()) or "(none)"
    lines.append(f"consumed (coordinator group): {consumed}")
    lines.append(f"consumed (ZooKeeper group): {zk_consumed}")
    lines.append("events:")
    lines.extend(f"  {event}" for event in snapshot["events"])
    return lines

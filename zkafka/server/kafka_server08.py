"""KafkaServer08: starts and stops one 0.8-line broker.

Startup follows 0.8.2's KafkaServer, one method per step: open the logs (recovering them after an unclean
stop) → the replica manager and the group coordinator → start the socket server → connect to ZooKeeper, start
the controller election (with the watch-based ControllerContext it decides from) → register
``/brokers/ids/<id>`` → start the periodic tasks (recovery-point and high-watermark checkpoints, ISR shrink,
retention, time-based flush). Requests wait until the registration is done. What the broker leads and follows,
and what it answers Metadata requests with, come only from the controller's LeaderAndIsr, StopReplica and
UpdateMetadata requests (replica_apis.py).

A clean shutdown (SIGTERM) first asks the controller to move its leaderships away (controlled_shutdown.py,
when ``controlled.shutdown.enable``), then stops accepting, finishes the requests in flight, answers the
parked fetches and produces, resigns, stops the replica fetchers, checkpoints the high watermarks, closes
every log (flushing it, writing the recovery points and ``.kafka_cleanshutdown``) and ends the ZooKeeper
session. An I/O error on a log halts the process, as 0.8.2 does.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import gevent
import gevent.event

from zkafka.admin.topics import TopicExistsError, auto_create_topic, create_topic, live_broker_ids
from zkafka.admin.users import scram_credential_of
from zkafka.config import LINE_08
from zkafka.config08 import BrokerConfig08
from zkafka.controller.channel_manager import ControllerChannelManager
from zkafka.controller.context import ClusterSnapshot, ControllerContext
from zkafka.controller.controller import KafkaController
from zkafka.coordinator.coordinator import CoordinatorConfig, GroupCoordinator
from zkafka.coordinator.group_apis import GroupApis
from zkafka.coordinator.offsets_log import OffsetsLog
from zkafka.coordinator.producer_id_manager import ProducerIdManager
from zkafka.coordinator.transaction_coordinator import TransactionCoordinator
from zkafka.log.log_cleaner import LogCleaner
from zkafka.log.log_config import LogConfig
from zkafka.log.log_manager08 import LogManager08
from zkafka.network.channel_builders import InterBrokerSecurity
from zkafka.network.listeners import listener_servers
from zkafka.protocol import v08
from zkafka.security.auth_helper import broker_auth_helper
from zkafka.server.acl_apis import AclApis
from zkafka.server.admin_apis import AdminApis
from zkafka.server.apis08 import KafkaApis
from zkafka.server.config_apis import ConfigApis
from zkafka.server.controlled_shutdown import controlled_shutdown
from zkafka.server.controller_fence import ControllerFence, zookeeper_controller
from zkafka.server.delayed_join import JoinPurgatory
from zkafka.server.delete_records import DeleteRecordsApis
from zkafka.server.fetch_session import FetchSessionCache
from zkafka.server.isr_changes import zk_isr_writer
from zkafka.server.metadata_cache import MetadataCache
from zkafka.server.offsets_zk import ZkOffsetStore
from zkafka.server.quota_config_handler import QuotaConfigHandler
from zkafka.server.registry08 import KafkaHealthcheck, advertised_address, cluster_id
from zkafka.server.replica_apis import ReplicaApis
from zkafka.server.replica_fetcher import FetcherSettings
from zkafka.server.replica_manager import ReplicaManager
from zkafka.server.request_log import RequestLog
from zkafka.server.server_base import BrokerServer
from zkafka.server.topic_config_manager import TopicConfigManager
from zkafka.topic import OFFSETS_TOPIC
from zkafka.zk.acls import zk_security
from zkafka.zk.client import gevent_handler, make_zk_client, start_zk_client

log = logging.getLogger(__name__)

MS = 1000.0


def offsets_log_config(config: BrokerConfig08) -> LogConfig:
    """``__consumer_offsets``' log settings: compacted, ``offsets.topic.segment.bytes`` segments."""
    return replace(LogConfig.from_broker_config(config), compact=True, segment_bytes=config["offsets.topic.segment.bytes"])


class KafkaServer08(BrokerServer):
    """One 0.8 broker. Runs on the gevent hub of the thread that calls ``startup``."""

    def __init__(self, config: BrokerConfig08, halt: Callable[[int], None] = os._exit) -> None:
        super().__init__(config["broker.id"], halt)
        self.config = config
        self.log_manager: LogManager08 | None = None
        self.zk_client: Any = None
        self.controller_context: ControllerContext | None = None
        self.controller: KafkaController | None = None
        self.healthcheck: KafkaHealthcheck | None = None
        self.replica_manager: ReplicaManager | None = None
        self.metadata_cache = MetadataCache(
            create_topic=self._create_topic, auto_create_topics=config["auto.create.topics.enable"]
        )
        self._min_isr: dict[str, int] = {}
        self.topic_config_manager: TopicConfigManager | None = None
        self.apis: KafkaApis | None = None
        self.coordinator: GroupCoordinator | None = None
        self.join_purgatory = JoinPurgatory()
        self.quota_configs = QuotaConfigHandler(config)
        self.request_log = RequestLog(self.broker_id, lambda r: self.apis.handler_for(r), self._leader_offsets)
        self._ready = gevent.event.Event()

    def startup(self) -> None:
        config = self.config
        metrics = self._start_metrics(config["metrics.port"], config["host.name"], LINE_08)
        if metrics is not None:
            metrics.routes["/requests"] = self.request_log.snapshot
        self._open_logs(metrics)
        self._start_replica_manager()
        self._start_coordinator()
        try:
            self._start_socket_server(metrics)
            self._start_zookeeper_parts()
        except BaseException:
            self._stop_after_failed_start()
            raise
        self._ready.set()
        self._schedule_log_tasks()
        log.info("0.8 broker %d started on port %d", self.broker_id, self.port)

    def _open_logs(self, metrics: Any) -> None:
        """Every partition's log, recovered after an unclean stop; a failure stops what started before."""
        config = self.config
        self.log_manager = self._open_logs_with(
            metrics,
            lambda offload, on_open_log: LogManager08(
                config["log.dirs"],
                LogConfig.from_broker_config(config),
                topic_configs={OFFSETS_TOPIC: offsets_log_config(config)},
                scheduler=self._schedule_log_task,
                offload=offload,
                on_open_log=on_open_log,
                topic_overrides=self._topic_log_config,
            ),
        )

    def _start_replica_manager(self) -> None:
        """The replica manager, with its produce and fetch purgatories; it leads or follows nothing yet."""
        config = self.config
        self.replica_manager = ReplicaManager(
            self.broker_id,
            self.log_manager,
            on_log_failure=self.halt,
            fetcher_settings=FetcherSettings.from_config(config),
            lag_time_ms=config["replica.lag.time.max.ms"],
            lag_max_messages=config["replica.lag.max.messages"],
            min_insync_replicas=self._min_insync_replicas,
        )

    def _start_coordinator(self) -> None:
        """The group coordinator, writing ``__consumer_offsets`` through the replica manager and parking
        rebalances in this broker's join purgatory."""
        config = self.config
        offsets_log = OffsetsLog(
            self.replica_manager,
            config["offsets.load.buffer.size"],
            required_acks=config["offsets.commit.required.acks"],
            timeout_ms=config["offsets.commit.timeout.ms"],
        )
        self.coordinator = GroupCoordinator(
            CoordinatorConfig.from_broker_config(config),
            append=offsets_log.append,
            read_partition=offsets_log.read,
            join_purgatory=self.join_purgatory,
        )

    def _start_socket_server(self, metrics: Any) -> None:
        """One acceptor per listener; ``socket_server`` is the first (``port`` its port)."""
        observer = metrics.request_done if metrics else None
        self.socket_servers = listener_servers(self.config, v08.CODEC, self._serve, observer, self._scram_credential)
        for server in self.socket_servers.values():
            server.start()
            self.socket_server = self.socket_server or server

    def _scram_credential(self, mechanism: str, user: str) -> Any:
        return scram_credential_of(self.zk_client, mechanism, user) if self.zk_client is not None else None

    def _start_zookeeper_parts(self) -> None:
        config = self.config
        self.zk_client = make_zk_client(
            config["zookeeper.connect"],
            config["zookeeper.session.timeout.ms"],
            config["zookeeper.connection.timeout.ms"],
            handler=gevent_handler(),
            **zk_security(config),
        )
        start_zk_client(self.zk_client)
        self.metadata_cache.cluster_id = cluster_id(self.zk_client)
        self.replica_manager.isr_writer = zk_isr_writer(self.zk_client)
        self.replica_manager.add_leadership_listener(self._on_leadership)
        self.metadata_cache.add_listener(self._on_metadata)
        self.topic_config_manager = TopicConfigManager(
            self.zk_client, config, self.log_manager, lambda topic: self._min_isr.pop(topic, None)
        )
        self.topic_config_manager.startup()
        self.quota_configs.start(self.zk_client, self.topic_config_manager)
        self.controller_context = ControllerContext(self.zk_client)
        self.controller_context.start()
        fence = ControllerFence(zookeeper_controller(self.zk_client))
        auth = broker_auth_helper(config, self.zk_client)  # ALLOW_ALL without authorizer.class.name
        controller = lambda: self.controller  # noqa: E731
        self.apis = KafkaApis(
            self.replica_manager,
            self.metadata_cache,
            offset_store=ZkOffsetStore(self.zk_client),
            offset_metadata_max_bytes=config["offset.metadata.max.bytes"],
            group_apis=GroupApis(self.coordinator, self.metadata_cache.snapshot, self._create_offsets_topic, auth),
            on_sent=self.metrics.sent if self.metrics else None,
            replica_apis=ReplicaApis(self.replica_manager, self.metadata_cache, fence, controller, auth),
            admin_apis=AdminApis(self.zk_client, config, self.metadata_cache, controller, auth),
            more_apis=(
                ConfigApis(self.zk_client, config, self.metadata_cache, auth),
                DeleteRecordsApis(self.replica_manager, self.log_manager.checkpoint_log_start_offsets, auth),
                TransactionCoordinator(ProducerIdManager(self.broker_id, self.zk_client), auth),
                AclApis(self.zk_client, auth),
            ),
            fetch_sessions=FetchSessionCache(config["max.incremental.fetch.session.cache.slots"]),
            auth=auth,
            throttler=self.quota_configs.throttler,
        )
        host, port = advertised_address(config, self.port)
        channels = ControllerChannelManager(
            f"id_{self.broker_id}-host_{host}-port_{port}",
            config["controller.socket.timeout.ms"],
            InterBrokerSecurity.from_config(config),
        )
        self.controller = KafkaController(config, self.zk_client, self.controller_context, channels=channels)
        self.controller.startup()
        bound = {name: server.port for name, server in self.socket_servers.items()}
        self.healthcheck = KafkaHealthcheck.from_config(config, self.port, bound_ports=bound, client=self.zk_client)
        self.healthcheck.startup()
        if self.metrics is not None:
            self._watch_state(self.metrics)

    def _watch_state(self, metrics: Any) -> None:
        """The 0.8 gauges, read at each scrape: under-replicated partitions led here, the purgatories, whether
        this broker is the active controller."""

        def under_replicated():
            led = [p for p in self.replica_manager.partitions() if p.is_leader]
            return [((), sum(1 for p in led if len(p.isr) < len(p.replicas)))]

        metrics.gauge(
            "kafka_server_under_replicated_partitions",
            "Partitions led here whose ISR is smaller than their replica list.",
            under_replicated,
        )
        metrics.gauge(
            "kafka_controller_active_controller_count",
            "1 while this broker is the controller.",
            lambda: [((), 1 if self.controller is not None and self.controller.active else 0)],
        )
        metrics.watch_quotas(self.quota_configs.managers)
        replicas = self.replica_manager
        metrics.watch_purgatories(
            lambda: [replicas.fetch_purgatory, replicas.produce_purgatory, self.join_purgatory]
        )

    def _schedule_log_tasks(self) -> None:
        config, logs = self.config, self.log_manager
        checkpoint_s = config["log.flush.offset.checkpoint.interval.ms"] / MS
        retention_s = config["log.retention.check.interval.ms"] / MS
        flush_s = min(config["log.flush.scheduler.interval.ms"], 2**31 - 1) / MS
        self.schedule(checkpoint_s, checkpoint_s, logs.checkpoint_recovery_points)
        self.schedule(retention_s, retention_s, logs.cleanup_logs)
        self.schedule(flush_s, flush_s, logs.flush_due)
        producers_s = config["producer.id.expiration.check.interval.ms"] / MS
        self.schedule(producers_s, producers_s, logs.remove_expired_producers)
        hw_s = config["replica.high.watermark.checkpoint.interval.ms"] / MS
        self.schedule(hw_s, hw_s, self.replica_manager.checkpoint_high_watermarks)
        shrink_s = config["replica.lag.time.max.ms"] / MS / 2
        self.schedule(shrink_s, shrink_s, self.replica_manager.shrink_isrs)
        offsets_s = config["offsets.retention.check.interval.ms"] / MS
        self.schedule(offsets_s, offsets_s, self.coordinator.expire_offsets)
        if config["log.cleaner.enable"]:
            cleaner = LogCleaner(
                logs.all_logs,
                dedupe_buffer_size=config["log.cleaner.dedupe.buffer.size"]
                // max(config["log.cleaner.threads"], 1),
                load_factor=config["log.cleaner.io.buffer.load.factor"],
                offload=self.disk_pool.run,
            )
            backoff_s = config["log.cleaner.backoff.ms"] / MS
            self.schedule(backoff_s, backoff_s, cleaner.clean_once)

    def _schedule_log_task(self, delay_ms: int, task: Callable[[], object]) -> None:
        """The logs' delayed work (segment deletion, the flush after a roll) on the hub; OSError halts."""
        gevent.spawn_later(delay_ms / MS, self._run_log_task, task)

    def _run_log_task(self, task: Callable[[], object]) -> None:
        try:
            task()
        except OSError as exc:
            self.halt(exc)
        except Exception:
            log.exception("log task %r failed", task)

    # -- requests -----------------------------------------------------------------------------------------

    def _serve(self, request: v08.Request) -> Any:
        self._ready.wait()
        entry = self.request_log.begin(request)
        response = self.apis.handle(request)
        if entry is not None:
            self.request_log.handled(entry, response)
        return response

    def _leader_offsets(self, topic: str, partition: int) -> tuple[int, int] | None:
        """The log end offset and high watermark of a partition hosted here (the request log's probe)."""
        hosted = self.replica_manager.partition(topic, partition)
        return (hosted.log_end_offset, hosted.high_watermark) if hosted is not None else None

    def _on_metadata(self, snapshot: ClusterSnapshot) -> None:
        """An UpdateMetadata: tell NOT_LEADER from UNKNOWN by it (the cache answers Metadata requests from it)."""
        if self.metrics is not None:
            states = ((t, p, m.leader, m.isr) for t, parts in snapshot.topics.items() for p, m in parts.items())
            self.metrics.on_partition_states(self.broker_id, states)
        self.replica_manager.set_known(self.metadata_cache.leaders())

    def _on_leadership(self, led: list[tuple[str, int]]) -> None:
        self._min_isr.clear()  # read again: the topic's overrides may have changed
        self.coordinator.on_leadership(p for topic, p in led if topic == OFFSETS_TOPIC)

    def _topic_log_config(self, topic: str) -> LogConfig | None:
        """The topic's log settings when ``/config/topics/<t>`` overrides any (None before ZooKeeper is up)."""
        return self.topic_config_manager.log_config(topic) if self.topic_config_manager else None

    def _min_insync_replicas(self, topic: str) -> int:
        """The topic's ``min.insync.replicas`` (its override in ``/config/topics/<t>``, else the broker's)."""
        value = self._min_isr.get(topic)
        if value is None:
            overrides = self.topic_config_manager.overrides(topic) if self.topic_config_manager else {}
            value = self._min_isr[topic] = overrides.get("min.insync.replicas") or self.config["min.insync.replicas"]
        return value

    def _create_topic(self, topic: str) -> None:
        if topic == OFFSETS_TOPIC:
            self._create_offsets_topic()
        else:
            auto_create_topic(self.zk_client, self.config, topic)

    def _create_offsets_topic(self) -> None:
        """``__consumer_offsets`` as 0.9 creates it: offsets.topic.* settings, compacted, RF capped at the live
        brokers."""
        config = self.config
        replication = min(config["offsets.topic.replication.factor"], len(live_broker_ids(self.zk_client)))
        overrides = {"cleanup.policy": "compact", "segment.bytes": str(config["offsets.topic.segment.bytes"])}
        try:
            create_topic(
                self.zk_client,
                OFFSETS_TOPIC,
                config["offsets.topic.num.partitions"],
                max(replication, 1),
                overrides,
            )
        except TopicExistsError:
            pass

    # -- shutdown -----------------------------------------------------------------------------------------

    def _prepare_shutdown(self) -> None:
        if self.config["controlled.shutdown.enable"] and self.zk_client is not None:
            controlled_shutdown(self.zk_client, self.broker_id, self.config)

    def _drop_waiting_requests(self) -> None:
        if self.coordinator is not None:
            self.coordinator.shutdown()
        if self.replica_manager is not None:  # their connections close, as 0.8.2's socket server shutdown does
            self.replica_manager.fetch_purgatory.shutdown()
            self.replica_manager.produce_purgatory.shutdown()

    def _shutdown(self) -> None:
        if self.replica_manager is not None:
            try:
                self.replica_manager.shutdown()
            except OSError as exc:
                log.error("checkpointing the high watermarks failed: %s", exc)
        self._stop_zookeeper_parts()
        if self.log_manager is not None:
            self.log_manager.close()

    def _stop_zookeeper_parts(self) -> None:
        stops = (
            self.controller.shutdown if self.controller else None,
            self.controller_context.close if self.controller_context else None,
        )
        for stop in stops:
            try:
                if stop is not None:
                    stop()
            except Exception:
                log.exception("%s failed", stop)
        if self.healthcheck is not None:
            self.healthcheck.close()
        if self.zk_client is not None:
            self.zk_client.stop()
            self.zk_client.close()

    def _stop_after_failed_start(self) -> None:
        self._stop_socket_servers(timeout=0)
        self._stop_zookeeper_parts()
        if self.log_manager is not None:
            self.log_manager.close(clean=False)
        if self.disk_pool is not None:
            self.disk_pool.close()
        self._stop_metrics()

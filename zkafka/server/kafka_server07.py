"""KafkaServer: starts and stops one broker (logs, socket server, ZooKeeper registration, flusher, cleaner).

Startup follows 0.7: open the logs (recovering them after an unclean stop) → start the socket server →
register in ZooKeeper → start the flusher. Requests wait until the registration is done. A clean shutdown
stops accepting, finishes the requests in flight, flushes every log, writes ``.kafka_cleanshutdown`` and
ends the ZooKeeper session so the broker's znodes vanish at once. The lifecycle both lines share (periodic
tasks, halt, shutdown, ``BrokerThread``) is server_base's.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

import gevent
import gevent.event

from zkafka.config import LINE_07
from zkafka.config07 import BrokerConfig
from zkafka.log.log_manager07 import LogManager
from zkafka.network.server import SocketServer
from zkafka.protocol import v07
from zkafka.server.apis07 import KafkaRequestHandlers
from zkafka.server.registry07 import KafkaZooKeeper
from zkafka.server.server_base import BrokerServer

__all__ = ["KafkaServer"]

log = logging.getLogger(__name__)


class KafkaServer(BrokerServer):
    """One broker. Runs on the gevent hub of the thread that calls ``startup``."""

    def __init__(self, config: BrokerConfig, halt: Callable[[int], None] = os._exit) -> None:
        super().__init__(config["brokerid"], halt)
        self.config = config
        self.log_manager: LogManager | None = None
        self.zookeeper: KafkaZooKeeper | None = None
        self._ready = gevent.event.Event()

    def startup(self) -> None:
        config = self.config
        metrics = self._start_metrics(config["metrics.port"], config["hostname"], LINE_07)
        self.log_manager = self._open_logs_with(
            metrics,
            lambda offload, on_open_log: LogManager(
                config, on_new_topic=self._on_new_topic, offload=offload, on_open_log=on_open_log
            ),
        )
        handlers = KafkaRequestHandlers(
            self.log_manager, self.halt, on_sent=metrics.sent if metrics else None
        )

        def serve(request):
            self._ready.wait()
            return handlers(request)

        self.socket_server = SocketServer(
            config["hostname"] or "0.0.0.0",
            config["port"],
            v07.CODEC,
            serve,
            max_request_size=config["max.socket.request.bytes"],
            send_buffer=config["socket.send.buffer"],
            receive_buffer=config["socket.receive.buffer"],
            observer=metrics.request_done if metrics else None,
        )
        self.socket_server.start()
        try:
            if config["enable.zookeeper"]:
                self.zookeeper = KafkaZooKeeper(config, self.port, config.partitions_for)
                self.zookeeper.startup(self.log_manager.topics())
        except BaseException:
            self.socket_server.stop(timeout=0)
            self.log_manager.close(clean=False)
            self.disk_pool.close()
            self._stop_metrics()
            raise
        self._ready.set()
        flush_interval = config["log.default.flush.scheduler.interval.ms"] / 1000.0
        cleanup_delay = config["log.cleanup.initial.delay.ms"] / 1000.0
        cleanup_interval = config["log.cleanup.interval.mins"] * 60.0
        self.schedule(flush_interval, flush_interval, self.log_manager.flush_due)
        self.schedule(cleanup_delay, cleanup_interval, self.log_manager.cleanup_logs)
        log.info("broker %d started on port %d", config["brokerid"], self.port)

    def _on_new_topic(self, topic: str) -> None:
        if self.zookeeper is not None:
            gevent.spawn(self._register_topic, topic)

    def _register_topic(self, topic: str) -> None:
        try:
            self.zookeeper.register_topic(topic)
        except Exception:
            log.exception("could not register topic %s in ZooKeeper", topic)

    def _shutdown(self) -> None:
        if self.log_manager is not None:
            self.log_manager.close()
        if self.zookeeper is not None:
            self.zookeeper.close()

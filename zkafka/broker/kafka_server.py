"""KafkaServer: starts and stops one broker (logs, socket server, ZooKeeper registration, flusher, cleaner).

Startup follows 0.7: open the logs (recovering them after an unclean stop) → start the socket server →
register in ZooKeeper → start the flusher. Requests wait until the registration is done. A clean shutdown
stops accepting, finishes the requests in flight, flushes every log, writes ``.kafka_cleanshutdown`` and
ends the ZooKeeper session so the broker's znodes vanish at once.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable

import gevent
import gevent.event

from zkafka.broker.handlers import KafkaRequestHandlers
from zkafka.broker.log_manager import LogManager
from zkafka.broker.registry import KafkaZooKeeper
from zkafka.config import BrokerConfig
from zkafka.network.server import SocketServer
from zkafka.protocol import v07

log = logging.getLogger(__name__)


class KafkaServer:
    """One broker. Runs on the gevent hub of the thread that calls ``startup``."""

    def __init__(self, config: BrokerConfig, halt: Callable[[int], None] = os._exit) -> None:
        self.config = config
        self._halt = halt
        self.log_manager: LogManager | None = None
        self.socket_server: SocketServer | None = None
        self.zookeeper: KafkaZooKeeper | None = None
        self._ready = gevent.event.Event()
        self._stopped = gevent.event.Event()
        self._greenlets: list[gevent.Greenlet] = []
        self._shutting_down = False

    @property
    def port(self) -> int:
        """The port the socket server listens on (the real one when ``port=0`` asked for any)."""
        assert self.socket_server is not None, "not started"
        return self.socket_server.port

    def startup(self) -> None:
        config = self.config
        self.log_manager = LogManager(config, on_new_topic=self._on_new_topic)
        handlers = KafkaRequestHandlers(self.log_manager, self.halt)

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
        )
        self.socket_server.start()
        try:
            if config["enable.zookeeper"]:
                self.zookeeper = KafkaZooKeeper(config, self.port, config.partitions_for)
                self.zookeeper.startup(self.log_manager.topics())
        except BaseException:
            self.socket_server.stop(timeout=0)
            self.log_manager.close(clean=False)
            raise
        self._ready.set()
        flush_interval = config["log.default.flush.scheduler.interval.ms"] / 1000.0
        cleanup_delay = config["log.cleanup.initial.delay.ms"] / 1000.0
        cleanup_interval = config["log.cleanup.interval.mins"] * 60.0
        self._greenlets = [
            gevent.spawn(self._every, flush_interval, flush_interval, self.log_manager.flush_due),
            gevent.spawn(self._every, cleanup_delay, cleanup_interval, self.log_manager.cleanup_logs),
        ]
        log.info("broker %d started on port %d", config["brokerid"], self.port)

    def _on_new_topic(self, topic: str) -> None:
        if self.zookeeper is not None:
            gevent.spawn(self._register_topic, topic)

    def _register_topic(self, topic: str) -> None:
        try:
            self.zookeeper.register_topic(topic)
        except Exception:
            log.exception("could not register topic %s in ZooKeeper", topic)

    def halt(self, exc: OSError) -> None:
        """An I/O error on the log: stop the process at once, as 0.7 does, rather than serve a broken log."""
        log.critical("I/O error on the log of broker %d, halting: %s", self.config["brokerid"], exc)
        self._halt(1)

    def _every(self, first_delay: float, interval: float, task) -> None:
        gevent.sleep(first_delay)
        while True:
            try:
                task()
            except OSError as exc:
                self.halt(exc)
            except Exception:
                log.exception("scheduled %s failed", getattr(task, "__name__", task))
            gevent.sleep(interval)

    def shutdown(self) -> None:
        """Clean shutdown; safe to call more than once."""
        if self._shutting_down:
            self._stopped.wait()
            return
        self._shutting_down = True
        log.info("shutting down broker %d", self.config["brokerid"])
        try:
            if self.socket_server is not None:
                self.socket_server.stop()
            gevent.killall(self._greenlets)
            if self.log_manager is not None:
                self.log_manager.close()
            if self.zookeeper is not None:
                self.zookeeper.close()
        finally:
            self._stopped.set()
        log.info("broker %d shut down", self.config["brokerid"])

    def await_shutdown(self) -> None:
        self._stopped.wait()


class BrokerThread:
    """A KafkaServer on its own thread and gevent hub, for embedding a broker in a threaded program."""

    def __init__(self, config: BrokerConfig) -> None:
        self.server = KafkaServer(config)
        self._stop = threading.Event()
        self._started = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=f"broker-{config['brokerid']}", daemon=True)

    def start(self, timeout: float = 30.0) -> BrokerThread:
        self._thread.start()
        if not self._started.wait(timeout):
            raise TimeoutError(f"broker did not start within {timeout}s")
        if self._error is not None:
            raise self._error
        return self

    @property
    def port(self) -> int:
        return self.server.port

    def _run(self) -> None:
        try:
            self.server.startup()
        except BaseException as exc:
            self._error = exc
            self._started.set()
            return
        self._started.set()
        while not self._stop.is_set():
            gevent.sleep(0.02)
        self.server.shutdown()

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise TimeoutError(f"broker thread did not stop within {timeout}s")

    def __enter__(self) -> BrokerThread:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

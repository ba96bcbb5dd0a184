"""What the broker servers of both lines share: periodic tasks, the disk thread pool, the halt on a log I/O error,
the once-only clean shutdown, and ``BrokerThread`` for embedding a broker of either line in a threaded program.

A server subclasses ``BrokerServer`` and supplies ``startup`` and ``_shutdown`` (its components in order).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

import gevent
import gevent.event
import gevent.threadpool

log = logging.getLogger(__name__)

# Threads for the logs' fsyncs: enough that a slow partition does not queue the others behind it.
DISK_THREADS = 4


class DiskPool:
    """A few threads for the blocking disk calls of the logs (fsync), so that a slow disk only stalls the requests
    that wait for their own flush, never the event loop and every connection with it.

    Created on the hub's thread; ``run`` from any greenlet of that hub waits cooperatively, and from another
    thread (or the hub itself) runs the task in place.
    """

    def __init__(self, size: int = DISK_THREADS) -> None:
        self._pool = gevent.threadpool.ThreadPool(size)
        self._hub = self._pool.hub

    def run(self, task: Callable[[], Any]) -> Any:
        """Run ``task`` on a pool thread and return its result (its exception is raised here)."""
        if gevent.getcurrent() is self._hub:
            return task()
        # The exception comes back as a value: raised in the pool, gevent would print its traceback as well.
        result, error = self._pool.apply(_outcome, (task,))
        if error is not None:
            raise error
        return result

    def drain(self) -> None:
        """Wait for the tasks already started (shutdown: before the logs are closed)."""
        self._pool.join()

    def close(self) -> None:
        self._pool.kill()


def _outcome(task: Callable[[], Any]) -> tuple[Any, BaseException | None]:
    try:
        return task(), None
    except Exception as exc:
        return None, exc


class BrokerServer:
    """The lifecycle both lines' servers share. Runs on the gevent hub of the thread that calls ``startup``."""

    def __init__(self, broker_id: int, halt: Callable[[int], None] = os._exit) -> None:
        self.broker_id = broker_id
        self._halt = halt
        self.socket_server: Any = None
        self.socket_servers: dict[str, Any] = {}  # every listener's acceptor (the 0.8 line)
        self._stopped = gevent.event.Event()
        self._greenlets: list[gevent.Greenlet] = []
        self._shutting_down = False
        self.disk_pool: DiskPool | None = None
        self.metrics: Any = None  # zkafka.metrics.BrokerMetrics when metrics.port is set

    def _start_metrics(self, port: int | None, host: str | None, line: str) -> Any:
        """Serve Prometheus metrics on ``port`` (None: no metrics, and None is returned)."""
        if port is None:
            return None
        from zkafka.metrics import BrokerMetrics

        self.metrics = BrokerMetrics(self.broker_id, line)
        self.metrics.serve(host or "0.0.0.0", port)
        return self.metrics

    def _stop_metrics(self) -> None:
        if self.metrics is not None:
            self.metrics.close()

    def _start_disk_pool(self) -> DiskPool:
        """The disk pool for the logs' fsyncs (call from ``startup``, on the broker's hub)."""
        self.disk_pool = DiskPool()
        return self.disk_pool

    def _open_logs_with(self, metrics: Any, open_logs: Callable[[Callable, Callable | None], Any]) -> Any:
        """Start the disk pool and return ``open_logs(offload, on_open_log)`` (the line's log manager, its
        fsyncs on the pool and each log shown in ``metrics``); a failure closes the pool and the metrics."""
        disk_pool = self._start_disk_pool()
        try:
            return open_logs(disk_pool.run, metrics.attach if metrics else None)
        except BaseException:
            disk_pool.close()
            self._stop_metrics()
            raise

    def _stop_socket_servers(self, timeout: float = 10.0) -> None:
        for server in self.socket_servers.values() or filter(None, [self.socket_server]):
            server.stop(timeout=timeout)

    def listener_port(self, listener: str) -> int:
        """The port ``listener`` is bound to."""
        return self.socket_servers[listener.upper()].port

    @property
    def port(self) -> int:
        """The port the socket server listens on (the real one when ``port=0`` asked for any)."""
        assert self.socket_server is not None, "not started"
        return self.socket_server.port

    def startup(self) -> None:
        raise NotImplementedError

    def halt(self, exc: OSError | str) -> None:
        """An I/O error on the log (or the reason given): stop the process at once, as Kafka does, rather than
        serve a broken log."""
        if isinstance(exc, str):
            log.critical("broker %d: %s", self.broker_id, exc)
        else:
            log.critical("I/O error on the log of broker %d, halting: %s", self.broker_id, exc)
        self._halt(1)

    def schedule(self, first_delay_s: float, interval_s: float, task: Callable[[], Any]) -> None:
        """Run ``task`` every ``interval_s`` after ``first_delay_s``, until shutdown; an OSError halts."""
        self._greenlets.append(gevent.spawn(self._every, first_delay_s, interval_s, task))

    def _every(self, first_delay: float, interval: float, task: Callable[[], Any]) -> None:
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
        """Clean shutdown; safe to call more than once (later calls wait for the first)."""
        if self._shutting_down:
            self._stopped.wait()
            return
        self._shutting_down = True
        log.info("shutting down broker %d", self.broker_id)
        try:
            try:
                self._prepare_shutdown()
            except Exception:
                log.exception("preparing the shutdown of broker %d failed", self.broker_id)
            self._drop_waiting_requests()
            self._stop_socket_servers()
            gevent.killall(self._greenlets)
            if self.disk_pool is not None:
                self.disk_pool.drain()
            self._shutdown()
        finally:
            if self.disk_pool is not None:
                self.disk_pool.close()
            self._stop_metrics()
            self._stopped.set()
        log.info("broker %d shut down", self.broker_id)

    def _prepare_shutdown(self) -> None:
        """First, while the broker still serves requests (0.8: the controlled shutdown)."""

    def _drop_waiting_requests(self) -> None:
        """Before the socket server stops: end the requests that would wait (parked fetches)."""

    def _shutdown(self) -> None:
        """Stop the components after the socket server and the scheduled tasks (logs, ZooKeeper)."""

    def await_shutdown(self) -> None:
        self._stopped.wait()

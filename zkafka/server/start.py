"""Starting a broker of either line from its config: the seam between the CLI and the two servers."""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Callable, Mapping
from typing import Any

import gevent
import gevent.event

from zkafka.config import LINE_08, detect_broker_line, load_properties
from zkafka.config07 import BrokerConfig
from zkafka.config08 import BrokerConfig08
from zkafka.server.server_base import BrokerServer
from zkafka.utils.hub import destroy_thread_hub


def load_broker_config(
    path: str | os.PathLike[str], overrides: Mapping[str, str] | None = None
) -> BrokerConfig | BrokerConfig08:
    """Read a ``server.properties`` of either line (overrides applied first) as that line's config."""
    props = load_properties(path)
    props.update(overrides or {})
    return BrokerConfig08(props) if detect_broker_line(props) == LINE_08 else BrokerConfig(props)


def broker_id(config: BrokerConfig | BrokerConfig08) -> int:
    """The broker id whichever line's key names it."""
    return config["broker.id"] if isinstance(config, BrokerConfig08) else config["brokerid"]


def server_for(config: BrokerConfig | BrokerConfig08) -> Any:
    """The (not yet started) server of the config's line: KafkaServer (0.7) or KafkaServer08.

    Both offer ``startup()``, ``shutdown()``, ``await_shutdown()``, ``port`` and ``broker_id``.
    """
    if isinstance(config, BrokerConfig08):
        from zkafka.server.kafka_server08 import KafkaServer08

        return KafkaServer08(config)
    from zkafka.server.kafka_server07 import KafkaServer

    return KafkaServer(config)


def start_broker(config: BrokerConfig | BrokerConfig08) -> Any:
    """Start the server of the config's line and return it started (the broker process's own start).

    What the start built (modules, config, ZooKeeper client, logs) then goes to the collector's permanent
    generation (``gc.freeze``): a full collection, which runs on the event loop, walks only the objects made
    since, instead of stalling every connection for the whole heap (a 0.8 broker: ~36,000 objects).
    """
    server = server_for(config)
    server.startup()
    gc.collect()
    gc.freeze()
    return server


class BrokerThread:
    """A broker server on its own thread and gevent hub, for embedding a broker in a threaded program."""

    def __init__(self, config: Any, server_factory: Callable[[Any], BrokerServer] | None = None) -> None:
        self.server = (server_factory or server_for)(config)
        self._stop = threading.Event()
        self._wake: Any = None  # the hub's cross-thread wake-up, sent by stop() while the hub lives
        self._hub_lock = threading.Lock()  # stop()'s wake-up never meets a destroyed hub
        self._started = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=f"broker-{self.server.broker_id}", daemon=True)

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

    def listener_port(self, listener: str) -> int:
        """The port ``listener`` is bound to."""
        return self.server.listener_port(listener)

    def _run(self) -> None:
        try:
            self._serve()
        finally:  # the thread's hub and its loop (an epoll and an eventfd descriptor) end with the thread
            with self._hub_lock:
                self._wake = None
                destroy_thread_hub()

    def _serve(self) -> None:
        try:
            self.server.startup()
        except BaseException as exc:
            self._error = exc
            self._started.set()
            return
        stopping = gevent.event.Event()
        self._wake = gevent.get_hub().loop.async_()
        self._wake.start(stopping.set)
        self._started.set()
        if not self._stop.is_set():
            stopping.wait()  # idle until stop(): no polling
        self._wake.stop()
        self.server.shutdown()

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        with self._hub_lock:
            if self._wake is not None:
                self._wake.send()
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise TimeoutError(f"broker thread did not stop within {timeout}s")

    def __enter__(self) -> BrokerThread:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

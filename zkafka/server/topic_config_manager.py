"""``TopicConfigManager``: a broker's view of the topics' overrides (``/config/topics/<t>``), applied to its live
logs when ``/config/changes`` says they changed (0.8.2's ``TopicConfigManager``; Kafka 1.1's
``DynamicConfigManager`` with its ``TopicConfigHandler``).

Each change notification (``config_change_<seq>``, in 0.8.2's form or 1.1's ``{"version":2,"entity_path":
"topics/<t>"}``) is processed once, in sequence order; at startup every open log takes its topic's overrides
(logs load before ZooKeeper is up), so the notifications already there are skipped. Logs made later read their
topic's overrides when made (``LogManager08``'s ``topic_overrides``, this ``log_config``).
A notification of another entity type (``clients``, ``users``) goes to its handler in ``entity_handlers``.
Notifications older than 15 minutes are deleted when the next one arrives, as Kafka's listener purges them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from kazoo.exceptions import NoNodeError

from zkafka.config08 import BrokerConfig08, parse_topic_overrides, topic_config
from zkafka.errors import KafkaError
from zkafka.log.log_config import LogConfig
from zkafka.log.log_manager08 import LogManager08
from zkafka.utils import now_ms
from zkafka.zk.client import get_data
from zkafka.zk.paths08 import (
    CONFIG_CHANGE_PREFIX,
    CONFIG_CHANGES_PATH,
    parse_entity_change,
    parse_topic_config,
    topic_config_path,
)

log = logging.getLogger(__name__)

CHANGE_EXPIRATION_MS = 15 * 60 * 1000  # Kafka's ZkNodeChangeNotificationListener.changeExpirationMs


class TopicConfigManager:
    """Reads topics' overrides from ZooKeeper and hands changed ones to the log manager and ``on_change``."""

    def __init__(
        self,
        zk_client: Any,
        config: BrokerConfig08,
        log_manager: LogManager08,
        on_change: Callable[[str], None] = lambda topic: None,
    ) -> None:
        self.zk_client = zk_client
        self.config = config
        self.log_manager = log_manager
        self.on_change = on_change
        # The handlers of other entity types' changes (``clients``, ``users``): called with (type, name).
        self.entity_handlers: dict[str, Callable[[str, str], None]] = {}
        self._last_change: int | None = None

    def startup(self) -> None:
        """Follow ``/config/changes``; the first look applies every open log's overrides."""
        self.zk_client.ensure_path(CONFIG_CHANGES_PATH)
        self.zk_client.ChildrenWatch(CONFIG_CHANGES_PATH, self._on_changes)

    def overrides(self, topic: str) -> dict[str, Any]:
        """The topic's typed overrides; none when its znode is missing or unreadable (logged)."""
        data = get_data(self.zk_client, topic_config_path(topic))
        if data is None:
            return {}
        try:
            return parse_topic_overrides(parse_topic_config(topic, data))
        except KafkaError as exc:
            log.warning("%s: %s; using the broker's defaults", topic_config_path(topic), exc)
            return {}

    def log_config(self, topic: str) -> LogConfig | None:
        """The topic's log settings when it has overrides (the broker's ``log.*`` keys under them), else None."""
        overrides = self.overrides(topic)
        return LogConfig.from_topic_config({**topic_config(self.config, {}), **overrides}) if overrides else None

    def apply(self, topic: str) -> None:
        self.log_manager.update_topic_config(topic)
        self.on_change(topic)

    def _on_changes(self, children: list[str]) -> None:
        sequences = sorted(
            int(c[len(CONFIG_CHANGE_PREFIX) :]) for c in children if c.startswith(CONFIG_CHANGE_PREFIX)
        )
        if self._last_change is None:
            self._last_change = sequences[-1] if sequences else -1
            self.log_manager.refresh_configs()
            return
        for sequence in sequences:
            if sequence > self._last_change:
                self._process(f"{CONFIG_CHANGE_PREFIX}{sequence:010d}")
                self._last_change = sequence
        self._purge(c for c in children if c.startswith(CONFIG_CHANGE_PREFIX))

    def _purge(self, names: Iterable[str]) -> None:
        """Delete the notifications older than CHANGE_EXPIRATION_MS (every broker processed them by then)."""
        oldest = now_ms() - CHANGE_EXPIRATION_MS
        for name in names:
            path = f"{CONFIG_CHANGES_PATH}/{name}"
            stat = self.zk_client.exists(path)
            if stat is not None and stat.ctime < oldest:
                try:
                    self.zk_client.delete(path)
                except NoNodeError:  # another broker purged it first
                    pass

    def _process(self, name: str) -> None:
        data = get_data(self.zk_client, f"{CONFIG_CHANGES_PATH}/{name}")
        if data is None:
            return
        try:
            kind, entity = parse_entity_change(data)
        except KafkaError as exc:
            log.info("%s/%s: %s (skipped)", CONFIG_CHANGES_PATH, name, exc)
            return
        if kind != "topics":
            handler = self.entity_handlers.get(kind)
            if handler is not None:
                handler(kind, entity)
            return
        log.info("topic %s: config changed (%s)", entity, name)
        self.apply(entity)

"""The ZooKeeper side of client quotas: the quota entities under ``/config/clients`` and ``/config/users``,
read at startup and again when a ``/config/changes`` notification names one, applied to the broker's quota
managers (Kafka's ``ClientIdConfigHandler`` and ``UserConfigHandler``)."""

from __future__ import annotations

import logging
from typing import Any

from zkafka.admin.client_quotas import all_quota_entities, fetch_entity_config
from zkafka.errors import KafkaError
from zkafka.quota.quota_entity import parse_entity_path, quota_values
from zkafka.quota.quota_manager import QuotaManagers
from zkafka.server.throttling import Throttler

log = logging.getLogger(__name__)


class QuotaConfigHandler:
    """The broker's quota managers (``quota.*`` keys), their overrides kept equal to the entities' configs in
    ZooKeeper once started; ``throttler`` applies them to requests."""

    def __init__(self, config: Any) -> None:
        self.managers = QuotaManagers.from_config(config)
        self.throttler = Throttler(self.managers)
        self.zk_client: Any = None

    def start(self, zk_client: Any, config_manager: Any) -> None:
        """Take the ``clients`` and ``users`` notifications ``config_manager`` follows, then read every entity
        (after its watch is set, so that no change falls between)."""
        self.zk_client = zk_client
        config_manager.entity_handlers.update(clients=self.process, users=self.process)
        for path in all_quota_entities(zk_client):
            kind, _, name = path.partition("/")
            self.process(kind, name)

    def process(self, kind: str, sanitized_name: str) -> None:
        """Read the entity ``<kind>/<sanitized_name>`` and set (or remove) each of its quotas."""
        path = f"{kind}/{sanitized_name}"
        try:
            user, client_id = parse_entity_path(path)
            values = quota_values(fetch_entity_config(self.zk_client, path), f"/config/{path}")
        except KafkaError as exc:
            log.warning("%s; its quotas are left as they were", exc)
            return
        for key, manager in self.managers.by_config().items():
            if values.get(key) is not None or manager.overrides.get((user, client_id)) is not None:
                log.info("%s quota of %s: %s", manager.quota_type, path, values.get(key, "removed"))
            manager.update_quota(user, client_id, values.get(key))

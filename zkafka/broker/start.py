"""Starting a broker of either line from its config: the seam between the CLI and the two servers."""

from __future__ import annotations

from typing import Any

from zkafka.config import BrokerConfig
from zkafka.config08 import BrokerConfig08


def broker_id(config: BrokerConfig | BrokerConfig08) -> int:
    """The broker id whichever line's key names it."""
    return config["broker.id"] if isinstance(config, BrokerConfig08) else config["brokerid"]


def server_for(config: BrokerConfig | BrokerConfig08) -> Any:
    """The (not yet started) server of the config's line: KafkaServer (0.7) or KafkaServer08.

    Both offer ``startup()``, ``shutdown()``, ``await_shutdown()``, ``port`` and ``broker_id``.
    """
    if isinstance(config, BrokerConfig08):
        from zkafka.broker.kafka_server08 import KafkaServer08

        return KafkaServer08(config)
    from zkafka.broker.kafka_server import KafkaServer

    return KafkaServer(config)


def start_broker(config: BrokerConfig | BrokerConfig08) -> Any:
    """Start the server of the config's line and return it started."""
    server = server_for(config)
    server.startup()
    return server

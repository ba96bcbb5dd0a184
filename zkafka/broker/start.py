"""Starting a broker of either line from its config: the seam between the CLI and the two servers."""

from __future__ import annotations

from typing import Any

from zkafka.config import BrokerConfig
from zkafka.config08 import BrokerConfig08
from zkafka.errors import KafkaError

KAFKA_SERVER08_MODULE = "zkafka.broker.kafka_server08"


class BrokerLineNotBuiltError(KafkaError):
    """The properties ask for a broker line this build does not have yet."""


def broker_id(config: BrokerConfig | BrokerConfig08) -> int:
    """The broker id whichever line's key names it."""
    return config["broker.id"] if isinstance(config, BrokerConfig08) else config["brokerid"]


def start_broker(config: BrokerConfig | BrokerConfig08) -> Any:
    """Start the server of the config's line: KafkaServer (0.7) or KafkaServer08; return it started.

    Both servers offer ``startup()``, ``shutdown()``, ``await_shutdown()`` and ``port``.
    """
    if isinstance(config, BrokerConfig08):
        try:
            from zkafka.broker.kafka_server08 import KafkaServer08
        except ModuleNotFoundError as exc:
            if exc.name != KAFKA_SERVER08_MODULE:
                raise
            raise BrokerLineNotBuiltError(
                "the properties are a 0.8 broker's (broker.id, zookeeper.connect, log.dirs), and the 0.8 line's"
                " broker is not built yet"
            ) from None
        server = KafkaServer08(config)
    else:
        from zkafka.broker.kafka_server import KafkaServer

        server = KafkaServer(config)
    server.startup()
    return server

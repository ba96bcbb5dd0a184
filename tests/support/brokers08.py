"""The ZooKeeper side of 0.8 brokers for tests: one session shared by registration, metadata cache and controller."""

from __future__ import annotations

from zkafka.config08 import BrokerConfig08
from zkafka.controller.context import ControllerContext
from zkafka.controller.controller import KafkaController
from zkafka.server.registry08 import KafkaHealthcheck
from zkafka.zk.client import make_zk_client, start_zk_client

SESSION_TIMEOUT_MS = 3000


class Broker08:
    """Registers ``broker_id`` at 127.0.0.1:9000+id, follows the cluster and runs for controller."""

    def __init__(self, zk_connect: str, broker_id: int, **props: str) -> None:
        self.config = BrokerConfig08(
            {
                "broker.id": str(broker_id),
                "zookeeper.connect": zk_connect,
                "zookeeper.session.timeout.ms": str(SESSION_TIMEOUT_MS),
            }
            | {k.replace("_", "."): v for k, v in props.items()}
        )
        self.client = start_zk_client(make_zk_client(zk_connect, SESSION_TIMEOUT_MS))
        self.healthcheck = KafkaHealthcheck(
            broker_id, "127.0.0.1", 9000 + broker_id, SESSION_TIMEOUT_MS, client=self.client
        )
        self.cache = ControllerContext(self.client)
        self.deleted: list[str] = []
        self.controller = KafkaController(
            self.config, self.client, self.cache, on_delete_topic=self.deleted.append
        )
        self.healthcheck.startup()
        self.cache.start()
        self.controller.startup()

    def stop(self) -> None:
        """A clean stop: the session ends, so the registration and /controller (if held) vanish at once."""
        self.controller.shutdown()
        self.cache.close()
        self.healthcheck.close()
        self.client.stop()
        self.client.close()


class Brokers08:
    """A factory of Broker08s that stops them all at the end (``with Brokers08(zk) as start: start(1)``)."""

    def __init__(self, zk_connect: str) -> None:
        self.zk_connect = zk_connect
        self.started: list[Broker08] = []

    def __call__(self, broker_id: int, **props: str) -> Broker08:
        broker = Broker08(self.zk_connect, broker_id, **props)
        self.started.append(broker)
        return broker

    def __enter__(self) -> Brokers08:
        return self

    def __exit__(self, *exc) -> None:
        for broker in self.started:
            if broker.client.connected:
                broker.stop()

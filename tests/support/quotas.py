"""Client quotas set as a user sets them (``zkafka configs``, kafka-configs.sh's options) and read back from
the brokers that apply them."""

from __future__ import annotations

import time

from click.testing import CliRunner

from zkafka.cli.command import main
from zkafka.utils import wait_until


def configs(zk_connect: str, *args: str) -> str:
    """``zkafka configs --zookeeper zk_connect ARGS``: its output (it must succeed)."""
    result = CliRunner().invoke(main, ["configs", "--zookeeper", zk_connect, *args])
    assert result.exit_code == 0, (result.output, result.exception)
    return result.output


def hold_consumer(zk_connect: str, brokers, client_id: str, byte_rate: int) -> None:
    """Set ``consumer_byte_rate`` on ``client_id`` and wait until every broker in ``brokers`` applies it."""
    entity = ("--entity-type", "clients", "--entity-name", client_id)
    configs(zk_connect, "--alter", "--add-config", f"consumer_byte_rate={byte_rate}", *entity)
    managers = [broker.server.quota_configs.managers for broker in brokers]
    wait_until(
        lambda: all(m.fetch.quota("ANONYMOUS", client_id) == byte_rate for m in managers),
        10,
        message=f"{client_id}'s consumer quota on every broker",
    )


def throttling(broker) -> bool:
    """Whether the broker's fetch quota throttled some client in its windows now (its throttle-time metric)."""
    fetch = broker.server.quota_configs.managers.fetch
    return any(m[3] > 0 for m in fetch.measurements(time.monotonic() * 1000))

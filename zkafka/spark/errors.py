"""Errors of the Spark integration."""

from __future__ import annotations

import logging

from zkafka.errors import KafkaError


class DataLossError(KafkaError):
    """Offsets a read needs are gone: deleted by retention, lost by a broker, or on a broker that left.

    Raised only with ``failOnDataLoss=true``; with ``false`` the same message is logged as a warning and the
    read goes on from the earliest data still available.
    """


class BrokerGoneError(DataLossError):
    """A broker that offsets refer to is no longer registered in ZooKeeper."""


def report_data_loss(message: str, fail: bool, kind: type[DataLossError] = DataLossError) -> None:
    """Raise ``kind`` (failOnDataLoss=true) or log the message as a warning and go on."""
    if fail:
        raise kind(message + ". Set the option failOnDataLoss=false to go on without it.")
    logging.getLogger("zkafka.spark").warning("%s; going on (failOnDataLoss=false)", message)

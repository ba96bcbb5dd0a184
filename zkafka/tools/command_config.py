"""The client properties of a tool's ``--command-config`` file (Kafka's AdminClient configs): how the tool
reaches a secured listener, as ``network.client_security`` reads them (``security.protocol``, ``ssl.*``,
``sasl.*``)."""

from __future__ import annotations

from typing import Any

from zkafka.config import load_properties
from zkafka.errors import InvalidConfigError
from zkafka.network.client_security import secure_of


def client_secure(path: str | None) -> Any:
    """What a tool's channels take as ``secure`` (``broker_channel``) for the ``--command-config`` file: None
    for PLAINTEXT; InvalidConfigError naming the file and key when a setting is unusable."""
    return secure_of(_properties(path), path) if path is not None else None


def admin_client(bootstrap: str, path: str | None) -> Any:
    """An AdminClient to ``bootstrap`` secured by the ``--command-config`` file (none: PLAINTEXT)."""
    from zkafka.tools.admin_client import AdminClient

    return AdminClient(bootstrap, secure=client_secure(path))


def _properties(path: str) -> dict[str, str]:
    try:
        return load_properties(path)
    except OSError as exc:
        raise InvalidConfigError(f"--command-config: {path}: {exc.strerror}") from None

"""ZkRegistry: broker registration in ZooKeeper, kept across session expiry and across a crash-restart (both lines).

One session, the ephemeral znodes written at startup and written again when a new session replaces an expired
one, and the broker-id rule after a crash. A broker killed with ``kill -9`` leaves its ``/brokers/ids/<id>``
behind until its session expires; the restarted broker waits (saying so in the log) up to the session timeout
plus a margin for that stale node to go, and only a node outliving the wait is a live duplicate, refused naming
its host and port. What each line writes is its subclass's: registry07.py's ``KafkaZooKeeper``,
registry08.py's ``KafkaHealthcheck``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import NodeExistsError, NoNodeError

from zkafka.zk.client import (
    create_ephemeral_expect_conflict,
    gevent_handler,
    make_zk_client,
    session_id,
    start_zk_client,
)

log = logging.getLogger(__name__)

# After a crash the old session lives for its timeout; the wait allows that plus this much (at least).
STALE_REGISTRATION_MARGIN_MS = 2000


class BrokerIdConflictError(RuntimeError):
    """Another live broker holds our ``/brokers/ids/<id>``."""


def stale_registration_wait_s(session_timeout_ms: int) -> float:
    """How long a restarted broker waits for a stale registration: the session timeout plus a margin."""
    return (session_timeout_ms + max(STALE_REGISTRATION_MARGIN_MS, session_timeout_ms // 2)) / 1000.0


class ZkRegistry:
    """A broker's ZooKeeper session and the ephemeral znodes it keeps; subclasses say what ``register_all`` writes.

    Pass ``client`` to share a session with other parts of the broker (it is then not closed here).
    """

    def __init__(
        self,
        broker_id: int,
        session_timeout_ms: int,
        *,
        client: KazooClient | None = None,
        connect: str | None = None,
        connection_timeout_ms: int | None = None,
        use_gevent: bool = True,
    ) -> None:
        self.broker_id = broker_id
        self.session_timeout_ms = session_timeout_ms
        self._owns_client = client is None
        if client is None:
            assert connect, "a connect string or a client is needed"
            client = make_zk_client(
                connect,
                session_timeout_ms,
                connection_timeout_ms,
                handler=gevent_handler() if use_gevent else None,
            )
        self.client = client
        self._session_lost = False
        self.registrations = 0  # how many times /brokers/ids/<id> was written (1 + re-registrations)

    def start(self, paths: Iterable[str] = ()) -> None:
        """Connect (unless already connected), make sure of ``paths``, register, and follow the session. A
        registration refused (a live duplicate) ends the session it started, as the broker's start fails."""
        if self._owns_client or not self.client.connected:
            start_zk_client(self.client)
        try:
            for path in paths:
                self.client.ensure_path(path)
            self.register_all()
        except BaseException:
            self.close()
            raise
        self.client.add_listener(self._on_state_change)

    def register_all(self) -> None:
        """Write every ephemeral znode of this broker (at startup and after a session expiry)."""
        raise NotImplementedError

    def register_broker_id(self, path: str, value: str, holder_address: Callable[[bytes], str]) -> None:
        """Create the ephemeral broker-id znode, waiting out a stale one left by a crashed run of this broker.

        ``holder_address`` turns the value found at ``path`` into ``host:port`` for the messages.
        """
        wait_s = stale_registration_wait_s(self.session_timeout_ms)
        deadline = time.monotonic() + wait_s
        waited = False
        while True:
            try:
                create_ephemeral_expect_conflict(self.client, path, value)
                break
            except NodeExistsError:
                pass
            try:
                held, stat = self.client.get(path)
            except NoNodeError:
                continue
            address = _describe(holder_address, held)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise BrokerIdConflictError(
                    f"broker id {self.broker_id} is already registered by another live broker at {address}"
                    f" ({path} held by session 0x{stat.ephemeralOwner:x} for more than {wait_s:.1f} s)"
                ) from None
            if not waited:
                waited = True
                log.warning(
                    "%s is held by session 0x%x (%s): a previous run of this broker whose session has not expired"
                    " yet, or a live duplicate; waiting up to %.1f s for it to go",
                    path,
                    stat.ephemeralOwner,
                    address,
                    wait_s,
                )
            gone = self.client.handler.event_object()
            if self.client.exists(path, watch=lambda event, gone=gone: gone.set()) is not None:
                gone.wait(remaining)
        if waited:
            log.info("the stale registration at %s went away; registering", path)
        self.registrations += 1
        log.info(
            "registered broker %d at %s as %s (session 0x%x)",
            self.broker_id,
            path,
            value,
            session_id(self.client),
        )

    def _on_state_change(self, state: str) -> None:
        # Runs on kazoo's event thread/greenlet: it must not block, so re-registration is spawned.
        if state == KazooState.LOST:
            log.warning("ZooKeeper session of broker %d expired", self.broker_id)
            self._session_lost = True
        elif state == KazooState.CONNECTED and self._session_lost:
            self._session_lost = False
            self.client.handler.spawn(self._reregister)

    def _reregister(self) -> None:
        log.info("new ZooKeeper session: re-registering broker %d", self.broker_id)
        try:
            self.register_all()
        except Exception:
            log.exception("re-registration of broker %d failed", self.broker_id)

    def close(self) -> None:
        """Stop following the session; end it (so the ephemeral znodes vanish at once) if it is ours."""
        self.client.remove_listener(self._on_state_change)
        if not self._owns_client:
            return
        try:
            self.client.stop()
        finally:
            self.client.close()


def _describe(holder_address: Callable[[bytes], str], held: bytes) -> str:
    try:
        return holder_address(held)
    except Exception:
        return repr(held.decode("utf-8", "replace"))

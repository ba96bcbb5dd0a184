"""ZooKeeper client helpers: connecting with a chroot, reading and writing znodes, the ephemeral-create rule."""

from __future__ import annotations

import logging
import select
import warnings
from collections.abc import Iterable, Mapping

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError, NoNodeError, RolledBackError, RuntimeInconsistency

from zkafka.errors import ZooKeeperUnreachableError
from zkafka.zk.acls import AclKazooClient, default_acls

log = logging.getLogger(__name__)


def make_zk_client(
    connect: str,
    session_timeout_ms: int = 6000,
    connection_timeout_ms: int | None = None,
    handler=None,
    credentials: str | None = None,
    secure_acls: bool = False,
) -> KazooClient:
    """A KazooClient for ``host:port[,host:port][/chroot]``; pass a gevent handler for gevent programs.
    ``credentials`` (``user:password``) log the session in with the digest scheme; ``secure_acls`` creates
    znodes with Kafka's secure ACLs (``zk.acls``)."""
    from kazoo.handlers.threading import SequentialThreadingHandler

    handler = handler if handler is not None else SequentialThreadingHandler()
    # kazoo's default reconnect back-off doubles up to an hour: after a ZooKeeper outage a client could
    # wait past its session timeout before trying again and lose its session. Retry every second at most.
    connection_retry = {
        "max_tries": -1,
        "delay": 0.1,
        "backoff": 2,
        "max_delay": 1.0,
        "sleep_func": handler.sleep_func,
    }
    auth_data = [("digest", credentials)] if credentials else None
    acls = {"acls": lambda path: default_acls(path, True)} if secure_acls else {}
    client = (AclKazooClient if secure_acls else KazooClient)(
        hosts=connect,
        timeout=session_timeout_ms / 1000.0,
        handler=handler,
        connection_retry=connection_retry,
        auth_data=auth_data,
        **acls,
    )
    client._zkafka_connection_timeout = (connection_timeout_ms or session_timeout_ms) / 1000.0
    client._zkafka_connect = connect
    return client


def start_zk_client(client: KazooClient, create_chroot: bool = True) -> KazooClient:
    """Connect, waiting at most the connection timeout, and make sure a chroot in the connect string exists.

    Read-only tools pass ``create_chroot=False`` so that a mistyped chroot is not created. No connection
    within the timeout raises ZooKeeperUnreachableError naming the connect string (kazoo has stopped the client).
    """
    timeout = getattr(client, "_zkafka_connection_timeout", 15.0)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "No chroot path exists", UserWarning)  # created just below
        try:
            client.start(timeout=timeout)
        except client.handler.timeout_exception:
            connect = getattr(client, "_zkafka_connect", None) or _connect_string(client)
            raise ZooKeeperUnreachableError(
                f"cannot connect to ZooKeeper at {connect} within {timeout:g}s"
            ) from None
    if client.chroot and create_chroot:
        chroot, client.chroot = client.chroot, ""
        try:
            client.ensure_path(chroot)
        finally:
            client.chroot = chroot
    return client


def _connect_string(client: KazooClient) -> str:
    return ",".join(f"{host}:{port}" for host, port in client.hosts) + (client.chroot or "")


def gevent_handler():
    """kazoo's gevent handler (imported lazily, so thread-based tools do not pull in gevent) whose ``select``
    first asks the kernel without waiting.

    kazoo's connection loop selects before every send and every read, one request or answer at a time, and
    the gevent handler's select builds a gevent selector (watchers, a timeout, a trip through the hub) each
    time: ~0.3 ms per pipelined request, so ten pipelined reads cost almost as much as ten round trips. A
    socket already readable or writable is answered by one non-blocking ``poll``; only a wait goes to gevent.
    """
    from kazoo.handlers.gevent import SequentialGeventHandler

    class GeventHandler(SequentialGeventHandler):
        def select(self, rlist, wlist, xlist, timeout=None):
            ready = _ready_now(rlist, wlist)
            return ready if ready is not None else super().select(rlist, wlist, xlist, timeout)

    return GeventHandler()


def _ready_now(rlist: list, wlist: list) -> tuple[list, list, list] | None:
    """What of ``rlist``/``wlist`` is readable/writable now, as ``select`` answers; None when nothing is yet
    (or a descriptor is invalid: the real select says how; or a monkey-patched ``select`` has no ``poll``)."""
    if not hasattr(select, "poll"):
        return None
    poller = select.poll()
    wanted: dict[int, int] = {}
    for objects, mask in ((rlist, select.POLLIN), (wlist, select.POLLOUT)):
        for obj in objects:
            wanted[_fd(obj)] = wanted.get(_fd(obj), 0) | mask
    for fd, mask in wanted.items():
        poller.register(fd, mask)
    events = dict(poller.poll(0))
    if not events or any(event & select.POLLNVAL for event in events.values()):
        return None
    failed = select.POLLHUP | select.POLLERR  # select reports these as ready for what was asked
    readable = [o for o in rlist if events.get(_fd(o), 0) & (select.POLLIN | failed)]
    writable = [o for o in wlist if events.get(_fd(o), 0) & (select.POLLOUT | failed)]
    return readable, writable, []


def _fd(obj) -> int:
    return obj if isinstance(obj, int) else obj.fileno()


def get_data(client: KazooClient, path: str) -> str | None:
    """The UTF-8 value of a znode, or None when it does not exist."""
    try:
        data, _ = client.get(path)
    except NoNodeError:
        return None
    return data.decode("utf-8")


def get_children(client: KazooClient, path: str) -> list[str]:
    """The children of a znode, or [] when it does not exist."""
    try:
        return client.get_children(path)
    except NoNodeError:
        return []


def update_persistent(client: KazooClient, path: str, value: str) -> None:
    """Write a persistent znode, creating it and its parents when missing."""
    data = value.encode("utf-8")
    try:
        client.set(path, data)
    except NoNodeError:
        try:
            client.create(path, data, makepath=True)
        except NodeExistsError:
            client.set(path, data)


def update_persistent_many(client: KazooClient, values: Mapping[str, str]) -> dict[str, Exception | None]:
    """Write several persistent znodes (path -> value) with pipelined sets, one round trip, creating the
    missing ones: each path's error, None where written."""
    pending = {path: client.set_async(path, value.encode("utf-8")) for path, value in values.items()}
    errors: dict[str, Exception | None] = {}
    for path, result in pending.items():
        try:
            try:
                result.get()
            except NoNodeError:
                update_persistent(client, path, values[path])
            errors[path] = None
        except Exception as exc:  # noqa: BLE001 - reported per path
            errors[path] = exc
    return errors


def session_id(client: KazooClient) -> int:
    return client.client_id[0] if client.client_id else 0


def create_ephemeral_expect_conflict(client: KazooClient, path: str, value: str) -> None:
    """Create an ephemeral znode (and its parents), tolerating our own earlier write.

    As in 0.7, an existing node holding exactly ``value`` counts as our write made during a connection loss.
    Better than 0.7, a node owned by this very session is ours whatever it holds (it gets the new value),
    and a node holding our value under an older session is replaced so that it does not vanish with that
    session. Any other node raises NodeExistsError: somebody else holds the path.
    """
    data = value.encode("utf-8")
    try:
        client.create(path, data, ephemeral=True, makepath=True)
        return
    except NodeExistsError:
        pass
    try:
        stored, stat = client.get(path)
    except NoNodeError:  # vanished in between: its owner's session just ended
        client.create(path, data, ephemeral=True, makepath=True)
        return
    if stat.ephemeralOwner == session_id(client):
        if stored != data:
            client.set(path, data)
        return
    if stored == data:
        # Our value under another session: a previous session of ours that the server has not expired yet.
        # 0.7 took it as success and the node then vanished with that session; take it over instead.
        log.info("%s holds our value under old session 0x%x; replacing it", path, stat.ephemeralOwner)
        try:
            client.delete(path, version=stat.version)
        except NoNodeError:
            pass
        client.create(path, data, ephemeral=True, makepath=True)
        return
    raise NodeExistsError(f"{path} is held by session 0x{stat.ephemeralOwner:x} with value {stored!r}")


def delete_if_owned(client: KazooClient, path: str) -> bool:
    """Delete an ephemeral znode only if this session owns it; True when deleted."""
    try:
        _, stat = client.get(path)
        if stat.ephemeralOwner != session_id(client):
            return False
        client.delete(path, version=stat.version)
        return True
    except NoNodeError:
        return False


def replace_ephemerals_async(client: KazooClient, deletes: Mapping[str, int], creates: Mapping[str, str]):
    """Send one transaction that deletes ``deletes`` (path -> version) and then creates the ephemeral
    ``creates`` (path -> value), all or none; its async result (``committed`` reads it). Requests sent after
    it are answered after it: ZooKeeper serves a session's requests in order."""
    transaction = client.transaction()
    for path, version in deletes.items():
        transaction.delete(path, version=version)
    for path, value in creates.items():
        acl = client.acls(path) if isinstance(client, AclKazooClient) else None
        transaction.create(path, value.encode("utf-8"), acl=acl, ephemeral=True)
    return transaction.commit_async()


def delete_owned(client: KazooClient, paths: Iterable[str]) -> list[str]:
    """Delete those of ``paths`` this session owns (ephemeral), in one transaction at the versions one
    pipelined read found; one at a time if a node changed in between. The paths deleted."""
    me = session_id(client)
    reads = [(path, client.exists_async(path)) for path in paths]
    owned = {path: stat.version for path, read in reads if (stat := read.get()) and stat.ephemeralOwner == me}
    if not owned or delete_versions(client, owned):
        return list(owned)
    return [path for path in owned if delete_if_owned(client, path)]


def delete_versions(client: KazooClient, versions: Mapping[str, int]) -> bool:
    """Delete znodes at these versions (path -> version) in one transaction: whether it committed."""
    return first_failure(versions, replace_ephemerals_async(client, versions, {}).get()) is None


def first_failure(paths: Iterable[str], results: list) -> tuple[str, Exception] | None:
    """The operation that failed a transaction on ``paths`` (in the order of its operations; the others were
    rolled back), or None if it committed."""
    for path, result in zip(paths, results, strict=True):
        if isinstance(result, Exception) and not isinstance(result, (RolledBackError, RuntimeInconsistency)):
            return path, result
    return None

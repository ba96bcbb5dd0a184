"""Run a real Apache ZooKeeper server as a child process, for tests and local clusters."""

from __future__ import annotations

import atexit
import glob
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from zkafka.utils.process import STOP_SIGNALS, die_with_parent

if TYPE_CHECKING:
    from kazoo.client import KazooClient

SERVER_MAIN = "org.apache.zookeeper.server.ZooKeeperServerMain"
QUORUM_MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain"  # an ensemble member (server.N lines)
DEBIAN_JAR_DIR = "/usr/share/java"
INSTALL_HINT = "install it with `apt-get install -y zookeeper` or set ZOOKEEPER_HOME to an unpacked release"
LOG_FILE = "zookeeper.log"
CONFIG_FILE = "zoo.cfg"
MYID_FILE = "myid"

# Small heap, one GC thread and the C1 compiler only: the server starts in about 0.3 s.
JVM_FLAGS = [
    "-Xmx256m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-XX:-UsePerfData",
    "-Djava.net.preferIPv4Stack=true",
    "-Djava.awt.headless=true",
]


class ZooKeeperNotFound(RuntimeError):
    """No ZooKeeper install (or no java) could be found on this machine."""


class ZooKeeperError(RuntimeError):
    """The ZooKeeper child process failed to start or to answer."""


def find_java() -> str:
    """Path of the java launcher: $JAVA_HOME/bin/java, else java on PATH."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and os.access(os.path.join(java_home, "bin", "java"), os.X_OK):
        return os.path.join(java_home, "bin", "java")
    java = shutil.which("java")
    if java is None:
        raise ZooKeeperNotFound(f"no java found (set JAVA_HOME or put java on PATH); {INSTALL_HINT}")
    return java


def find_zookeeper_classpath() -> str:
    """Class path for the ZooKeeper server: $ZOOKEEPER_HOME if set, else Debian's zookeeper package."""
    home = os.environ.get("ZOOKEEPER_HOME")
    if home:
        jars = sorted(glob.glob(os.path.join(home, "zookeeper*.jar")))
        jars += sorted(glob.glob(os.path.join(home, "lib", "*.jar")))
        if not jars:
            raise ZooKeeperNotFound(
                f"ZOOKEEPER_HOME={home} holds no zookeeper*.jar or lib/*.jar; {INSTALL_HINT}"
            )
        conf = os.path.join(home, "conf")
        return os.pathsep.join(([conf] if os.path.isdir(conf) else []) + jars)

    # Debian: the jar's manifest Class-Path names its dependencies in /usr/share/java, but no slf4j
    # binding, so add slf4j-simple (logs to stderr, which goes to the log file) when it is there.
    server_jar = os.path.join(DEBIAN_JAR_DIR, "zookeeper.jar")
    if not os.path.isfile(server_jar):
        raise ZooKeeperNotFound(f"ZooKeeper not found; {INSTALL_HINT}")
    jars = [server_jar]
    binding = os.path.join(DEBIAN_JAR_DIR, "slf4j-simple.jar")
    if os.path.isfile(binding):
        jars.append(binding)
    return os.pathsep.join(jars)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port on host that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def four_letter_word(host: str, port: int, cmd: str, timeout: float = 2.0) -> str:
    """Send a four-letter command (ruok, srvr, mntr, ...) and return the server's whole answer."""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(cmd.encode("ascii"))
        chunks = []
        while True:
            chunk = sock.recv(4096)
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace")


def is_serving(host: str, port: int) -> bool:
    """True when the server answers ruok with imok and srvr reports its mode."""
    try:
        if four_letter_word(host, port, "ruok", timeout=1.0) != "imok":
            return False
        return "Mode:" in four_letter_word(host, port, "srvr", timeout=1.0)
    except OSError:
        return False


def _poll(condition: Callable[[], bool], timeout: float, interval: float = 0.02) -> bool:
    """Call condition until it is true or timeout seconds have passed."""
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


def quorum_servers(settings: dict[str, Any]) -> dict[int, str]:
    """The ensemble's ``server.N=host:quorumPort:electionPort`` lines of a zoo.cfg, by id (empty: standalone)."""
    servers = {}
    for key, value in settings.items():
        if key.startswith("server.") and key[len("server.") :].isdigit():
            servers[int(key[len("server.") :])] = str(value)
    return servers


def read_myid(data_dir: str) -> int | None:
    """The server id in ``data_dir/myid``, or None when there is no such file."""
    try:
        with open(os.path.join(data_dir, MYID_FILE)) as f:
            return int(f.read().strip())
    except FileNotFoundError:
        return None


class ZooKeeperServer:
    """A ZooKeeper server running as a child java process, with its config and log in data_dir: standalone, or
    a member of an ensemble when extra holds ``server.N`` lines (then myid, when given, is written to
    ``data_dir/myid`` as zookeeper-server-start.sh users do by hand).

    port 0 picks a free port. Session timeouts default to 2 ticks (min) and max(20 ticks, 60 s) (max),
    so a small tick_time lets tests use short sessions while clients asking for 10 s still get them.
    """

    def __init__(
        self,
        data_dir: str,
        port: int = 0,
        host: str = "127.0.0.1",
        tick_time: int = 2000,
        min_session_timeout_ms: int | None = None,
        max_session_timeout_ms: int | None = None,
        extra: dict[str, Any] | None = None,
        die_with_parent: bool = False,
        myid: int | None = None,
    ) -> None:
        self.myid = myid
        self.data_dir = os.path.abspath(data_dir)
        self.die_with_parent = die_with_parent  # the java process is killed when this one dies
        self.host = host
        self.tick_time = tick_time
        self.min_session_timeout_ms = min_session_timeout_ms or 2 * tick_time
        self.max_session_timeout_ms = max_session_timeout_ms or max(20 * tick_time, 60000)
        self.extra = dict(extra or {})
        self._auto_port = port == 0
        self.port = port or free_port(host)
        self.process: subprocess.Popen[bytes] | None = None
        self.start_seconds: float | None = None
        self.config_path = os.path.join(self.data_dir, CONFIG_FILE)
        self.log_path = os.path.join(self.data_dir, LOG_FILE)

    @property
    def connect_string(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def is_running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def config(self) -> dict[str, Any]:
        """The zoo.cfg settings; extra overrides the defaults."""
        settings: dict[str, Any] = {
            "tickTime": self.tick_time,
            "dataDir": self.data_dir,
            "clientPort": self.port,
            "clientPortAddress": self.host,
            "maxClientCnxns": 0,
            "minSessionTimeout": self.min_session_timeout_ms,
            "maxSessionTimeout": self.max_session_timeout_ms,
            "admin.enableServer": "false",
            "4lw.commands.whitelist": "*",
            # A throwaway server: small preallocated txn logs and no fsync per commit.
            "preAllocSize": 1024,
            "forceSync": "no",
            "autopurge.purgeInterval": 0,
        }
        if quorum_servers(self.extra):
            # A follower has initLimit ticks to sync with a new leader, syncLimit ticks between heartbeats.
            settings.update({"initLimit": 10, "syncLimit": 5})
        settings.update(self.extra)
        return settings

    def write_config(self) -> None:
        os.makedirs(self.data_dir, exist_ok=True)
        if self.myid is not None:
            with open(os.path.join(self.data_dir, MYID_FILE), "w") as f:
                f.write(f"{self.myid}\n")
        lines = [f"{key}={value}" for key, value in self.config().items()]
        with open(self.config_path, "w") as f:
            f.write("\n".join(lines) + "\n")

    def command(self) -> list[str]:
        """The java command line that runs this server."""
        log_props = [
            # slf4j-simple (Debian): everything at INFO to stderr, which is redirected to the log file.
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
            "-Dorg.slf4j.simpleLogger.showDateTime=true",
            "-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd HH:mm:ss.SSS",
            # log4j / logback configs shipped in a release's conf/ log to the console by default.
            f"-Dzookeeper.log.dir={self.data_dir}",
            "-Dzookeeper.console.threshold=INFO",
            "-Dzookeeper.jmx.log4j.disable=true",
        ]
        cp = find_zookeeper_classpath()
        main = QUORUM_MAIN if quorum_servers(self.extra) else SERVER_MAIN
        return [find_java(), *JVM_FLAGS, *log_props, "-cp", cp, main, self.config_path]

    def start(self, timeout: float = 30.0, wait: bool = True) -> ZooKeeperServer:
        """Launch the server and wait until it serves requests; raise ZooKeeperError if it does not.

        wait=False: only launch (an ensemble member serves once a quorum of its peers has started too).
        """
        if self.is_running():
            return self
        attempts = 3 if self._auto_port else 1
        for attempt in range(attempts):
            try:
                self._launch(timeout, wait)
                return self
            except ZooKeeperError:
                # Another process may have taken the free port between free_port() and bind.
                if attempt + 1 == attempts or "Address already in use" not in self.log_tail():
                    raise
                self.port = free_port(self.host)
        return self

    def _launch(self, timeout: float, wait: bool = True) -> None:
        self.write_config()
        cmd = self.command()
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.data_dir,
                start_new_session=True,
                preexec_fn=die_with_parent() if self.die_with_parent else None,
            )
        atexit.register(self.stop)
        if not wait:
            return
        started = time.monotonic()
        if not _poll(lambda: not self.is_running() or self.is_serving(), timeout):
            self.stop()
            raise ZooKeeperError(
                f"ZooKeeper did not serve on {self.connect_string} within {timeout:.0f}s; "
                f"log {self.log_path}:\n{self.log_tail()}"
            )
        if not self.is_running():
            code = self.process.returncode
            self.stop()
            raise ZooKeeperError(
                f"ZooKeeper exited with code {code}; log {self.log_path}:\n{self.log_tail()}"
            )
        self.start_seconds = time.monotonic() - started

    def is_serving(self) -> bool:
        return is_serving(self.host, self.port)

    def log_tail(self, lines: int = 30) -> str:
        try:
            with open(self.log_path, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    def stop(self, timeout: float = 10.0, signum: int = signal.SIGTERM) -> None:
        """Stop this server's process only: signum (SIGKILL for a crash), then SIGKILL after timeout seconds."""
        process, self.process = self.process, None
        atexit.unregister(self.stop)
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(signum)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def run_foreground(self, timeout: float = 30.0) -> int:
        """Start the server and block until it exits; Ctrl-C, SIGTERM or SIGHUP stop it cleanly (and it dies with
        this process if that is killed). Returns its exit code."""
        stopping = False

        def on_signal(signum: int, frame: Any) -> None:
            nonlocal stopping
            stopping = True

        self.die_with_parent = True
        previous = {sig: signal.signal(sig, on_signal) for sig in STOP_SIGNALS}
        try:
            self.start(timeout, wait=not quorum_servers(self.extra))  # a member waits for its peers
            process = self.process
            assert process is not None
            while not stopping and process.poll() is None:
                time.sleep(0.2)
            return 0 if stopping else process.returncode
        finally:
            self.stop()
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def __enter__(self) -> ZooKeeperServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"ZooKeeperServer({self.connect_string}, pid={self.pid}, data_dir={self.data_dir!r})"


def expire_session(
    client_or_session: KazooClient | tuple[int, bytes],
    connect_string: str,
    timeout: float = 10.0,
) -> None:
    """Expire a ZooKeeper session on the server, as if its client had gone silent for too long.

    A second connection attaches to the same session id and password and closes it; the server then
    deletes the session's ephemeral nodes and the original client is told its session expired.
    Given a KazooClient, wait until it has seen KazooState.LOST (retrying if it won the race to reattach).
    """
    from kazoo.client import KazooState

    if isinstance(client_or_session, tuple):
        _close_session(client_or_session, connect_string, timeout)
        return

    client = client_or_session
    session = client.client_id
    if session is None:
        raise ZooKeeperError("client has no session to expire")
    lost = client.handler.event_object()

    def on_state(state: str) -> bool:
        if state == KazooState.LOST:
            lost.set()
            return True
        return False

    client.add_listener(on_state)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            _close_session(session, connect_string, timeout)
            if lost.wait(min(2.0, max(0.1, deadline - time.monotonic()))):
                return
        raise ZooKeeperError(f"session 0x{session[0]:x} was not expired within {timeout:.0f}s")
    finally:
        client.remove_listener(on_state)


def _close_session(session: tuple[int, bytes], connect_string: str, timeout: float) -> None:
    """Attach to session from a fresh connection and close it."""
    from kazoo.client import KazooClient

    twin = KazooClient(hosts=connect_string, client_id=session, timeout=timeout)
    try:
        twin.start(timeout=timeout)
    finally:
        twin.stop()
        twin.close()

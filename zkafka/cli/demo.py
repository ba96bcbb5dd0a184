"""``zkafka demo``: a whole local cluster with a live view, to watch the 0.7 design at work."""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import NamedTuple

import click

from zkafka.cli.command import Context, configure_logging, main
from zkafka.utils.process import STOP_SIGNALS

KEYS = (
    "keys: [a] add consumer  [c] stop a consumer  [k] stop a broker  [r] start a broker  "
    "[p] pause/resume producer  [q] quit"
)
KEY_ACTIONS = {"a": "add-consumer", "c": "stop-consumer", "k": "stop-broker", "r": "start-broker"}
KEYS08 = KEYS.replace("stop a broker", "kill a leader")
KEY_ACTIONS08 = {**KEY_ACTIONS, "k": "kill-leader"}


def parse_action(value: str) -> tuple[float, str]:
    at, sep, action = value.partition(":")
    try:
        seconds = float(at)
    except ValueError:
        seconds = -1.0
    if not sep or seconds < 0:
        raise click.BadParameter(f"{value!r} is not SECONDS:ACTION")
    from zkafka.demo07 import ACTIONS
    from zkafka.demo08 import ACTIONS08

    if action not in ACTIONS + ACTIONS08:
        known = ", ".join(dict.fromkeys(ACTIONS + ACTIONS08))
        raise click.BadParameter(f"unknown action {action!r} (one of {known})")
    return seconds, action


@main.command("demo")
@click.option(
    "--line",
    type=click.Choice(["0.7", "0.8"]),
    default="0.7",
    show_default=True,
    help="0.8: 3 replicating brokers, a topic with RF 3, eager and cooperative coordinator groups beside a ZooKeeper group.",
)
@click.option("--brokers", default=None, type=click.IntRange(1, 9), help="[default: 2; 3 on 0.8]")
@click.option(
    "--partitions",
    default=None,
    type=click.IntRange(1, 64),
    help="Per topic per broker on 0.7 [default: 2]; of the topic on 0.8 [default: 4].",
)
@click.option(
    "--consumers", default=2, show_default=True, type=click.IntRange(0, 32), help="Members of the group."
)
@click.option("--rate", default=20.0, show_default=True, help="Messages per second from the keyed producer.")
@click.option("--duration", default=None, type=float, help="Stop by itself after this many seconds.")
@click.option("--no-ui", is_flag=True, help="Print the facts as plain lines instead of a live view.")
@click.option("--interval", default=1.0, show_default=True, help="Seconds between refreshes.")
@click.option("--keep", is_flag=True, help="Keep the temporary directory (logs, ZooKeeper data).")
@click.option(
    "--action",
    "actions",
    multiple=True,
    metavar="SECONDS:ACTION",
    help="Scripted action, e.g. 10:stop-consumer (add-consumer, stop-consumer, stop-broker, start-broker, "
    "pause-producer, resume-producer; kill-leader on 0.8, which has no stop-broker).",
)
@click.option(
    "--actions-from-stdin",
    is_flag=True,
    help="Also take actions from stdin, one name a line (or quit), for scripts that act on what they see.",
)
@click.option("--web", is_flag=True, help="Also serve the live web view (zkafka ui) of the demo cluster.")
@click.option(
    "--web-port", default=8080, show_default=True, type=click.IntRange(0, 65535), help="0: any free port."
)
def demo(
    line,
    brokers,
    partitions,
    consumers,
    rate,
    duration,
    no_ui,
    interval,
    keep,
    actions,
    actions_from_stdin,
    web,
    web_port,
) -> None:
    """Start ZooKeeper, brokers, a keyed producer and a consumer group on loopback, and show them live."""
    import gevent

    from zkafka.demo07 import DemoCluster07
    from zkafka.demo08 import DemoCluster08

    configure_logging(Context.verbose, level=logging.ERROR)
    script = sorted(parse_action(a) for a in actions)
    ui = not no_ui and sys.stdout.isatty()
    on08 = line == "0.8"
    controls = _controls(line, script)
    sizes = {"brokers": brokers or (3 if on08 else 2), "partitions": partitions or (4 if on08 else 2)}
    cluster = (DemoCluster08 if on08 else DemoCluster07)(**sizes, consumers=consumers, rate=rate)
    stopping = []
    for signum in STOP_SIGNALS:
        gevent.signal_handler(signum, stopping.append, signum)
    keys = _Keys() if ui else _Lines() if actions_from_stdin else None
    web_view = web_server = None
    try:
        cluster.start(progress=lambda line: click.echo(line, err=True))
        if web:
            web_view, web_server = _serve_web(cluster, web_port, controls.known)
        view = partial(_view, cluster, on08)
        _watch(cluster, view, script, controls, keys, stopping, ui=ui, duration=duration, interval=interval)
    finally:
        if web_server is not None:
            web_server.stop(timeout=1)
            web_view.close()
        if keys:
            keys.restore()
        _stop(cluster, keep)


class _Controls(NamedTuple):
    """The actions of a line's demo, the keys that trigger them, and the keys' help line."""

    known: tuple[str, ...]
    key_actions: dict[str, str]
    keys_help: str


def _controls(line: str, script: list[tuple[float, str]]) -> _Controls:
    """The controls of the ``line`` demo; a scripted action it does not have is a BadParameter."""
    from zkafka.demo07 import ACTIONS
    from zkafka.demo08 import ACTIONS08

    controls = (
        _Controls(ACTIONS08, KEY_ACTIONS08, KEYS08)
        if line == "0.8"
        else _Controls(ACTIONS, KEY_ACTIONS, KEYS)
    )
    unknown = [action for _, action in script if action not in controls.known]
    if unknown:
        raise click.BadParameter(f"{unknown[0]} is not an action of the {line} demo", param_hint="--action")
    return controls


def _view(cluster, on08: bool) -> list[str]:
    """The lines the demo shows: the cluster's facts as the line's view renders them."""
    from zkafka.demo07 import render
    from zkafka.demo08 import render08

    if on08:
        return render08(cluster.snapshot08(), cluster.topic, cluster.group, cluster.coordinator_group)
    return render(cluster.snapshot(), cluster.group)


def _watch(
    cluster,
    view: Callable[[], list[str]],
    script: list[tuple[float, str]],
    controls: _Controls,
    keys: _Keys | _Lines | None,
    stopping: list[int],
    *,
    ui: bool,
    duration: float | None,
    interval: float,
) -> None:
    """Show the view every ``interval`` seconds, doing the scripted actions when due and what keys (or stdin
    lines) ask, until quit, a signal or ``duration``."""
    import gevent

    began = time.monotonic()
    while not stopping:
        elapsed = time.monotonic() - began
        while script and script[0][0] <= elapsed:
            cluster.act(script.pop(0)[1])
        lines = view()
        if ui:
            click.echo("\x1b[H\x1b[2J" + "\n".join(lines) + f"\n\n{controls.keys_help}", nl=True)
        else:
            click.echo("\n".join(lines) + "\n")
        if duration is not None and elapsed >= duration:
            break
        key = keys.read(interval) if keys else gevent.sleep(interval)
        if key in ("q", "quit"):
            break
        _act(cluster, key, controls)


def _act(cluster, key: str | None, controls: _Controls) -> None:
    """Do what a key press (or an action name from stdin) asks."""
    if key == "p":
        cluster.act("resume-producer" if cluster.paused else "pause-producer")
    elif key in controls.key_actions:
        cluster.act(controls.key_actions[key])
    elif key in controls.known:
        cluster.act(key)
    elif key:
        click.echo(f"demo: unknown action {key!r}", err=True)


def _stop(cluster, keep: bool) -> None:
    """Close the demo cluster (``keep``: its files stay) and say what it produced and consumed."""
    click.echo("stopping the demo cluster...", err=True)
    consumed = sum(c.consumed for c in cluster.consumers) + sum(cluster._stopped_consumers.values())
    cluster.close(keep=keep)
    where = f"; files kept in {cluster.root}" if keep else ""
    click.echo(f"demo finished: produced {cluster.produced}, consumed {consumed}{where}", err=True)


def _serve_web(cluster, port: int, actions: tuple[str, ...]):
    """The web view of the demo cluster, its buttons wired to the demo's actions; opened in a browser when
    there is a display. On the 0.8 line the view also asks a running broker about coordinator groups."""
    import webbrowser

    from zkafka.consumer.group.coordinator_groups import CoordinatorGroups
    from zkafka.ui.server import ClusterView, serve

    bootstrap = getattr(cluster, "bootstrap", None)

    def act(name: str) -> None:
        cluster.act(name)
        if bootstrap is not None:  # a killed broker may have been the view's bootstrap server
            view.coordinator = CoordinatorGroups(bootstrap().split(",")[0])

    view = ClusterView(
        cluster.zookeeper.connect_string,
        bootstrap=bootstrap().split(",")[0] if bootstrap is not None else None,
        actions={name: partial(act, name) for name in actions},
        extra=lambda: {"produced": cluster.produced, "paused": cluster.paused},
        request_logs=getattr(cluster, "request_logs", None),
    )
    view.start()
    server = serve(view, port)
    url = f"http://127.0.0.1:{server.server_port}/"
    click.echo(f"web view: {url}", err=True)
    if os.environ.get("DISPLAY") or sys.platform == "darwin":
        webbrowser.open(url)
    return view, server


def _readable(fd: int, timeout: float) -> bool:
    """Wait up to ``timeout`` for ``fd`` to be readable, on the gevent hub (an I/O watcher: unlike select(),
    any descriptor number works, however many files the process has open)."""
    from gevent.socket import wait_read

    try:
        wait_read(fd, timeout=timeout)
    except TimeoutError:
        return False
    return True


class _Keys:
    """Single key presses from the terminal, read without blocking the gevent hub."""

    def __init__(self) -> None:
        import termios
        import tty

        self.fd = sys.stdin.fileno()
        self.saved = termios.tcgetattr(self.fd)
        tty.setcbreak(self.fd)

    def read(self, timeout: float) -> str | None:
        ready = _readable(self.fd, timeout)
        return os.read(self.fd, 16).decode(errors="ignore")[:1].lower() if ready else None

    def restore(self) -> None:
        import termios

        termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)


class _Lines:
    """Action names from stdin, one a line, read without blocking the gevent hub (``--actions-from-stdin``)."""

    def __init__(self) -> None:
        self.fd = sys.stdin.fileno()
        self.partial = b""
        self.pending: list[str] = []
        self.closed = False

    def read(self, timeout: float) -> str | None:
        import gevent

        if not self.pending and self.closed:
            gevent.sleep(timeout)
        elif not self.pending and _readable(self.fd, timeout):
            data = os.read(self.fd, 4096)
            self.closed = not data
            *lines, self.partial = (self.partial + data).split(b"\n")
            self.pending += [line.decode(errors="replace").strip() for line in lines if line.strip()]
        return self.pending.pop(0) if self.pending else None

    def restore(self) -> None:
        pass

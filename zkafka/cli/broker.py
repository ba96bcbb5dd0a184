"""``zkafka broker start``, ``zkafka zookeeper start`` and ``zkafka dump-log-segments``."""

from __future__ import annotations

import signal
import sys

import click

from zkafka.cli import Context, configure_logging, friendly_errors, main


@main.group()
def broker() -> None:
    """Run a broker."""


@broker.command("start")
@click.argument("properties", type=click.Path(exists=True, dir_okay=False))
@click.option("--override", "overrides", multiple=True, metavar="KEY=VALUE", help="Override a property.")
@friendly_errors
def broker_start(properties: str, overrides: tuple[str, ...]) -> None:
    """Start a broker from a server.properties file of either line (0.7 or 0.8, told apart by its keys).

    Runs until SIGTERM or Ctrl-C.
    """
    import gevent

    from zkafka.broker.start import broker_id, start_broker
    from zkafka.config import parse_overrides
    from zkafka.config08 import load_broker_config

    configure_logging(Context.verbose)
    config = load_broker_config(properties, parse_overrides(overrides))
    server = start_broker(config)
    for signum in (signal.SIGTERM, signal.SIGINT):
        gevent.signal_handler(signum, gevent.spawn, server.shutdown)
    click.echo(f"zkafka broker {broker_id(config)} listening on port {server.port}", err=True)
    server.await_shutdown()


@main.group()
def zookeeper() -> None:
    """Run a local Apache ZooKeeper."""


@zookeeper.command("start")
@click.argument("properties", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--port", type=int, default=None, help="Client port (default: clientPort of the file, or 2181)."
)
@click.option(
    "--data-dir", default=None, help="Data directory (default: dataDir of the file, or /tmp/zookeeper)."
)
@friendly_errors
def zookeeper_start(properties: str | None, port: int | None, data_dir: str | None) -> None:
    """Run a real Apache ZooKeeper in the foreground (Debian's package or $ZOOKEEPER_HOME)."""
    from zkafka.config import load_properties
    from zkafka.launch.zookeeper_server import ZooKeeperServer

    props = load_properties(properties) if properties else {}
    port = port if port is not None else int(props.get("clientPort", 2181))
    data_dir = data_dir or props.get("dataDir", "/tmp/zookeeper")
    server = ZooKeeperServer(data_dir, port=port)
    click.echo(f"starting ZooKeeper on 127.0.0.1:{port} with data in {data_dir}", err=True)
    sys.exit(server.run_foreground())


@main.command("dump-log-segments")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--deep", is_flag=True, help="Also list the messages inside compressed wrappers.")
@click.option("--noprint", is_flag=True, help="Do not print payloads.")
@friendly_errors
def dump_log_segments(files: tuple[str, ...], deep: bool, noprint: bool) -> None:
    """Print each message of segment files; exit 1 if any file is damaged (and say where)."""
    from zkafka.tools.dump_log_segments import dump_segment

    reports = [dump_segment(path, click.echo, deep=deep, print_payload=not noprint) for path in files]
    damaged = [r for r in reports if not r.valid]
    for report in damaged:
        click.echo(f"zkafka: {report.path}: {report.problem}", err=True)
    sys.exit(1 if damaged else 0)

"""``zkafka broker start``, ``zkafka zookeeper start`` and ``zkafka dump-log-segments``."""

from __future__ import annotations

import sys

import click

from zkafka.cli.command import Context, configure_logging, main
from zkafka.utils.process import STOP_SIGNALS


@main.group()
def broker() -> None:
    """Run a broker."""


@broker.command("start")
@click.argument("properties", type=click.Path(exists=True, dir_okay=False))
@click.option("--override", "overrides", multiple=True, metavar="KEY=VALUE", help="Override a property.")
def broker_start(properties: str, overrides: tuple[str, ...]) -> None:
    """Start a broker from a server.properties file of either line (0.7 or 0.8, told apart by its keys).

    Runs until SIGTERM, SIGHUP or Ctrl-C (each a clean shutdown).
    """
    import gevent

    from zkafka.config import parse_overrides
    from zkafka.server.start import broker_id, load_broker_config, start_broker

    configure_logging(Context.verbose)
    config = load_broker_config(properties, parse_overrides(overrides))
    server = start_broker(config)
    for signum in STOP_SIGNALS:
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
@click.option(
    "--myid", type=click.IntRange(1), default=None, help="An ensemble member's id, written to dataDir/myid."
)
def zookeeper_start(properties: str | None, port: int | None, data_dir: str | None, myid: int | None) -> None:
    """Run a real Apache ZooKeeper in the foreground (Debian's package or $ZOOKEEPER_HOME).

    A file with server.N=host:2888:3888 lines starts a member of that ensemble; its id is read from the
    myid file in dataDir (or given with --myid). The file's other settings are passed on as they are.
    """
    from zkafka.config import load_properties
    from zkafka.launch.zookeeper_server import ZooKeeperServer, quorum_servers, read_myid

    props = load_properties(properties) if properties else {}
    port = port if port is not None else int(props.pop("clientPort", 2181))
    data_dir = data_dir or props.pop("dataDir", "/tmp/zookeeper")
    props.pop("clientPort", None)
    props.pop("dataDir", None)
    servers = quorum_servers(props)
    if servers:
        member = myid if myid is not None else read_myid(data_dir)
        if member is None:
            raise click.UsageError(f"{properties} lists an ensemble but {data_dir}/myid is missing (or give --myid)")
        if member not in servers:
            raise click.UsageError(f"myid {member} has no server.{member} line in {properties}")
    # Standalone: the client port on 127.0.0.1 unless the file says; an ensemble member: every address.
    host = props.pop("clientPortAddress", "0.0.0.0" if servers else "127.0.0.1")
    # A user's server syncs every commit and preallocates as Apache's defaults do (tests' servers do not).
    extra = {"forceSync": "yes", "preAllocSize": 65536, **props}
    server = ZooKeeperServer(data_dir, port=port, host=host, extra=extra, myid=myid)
    role = f"member {member} of an ensemble of {len(servers)}" if servers else "standalone"
    click.echo(f"starting ZooKeeper ({role}) on {host}:{port} with data in {data_dir}", err=True)
    sys.exit(server.run_foreground())


@main.command("dump-log-segments")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--files", metavar="F1,F2,...", help="Comma-separated files to dump (0.8's form of the arguments)."
)
@click.option(
    "--deep", "--deep-iteration", "deep", is_flag=True, help="Also list the messages inside wrappers."
)
@click.option("--noprint", is_flag=True, help="0.7 .kafka files: do not print payloads.")
@click.option("--print-data-log", is_flag=True, help="0.8 .log files: print keys and payloads.")
@click.option("--verify-index-only", is_flag=True, help="0.8 .index files: check the entries, print none.")
@click.option(
    "--max-message-size",
    type=click.IntRange(1),
    default=5 * 1024 * 1024,
    show_default=True,
    help="0.8 .index files: bytes of the log read at each entry.",
)
def dump_log_segments(
    paths: tuple[str, ...],
    files: str | None,
    deep: bool,
    noprint: bool,
    print_data_log: bool,
    verify_index_only: bool,
    max_message_size: int,
) -> None:
    """Print each message of segment files: 0.7 .kafka, 0.8 .log (offset, position, key size; keys and
    payloads with --print-data-log; record batches as Kafka 2.x prints them), 0.8 .index (offset, position,
    checked against the .log) and .timeindex (timestamp, offset).

    Exit 1 if any file is damaged: a CRC failure, bytes after the last whole entry, an index entry that does
    not match its log, non-consecutive offsets (saying what and where on standard error).
    """
    from zkafka.tools.dump_log_segments import dump_index, dump_log08, dump_segment, dump_time_index

    targets = list(paths) + [f.strip() for f in (files or "").split(",") if f.strip()]
    if not targets:
        raise click.UsageError("give the files to dump (arguments or --files)")
    damaged = 0
    for path in targets:
        if path.endswith(".log"):
            report = dump_log08(path, click.echo, deep=deep, print_data=print_data_log)
        elif path.endswith(".timeindex"):
            report = dump_time_index(path, click.echo)
        elif path.endswith(".index"):
            report = dump_index(
                path, click.echo, verify_only=verify_index_only, max_message_size=max_message_size
            )
        else:
            report = dump_segment(path, click.echo, deep=deep, print_payload=not noprint)
            if not report.valid:
                click.echo(f"zkafka: {report.path}: {report.problem}", err=True)
                damaged += 1
            continue
        for line in report.complaints():
            click.echo(line, err=True)
        damaged += not report.valid
    sys.exit(1 if damaged else 0)

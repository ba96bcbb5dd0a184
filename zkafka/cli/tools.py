"""``zkafka offset-checker``, ``export-offsets``, ``import-offsets``, ``update-offsets``, ``zk-tree``,
``get-offsets`` and ``zookeeper-security-migration``."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import click

from zkafka.cli.command import (
    Context,
    ToolFailure,
    checked_topic,
    command_config_option,
    configure_logging,
    main,
    topic_lists_option,
)

if TYPE_CHECKING:
    from kazoo.client import KazooClient


def zookeeper_options(func=None, *, required: bool = True):
    """``--zookeeper`` (0.7's ``--zkconnect`` too) and ``--connection-timeout-ms``."""
    if func is None:
        return lambda f: zookeeper_options(f, required=required)
    func = click.option(
        "--connection-timeout-ms",
        type=click.IntRange(1),
        default=6000,
        show_default=True,
        help="Give up when ZooKeeper does not answer within this time.",
    )(func)
    return click.option(
        "--zookeeper",
        "--zkconnect",
        "zookeeper",
        required=required,
        metavar="HOST:PORT[/CHROOT]",
        help="ZooKeeper of the cluster.",
    )(func)


def socket_timeout_option(func):
    return click.option(
        "--socket-timeout-ms",
        type=click.IntRange(1),
        default=10000,
        show_default=True,
        help="Socket timeout for the brokers' OFFSETS answers.",
    )(func)


@contextmanager
def zk_session(
    connect: str, connection_timeout_ms: int, create_chroot: bool = False
) -> Iterator[KazooClient]:
    """A started kazoo client (threading handler), closed on exit; kazoo's retry chatter only under --verbose.
    A JAAS file in KAFKA_OPTS with a Client section logs it in and secures what it creates (``zk.acls``)."""
    from zkafka.zk.acls import tool_security
    from zkafka.zk.client import make_zk_client, start_zk_client

    configure_logging(Context.verbose, level=logging.WARNING)
    client = make_zk_client(connect, connection_timeout_ms=connection_timeout_ms, **tool_security())
    start_zk_client(client, create_chroot=create_chroot)
    try:
        yield client
    finally:
        client.stop()
        client.close()


def _err(line: str) -> None:
    click.echo(line, err=True)


def _progress_if_tty():
    return _err if sys.stderr.isatty() else None


def line_option(func):
    """``--line 0.7|0.8``: which line's layout and clients to use (default: what the cluster's ZooKeeper holds)."""
    return click.option(
        "--line",
        type=click.Choice(["0.7", "0.8"]),
        help="The cluster's line (default: told from its brokers' and consumers' znodes).",
    )(func)


@main.command("offset-checker", short_help="Offsets, log sizes and lag of a group.")
@zookeeper_options(required=False)
@click.option(
    "--bootstrap-server",
    metavar="HOST:PORT",
    help="Instead of --zookeeper: a broker; the group's offsets come from its coordinator (0.8.2's columns).",
)
@click.option("--group", required=True, help="Consumer group.")
@topic_lists_option("Topics to check (repeatable; default: those the group has offsets or owners for).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of the table.")
@click.option("--broker-info", is_flag=True, help="0.8: print the brokers after the table (0.7 always does).")
@line_option
@socket_timeout_option
def offset_checker(
    zookeeper: str | None,
    connection_timeout_ms: int,
    bootstrap_server: str | None,
    group: str,
    topics: tuple[str, ...],
    as_json: bool,
    broker_info: bool,
    line: str | None,
    socket_timeout_ms: int,
) -> None:
    """Committed offset, log size, lag and owner of every partition (ConsumerOffsetChecker).

    0.7 groups: by broker partition, byte offsets, totals per topic and the brokers. 0.8 groups: 0.8.2's
    ``Group Topic Pid Offset logSize Lag Owner`` lines, log sizes from each partition's leader. A partition
    whose broker is down or unreachable shows its log size and lag as unknown. With --bootstrap-server, a
    coordinator-managed group in 0.8.2's columns (the owner is the member holding the partition).
    """
    from zkafka.tools.offset_checker import split_topics
    from zkafka.tools.offset_checker07 import check_offsets, format_json, format_report
    from zkafka.zk.line import cluster_line
    from zkafka.zk.paths import CONSUMERS_PATH

    if (zookeeper is None) == (bootstrap_server is None):
        raise click.UsageError("give exactly one of --zookeeper and --bootstrap-server")
    if bootstrap_server is not None:
        from zkafka.tools.consumer_groups import describe_group
        from zkafka.tools.offset_checker08 import format_json08, format_report08

        configure_logging(Context.verbose, level=logging.WARNING)
        report = describe_group(
            bootstrap_server, group, split_topics(topics) or None, socket_timeout_ms
        ).offsets
        for text in [format_json08(report)] if as_json else format_report08(report, broker_info):
            click.echo(text)
        return

    with zk_session(zookeeper, connection_timeout_ms) as client:
        if not client.exists(f"{CONSUMERS_PATH}/{group}"):  # 0.8.2: "Exiting due to: ... NoNode ..."
            raise ToolFailure(f"group {group} has no offsets: no {CONSUMERS_PATH}/{group} in ZooKeeper")
        if (line or cluster_line(client, group)) == "0.8":
            from zkafka.tools.offset_checker08 import check_offsets08, format_json08, format_report08

            report = check_offsets08(
                client, group, split_topics(topics) or None, socket_timeout_ms, progress=_progress_if_tty()
            )
            lines = [format_json08(report)] if as_json else format_report08(report, broker_info)
        else:
            report = check_offsets(
                client, group, split_topics(topics) or None, socket_timeout_ms, progress=_progress_if_tty()
            )
            lines = [format_json(report)] if as_json else format_report(report)
    for text in lines:
        click.echo(text)


@main.command("export-offsets", short_help="Save committed offsets to a file.")
@zookeeper_options
@click.option("--group", "groups", multiple=True, help="Group to export (repeatable; default: every group).")
@click.option(
    "--output-file", required=True, type=click.File("w"), help="File to write ('-' for standard output)."
)
def export_offsets_command(
    zookeeper: str, connection_timeout_ms: int, groups: tuple[str, ...], output_file
) -> None:
    """Write the committed offsets as /consumers/<g>/offsets/<t>/<b-p>:<offset> lines (ExportZkOffsets)."""
    from zkafka.tools.zk_offsets import export_offsets, format_offset_file, groups_of

    with zk_session(zookeeper, connection_timeout_ms) as client:
        entries = export_offsets(client, groups, progress=_err)
    output_file.write(format_offset_file(entries))
    output_file.flush()
    _err(f"exported {len(entries)} offsets of {len(groups_of(entries))} groups")


@main.command("import-offsets", short_help="Load committed offsets from a file.")
@zookeeper_options
@click.option(
    "--input-file",
    required=True,
    type=click.File("r"),
    help="A file written by export-offsets ('-' for standard input).",
)
@click.option("--force", is_flag=True, help="Write even into groups that have live consumers.")
def import_offsets_command(zookeeper: str, connection_timeout_ms: int, input_file, force: bool) -> None:
    """Write every offset of the file into ZooKeeper (ImportZkOffsets).

    Refuses, before writing anything, when a group of the file has live consumers, unless --force.
    """
    from zkafka.tools.zk_offsets import groups_of, import_offsets, parse_offset_file

    entries = parse_offset_file(input_file)
    with zk_session(zookeeper, connection_timeout_ms, create_chroot=True) as client:
        count = import_offsets(client, entries, force=force, progress=_err)
    _err(f"imported {count} offsets of {len(groups_of(entries))} groups")


@main.command("update-offsets", short_help="Reset a group's offsets to earliest/latest.")
@zookeeper_options
@click.option("--group", required=True, help="Consumer group.")
@click.option("--topic", required=True, callback=checked_topic, help="Topic whose partitions to reset.")
@click.option("--earliest", "position", flag_value="earliest", help="Oldest offset still on the brokers.")
@click.option("--latest", "position", flag_value="latest", help="Log end: skip everything there now.")
@click.option("--force", is_flag=True, help="Write even when the group has live consumers.")
@socket_timeout_option
def update_offsets_command(
    zookeeper: str,
    connection_timeout_ms: int,
    group: str,
    topic: str,
    position: str | None,
    force: bool,
    socket_timeout_ms: int,
) -> None:
    """Set the group's offsets of a topic to each broker's earliest or latest offset (UpdateOffsetsInZK).

    Refuses when the group has live consumers, unless --force (they may then overwrite the new offsets).
    """
    from zkafka.tools.zk_offsets import update_offsets

    if position is None:
        raise click.UsageError("give --earliest or --latest")
    with zk_session(zookeeper, connection_timeout_ms, create_chroot=True) as client:
        entries = update_offsets(
            client, group, topic, position == "earliest", force, socket_timeout_ms, progress=click.echo
        )
    click.echo(f"updated the offsets of {len(entries)} partitions of {topic} for group {group}")


@main.command("zk-tree", short_help="Show the ZooKeeper tree of the cluster.")
@zookeeper_options
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (a list of trees).")
@click.option("--explain", is_flag=True, help="Say what each znode of the 0.7 layout is for.")
def zk_tree(
    zookeeper: str, connection_timeout_ms: int, paths: tuple[str, ...], as_json: bool, explain: bool
) -> None:
    """Print /brokers and /consumers (or PATHs) with values and each ephemeral node's owning session."""
    from zkafka.tools.zk_tree import format_json, format_tree, read_trees

    with zk_session(zookeeper, connection_timeout_ms) as client:
        nodes, absent = read_trees(client, list(paths))
    if as_json:
        click.echo(format_json(nodes))
        return
    for node in nodes:
        for line in format_tree(node, explain):
            click.echo(line)
    for path in absent:
        click.echo(f"{path} (absent)")


@main.command("get-offsets", short_help="Each partition's offset at a time (GetOffsetShell).")
@click.option(
    "--bootstrap-server", "--broker-list", "bootstrap_server", required=True, metavar="HOST:PORT[,...]",
    help="Brokers to ask for the topics' leaders.",
)  # fmt: skip
@command_config_option
@click.option(
    "--topic", default=".*", show_default=True, help="Topic name, or a regular expression of names."
)
@click.option("--partitions", default="", metavar="P[,P...]", help="Only these partitions (default: all).")
@click.option(
    "--time", "time_ms", type=int, default=-1, show_default=True,
    help="-1 the log end, -2 the log start, else a timestamp (ms): the first record stamped at or after it.",
)  # fmt: skip
@socket_timeout_option
def get_offsets_command(
    bootstrap_server: str,
    command_config: str | None,
    topic: str,
    partitions: str,
    time_ms: int,
    socket_timeout_ms: int,
) -> None:
    """Print topic:partition:offset for every partition, asked of its leader (ListOffsets v1+, as
    kafka-get-offsets.sh does; v0, with a note on stderr, where a log has no timestamps)."""
    from zkafka.client08.topic_metadata import parse_broker_list
    from zkafka.tools.command_config import client_secure
    from zkafka.tools.get_offset_shell import get_offsets, offset_lines

    try:
        wanted = [int(p) for p in partitions.split(",") if p.strip()]
    except ValueError:
        raise click.BadParameter(
            f"{partitions!r} is not a list of partition numbers", param_hint="--partitions"
        ) from None
    if time_ms < -2:
        raise click.BadParameter(f"{time_ms}: give -1, -2 or a timestamp in ms", param_hint="--time")
    secure = client_secure(command_config)
    offsets = get_offsets(
        parse_broker_list(bootstrap_server), topic, time_ms, wanted, timeout_ms=socket_timeout_ms, secure=secure
    )
    for note in sorted({f"{o.topic}-{o.partition}: {o.note}" for o in offsets if o.note}):
        _err(note)
    for line in offset_lines(offsets):
        click.echo(line)


@main.command("zookeeper-security-migration", short_help="Secure or unsecure the cluster's znodes.")
@click.option(
    "--zookeeper.acl", "zookeeper_acl", required=True, type=click.Choice(["secure", "unsecure"]),
    help="Make the Kafka znodes secure (creator-all, world-read) or open to everyone.",
)  # fmt: skip
@click.option(
    "--zookeeper.connect", "zookeeper_connect", default="localhost:2181", show_default=True,
    metavar="HOST:PORT[,...][/CHROOT]", help="The cluster's ZooKeeper.",
)  # fmt: skip
@click.option("--zookeeper.session.timeout", "session_timeout_ms", type=click.IntRange(1), default=30000)
@click.option(
    "--zookeeper.connection.timeout", "connection_timeout_ms", type=click.IntRange(1), default=30000
)
def zookeeper_security_migration(
    zookeeper_acl: str, zookeeper_connect: str, session_timeout_ms: int, connection_timeout_ms: int
) -> None:
    """Set the ACL of / and of every znode under Kafka's secure root paths (/brokers, /config, /controller,
    /admin, /kafka-acl...) as zookeeper.set.acl would have made them, logged in with the Client section of the
    JAAS file KAFKA_OPTS names (-Djava.security.auth.login.config=<file>), as zookeeper-security-migration.sh."""
    from zkafka.zk.acls import LOGIN_CONFIG, client_credentials, login_config_path, migrate
    from zkafka.zk.client import make_zk_client, start_zk_client

    path = login_config_path()
    if path is None:
        raise ToolFailure(f"no JAAS configuration file: set -D{LOGIN_CONFIG}=<file> in KAFKA_OPTS")
    credentials = client_credentials(path)
    if credentials is None:
        raise ToolFailure(f"security isn't enabled: {path} has no Client section")
    configure_logging(Context.verbose, level=logging.WARNING)
    secure = zookeeper_acl == "secure"
    client = make_zk_client(
        zookeeper_connect,
        session_timeout_ms,
        connection_timeout_ms,
        credentials=credentials,
        secure_acls=secure,
    )
    start_zk_client(client, create_chroot=False)
    try:
        changed = migrate(client, secure)
    finally:
        client.stop()
        client.close()
    click.echo(f"set the {zookeeper_acl} ACLs of {changed} znodes under {zookeeper_connect}")

"""The ``zkafka`` click group and what its subcommands share: logging set-up, one-line error reporting, topic checks."""

from __future__ import annotations

import logging
import sys
import traceback
from collections.abc import Mapping

import click

from zkafka.utils.process import hangup_interrupts


class Context:
    verbose = False


def configure_logging(verbose: bool, level: int = logging.INFO) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else level,
        format="[%(asctime)s] %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    logging.getLogger("kazoo").setLevel(logging.DEBUG if verbose else logging.ERROR)


class ToolFailure(Exception):
    """An outcome a command states in its own words (``zkafka: error: <message>``, exit status 1)."""


def not_delivered(undelivered: int, read: int, cause: BaseException | None = None) -> ToolFailure:
    """The failure of a tool that could not deliver everything it read."""
    detail = f": {describe(cause)}" if cause is not None else ""
    return ToolFailure(f"{undelivered} of {read} messages were not delivered{detail}")


# Not errors: click's own (usage, aborts, --help), and the ways a command ends on purpose.
_PASS_THROUGH = (click.ClickException, click.exceptions.Exit, click.Abort, KeyboardInterrupt, SystemExit)


def describe(exc: BaseException) -> str:
    """One line for an error: ``<Type>: <message>`` (the class's docstring when the message is empty)."""
    if isinstance(exc, ToolFailure):
        return str(exc)
    text = " ".join(str(exc).split())
    if not text:
        doc = (type(exc).__doc__ or "").strip() if type(exc).__module__ != "builtins" else ""
        text = " ".join(doc.split("\n\n")[0].split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def report_error(exc: BaseException) -> int:
    """Print ``exc`` as one line on stderr (the traceback first under --verbose); the exit status."""
    if Context.verbose:
        traceback.print_exception(exc)
    click.echo(f"zkafka: error: {describe(exc)}", err=True)
    return 1


def check_brokers_answer(broker_list: str, topic: str | None, timeout_ms: int = 10000) -> None:
    """Ask the brokers for metadata once: servers that cannot answer end the command in one line
    (BrokerNotAvailableError naming them and the cause), not in a client's retries."""
    from zkafka.client08.topic_metadata import fetch_topic_metadata, parse_broker_list

    topics = [topic] if topic else []
    fetch_topic_metadata(topics, parse_broker_list(broker_list), timeout_ms=timeout_ms)


def checked_topic(ctx: click.Context, param: click.Parameter, value):
    """Option callback for ``--topic``: refuse (one line, exit status 1) a name no broker of either line could
    hold (0.7's rule, which allows every 0.8 name; a 0.8 client checks 0.8's before sending)."""
    from zkafka.topic import validate_topic

    for name in value if isinstance(value, tuple) else () if value is None else (value,):
        validate_topic(name)
    return value


def checked_topic_lists(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]):
    """``checked_topic`` for a repeatable option of comma-separated topics (blanks around names ignored)."""
    checked_topic(ctx, param, tuple(n.strip() for item in value for n in item.split(",") if n.strip()))
    return value


def command_config_option(func):
    """``--command-config FILE``: the client properties a tool reaches a secured ``--bootstrap-server`` with."""
    return click.option(
        "--command-config", metavar="FILE", type=click.Path(dir_okay=False),
        help="--bootstrap-server: client properties (security.protocol, sasl.mechanism, sasl.jaas.config, ssl.*).",
    )(func)  # fmt: skip


def client_config_option(client: str, help: str):
    """``--producer.config`` / ``--consumer.config FILE`` (Kafka's spelling; ``--<client>-config`` too): the
    tool's client properties file, under its ``--<client>-property`` overrides (``client_properties``)."""
    return click.option(
        f"--{client}.config", f"--{client}-config", f"{client}_config", metavar="FILE",
        type=click.Path(exists=True, dir_okay=False), help=help,
    )  # fmt: skip


def client_properties(
    path: str | None, overrides: tuple[str, ...], options: Mapping[str, tuple[str, ...]] | None = None
) -> dict[str, str]:
    """A tool's client properties: those of its ``--<client>.config`` file, then its KEY=VALUE overrides.

    ``options`` maps the running command's parameters to the properties they set: those of an option typed on
    the command line are left out, so the option wins, while an option left at its default yields to the
    property (Kafka's tools merge them so: ``CommandLineUtils.maybeMergeOptions``)."""
    from zkafka.config import load_properties, parse_overrides

    given = {**(load_properties(path) if path else {}), **parse_overrides(overrides)}
    if options:
        source = click.get_current_context().get_parameter_source
        typed = {
            key
            for param, keys in options.items()
            if source(param) is click.core.ParameterSource.COMMANDLINE
            for key in keys
        }
        given = {key: value for key, value in given.items() if key not in typed}
    return given


def topic_lists_option(help: str):
    """``--topic T[,T...]`` (repeatable, checked by ``checked_topic_lists``) into the ``topics`` parameter."""
    return click.option(
        "--topic", "topics", multiple=True, callback=checked_topic_lists, metavar="T[,T...]", help=help
    )


class ZkafkaGroup(click.Group):
    """The ``zkafka`` group: an error escaping any subcommand is reported by ``report_error`` (one line and
    exit status 1; the traceback only with --verbose), so commands need no error handling of their own."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except _PASS_THROUGH:
            raise
        except BaseException as exc:  # a kazoo/gevent timeout is a BaseException
            sys.exit(report_error(exc))


@click.group(cls=ZkafkaGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--verbose", "-v", is_flag=True, help="Debug logging, and full tracebacks on errors.")
@click.version_option(package_name="zkafka")
def main(verbose: bool) -> None:
    """zkafka: the ZooKeeper-era Apache Kafka cluster in Python (the 0.7 and 0.8 lines, the 0.9 group coordinator)."""
    Context.verbose = verbose
    hangup_interrupts()

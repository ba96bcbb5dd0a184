"""The ``zkafka`` command: one click group, one module per family of subcommands."""

from __future__ import annotations

import logging
import sys
import traceback
from functools import wraps

import click


class Context:
    verbose = False


def configure_logging(verbose: bool, level: int = logging.INFO) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else level,
        format="[%(asctime)s] %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    logging.getLogger("kazoo").setLevel(logging.DEBUG if verbose else logging.ERROR)


def friendly_errors(func):
    """Print any error as one readable line (with the traceback under --verbose) and exit 1."""

    @wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except (click.ClickException, click.exceptions.Exit, click.Abort, KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:
            if Context.verbose:
                traceback.print_exc()
            click.echo(f"zkafka: error: {type(exc).__name__}: {exc}", err=True)
            sys.exit(1)

    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--verbose", "-v", is_flag=True, help="Debug logging, and full tracebacks on errors.")
@click.version_option(package_name="zkafka")
def main(verbose: bool) -> None:
    """zkafka: the ZooKeeper-era Apache Kafka 0.7 cluster in Python."""
    Context.verbose = verbose


from zkafka.cli import broker as _broker  # noqa: E402,F401  (registers the subcommands)
from zkafka.cli import consumer as _consumer  # noqa: E402,F401
from zkafka.cli import demo as _demo  # noqa: E402,F401
from zkafka.cli import explain as _explain  # noqa: E402,F401
from zkafka.cli import mirror as _mirror  # noqa: E402,F401
from zkafka.cli import perf as _perf  # noqa: E402,F401
from zkafka.cli import producer as _producer  # noqa: E402,F401
from zkafka.cli import spark as _spark  # noqa: E402,F401
from zkafka.cli import tools as _tools  # noqa: E402,F401
from zkafka.cli import topics as _topics  # noqa: E402,F401

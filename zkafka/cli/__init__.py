"""The ``zkafka`` command: the click group (cli/command.py) and one module per family of subcommands."""

from zkafka.cli import acls as _acls  # noqa: F401  (registers the subcommands)
from zkafka.cli import broker as _broker  # noqa: F401
from zkafka.cli import configs as _configs  # noqa: F401
from zkafka.cli import consumer as _consumer  # noqa: F401
from zkafka.cli import demo as _demo  # noqa: F401
from zkafka.cli import explain as _explain  # noqa: F401
from zkafka.cli import groups as _groups  # noqa: F401
from zkafka.cli import mirror as _mirror  # noqa: F401
from zkafka.cli import perf as _perf  # noqa: F401
from zkafka.cli import producer as _producer  # noqa: F401
from zkafka.cli import replicas as _replicas  # noqa: F401
from zkafka.cli import spark as _spark  # noqa: F401
from zkafka.cli import tools as _tools  # noqa: F401
from zkafka.cli import topics as _topics  # noqa: F401
from zkafka.cli import ui as _ui  # noqa: F401
from zkafka.cli.command import (  # re-exported for callers of the public API
    Context,
    ToolFailure,
    ZkafkaGroup,
    checked_topic,
    checked_topic_lists,
    configure_logging,
    describe,
    main,
    not_delivered,
    report_error,
)

__all__ = [
    "Context",
    "ToolFailure",
    "ZkafkaGroup",
    "checked_topic",
    "checked_topic_lists",
    "configure_logging",
    "describe",
    "main",
    "not_delivered",
    "report_error",
]

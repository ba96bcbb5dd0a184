"""The compiled codec core, when there is one: ``lib`` is ``zkafka.records._native`` or None.

The extension (``zkafka/records/_native.c``, built by ``pip install``) runs the loops that go once per message:
building message sets, checking a set's plain entries, decoding them into the consumer's objects. Each is
hooked into the pure-Python codec at one place (the entry walker's fast paths, the set builders), and stops at
anything but a plain entry so that the Python code reads that entry with its own rules: both paths give the
same results and the same errors. ``ZKAFKA_NO_EXTENSIONS=1`` keeps the pure path; a missing build says so once.
"""

from __future__ import annotations

import logging
import os
from types import ModuleType
from typing import Any

log = logging.getLogger(__name__)


def _load() -> ModuleType | None:
    if os.environ.get("ZKAFKA_NO_EXTENSIONS", "") not in ("", "0"):
        return None
    try:
        from zkafka.records import _native
    except ImportError as err:
        # The install already said so once (setup.py); here only a debug line, so that a tool's output stays
        # its own (one-line errors) on a machine that could not build the extension.
        log.debug("the native codec core is not built (%s); using the pure-Python codec", err)
        return None
    return _native


# The built extension (None when not built or disabled) and the one in use (None: the pure path).
built: ModuleType | None = _load()
lib: ModuleType | None = built


def use(enabled: bool) -> None:
    """Switch between the native core (ValueError if it is not built) and the pure-Python codec."""
    global lib
    if enabled and built is None:
        raise ValueError("the native codec core is not built")
    lib = built if enabled else None


def layout(cls: type, fields: tuple) -> Any:
    """A ``_native.Layout`` (how decode builds one message's object), or None without the extension."""
    return None if built is None else built.Layout(cls, fields)

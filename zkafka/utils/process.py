"""What long-running commands and the processes they start share: the signals that stop them cleanly, and
children that do not outlive the process that started them."""

from __future__ import annotations

import ctypes
import os
import signal
from collections.abc import Callable

# Under nohup SIGHUP starts ignored, and stays so (as a JVM leaves it): the command outlives its terminal.
_HANGUP = () if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN else (signal.SIGHUP,)

# Ctrl-C, kill, and the terminal going away: each stops a long-running command as Ctrl-C does.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, *_HANGUP)

_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def hangup_interrupts() -> None:
    """Make SIGHUP raise KeyboardInterrupt as SIGINT does, so a command whose terminal closes stops as on
    Ctrl-C (its own handlers, installed later, take precedence); not under nohup."""
    for signum in _HANGUP:
        signal.signal(signum, signal.default_int_handler)


def interrupt_greenlet_on_stop() -> None:
    """For a command whose work runs on gevent without stop handlers of its own (perf): each stop signal raises
    KeyboardInterrupt in the calling (main) greenlet from a gevent handler, which the hub does not print
    as it does an interrupt raised by Python's handler while it runs."""
    import gevent

    main = gevent.getcurrent()
    for signum in STOP_SIGNALS:
        gevent.signal_handler(signum, main.throw, KeyboardInterrupt)


def die_with_parent(signum: int = signal.SIGKILL) -> Callable[[], None]:
    """A ``preexec_fn`` for ``subprocess.Popen``: the child gets ``signum`` when the process that started it
    dies, even by SIGKILL (Linux's PR_SET_PDEATHSIG; elsewhere nothing). Call it on the thread that starts
    the child and outlives it: the kernel watches that thread."""
    parent = os.getpid()

    def arm() -> None:
        try:
            prctl = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):
            return
        prctl(_PR_SET_PDEATHSIG, signum, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the watch was set
            os.kill(os.getpid(), signum)

    return arm

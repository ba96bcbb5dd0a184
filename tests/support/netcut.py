"""Network partitions on loopback for the drills: iptables rules that DROP (silently, as a pulled cable does)
the TCP packets of chosen ports arriving on ``lo``, kept in one chain of the test's own, so that healing is
flushing that chain and teardown removes it, leaving nothing behind even when the test fails.

Every broker and ZooKeeper in a test is on 127.0.0.1; a client that must keep reaching a broker the brokers
are cut off from connects from another loopback address (any 127/8 address is local on Linux), which the
rules leave alone.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator

import pytest

from tests.support.brokers import pid_alive

BROKERS_ADDRESS = "127.0.0.1"  # where every server of a test listens, and what its connections come from
CLIENTS_ADDRESS = "127.0.0.2"  # a client that a cut between servers must not touch connects from here
CHAIN_PREFIX = "ZKAFKA-CUT-"  # + the pid of the test process that owns the chain


def iptables(*args: str) -> subprocess.CompletedProcess:
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    return subprocess.run([*sudo, "iptables", "-w", *args], capture_output=True, text=True, check=False)


def remove_chain(chain: str) -> None:
    iptables("-D", "INPUT", "-i", "lo", "-j", chain)
    iptables("-F", chain)
    iptables("-X", chain)


def remove_orphans() -> None:
    """Chains left by a test process killed before its teardown (its pid gone)."""
    for pid in re.findall(rf"^-N {CHAIN_PREFIX}(\d+)$", iptables("-S").stdout, re.MULTILINE):
        if not pid_alive(int(pid)):
            remove_chain(CHAIN_PREFIX + pid)


class NetCut:
    """One iptables chain (``ZKAFKA-CUT-<pid>``) jumped to from INPUT for packets on ``lo``."""

    def __init__(self) -> None:
        remove_orphans()
        self.chain = f"{CHAIN_PREFIX}{os.getpid()}"
        self.rules: list[tuple[str, ...]] = []
        for args in (("-N", self.chain), ("-I", "INPUT", "-i", "lo", "-j", self.chain)):
            done = iptables(*args)
            if done.returncode != 0:
                remove_chain(self.chain)
                pytest.fail(
                    f"iptables {' '.join(args)}: {done.stderr.strip()} (the drill needs root)", pytrace=False
                )

    def isolate_port(self, port: int, source: str = BROKERS_ADDRESS) -> None:
        """Drop every packet to ``port`` from ``source`` and every packet from ``port`` to ``source``: the
        server there and the peers at ``source`` no longer hear each other (both ways, connections open or
        new)."""
        tcp = ("-p", "tcp")
        self._drop(*tcp, "-s", source, "-d", BROKERS_ADDRESS, "--dport", str(port))
        self._drop(*tcp, "-s", BROKERS_ADDRESS, "--sport", str(port), "-d", source)

    def heal(self) -> None:
        """Every rule gone, the chain kept (empty)."""
        iptables("-F", self.chain)
        self.rules.clear()

    def close(self) -> None:
        """The chain and its jump removed; asserts that nothing of it is left."""
        remove_chain(self.chain)
        left = [line for line in iptables("-S").stdout.splitlines() if self.chain in line]
        assert not left, f"iptables rules left behind: {left}"

    def _drop(self, *match: str) -> None:
        done = iptables("-A", self.chain, *match, "-j", "DROP")
        assert done.returncode == 0, f"iptables {' '.join(match)}: {done.stderr.strip()}"
        self.rules.append(match)


@pytest.fixture
def netcut() -> Iterator[NetCut]:
    """A NetCut removed at the end of the test, whatever happened."""
    cut = NetCut()
    try:
        yield cut
    finally:
        cut.close()

"""What this test process holds open, from /proc: its descriptors, event loops and TCP connections."""

from __future__ import annotations

import os


def fd_targets() -> list[str]:
    """What each open descriptor of the process points at (``socket:[inode]``, a path, ...), sorted."""
    targets = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            targets.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:  # the listing's own descriptor, closed since
            pass
    return sorted(targets)


def event_loops() -> int:
    """The process's epoll descriptors (one per live libev loop, the main thread's included)."""
    return fd_targets().count("anon_inode:[eventpoll]")


def tcp_ports_connected_to() -> list[int]:
    """The remote port of each of this process's TCP sockets (IPv4), from /proc."""
    inodes = {target[8:-1] for target in fd_targets() if target.startswith("socket:[")}
    ports = []
    with open("/proc/self/net/tcp") as table:
        for line in list(table)[1:]:
            fields = line.split()
            if fields[9] in inodes:
                ports.append(int(fields[2].rsplit(":", 1)[1], 16))
    return ports

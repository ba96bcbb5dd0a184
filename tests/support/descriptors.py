"""What this test process holds open, from /proc: event loops and TCP connections."""

from __future__ import annotations

import os


def event_loops() -> int:
    """The process's epoll descriptors (one per live libev loop, the main thread's included)."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:[eventpoll]"
        except OSError:  # the listing's own descriptor
            pass
    return count


def tcp_ports_connected_to() -> list[int]:
    """The remote port of each of this process's TCP sockets (IPv4), from /proc."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = []
    with open("/proc/self/net/tcp") as table:
        for line in list(table)[1:]:
            fields = line.split()
            if fields[9] in inodes:
                ports.append(int(fields[2].rsplit(":", 1)[1], 16))
    return ports

#!/opt/zkafka/bin/python
"""Docker health check of a broker: it answers an OFFSETS request, which it does once registered in ZooKeeper.

Usage: zkafka-healthcheck [HOST [PORT]]; HOST defaults to this container's host name (a broker binds the
address of its ``hostname`` setting), PORT to 9092.
"""

import socket
import struct
import sys

from zkafka.protocol.v07 import OffsetRequest, encode_request

host = sys.argv[1] if len(sys.argv) > 1 else socket.gethostname()
port = int(sys.argv[2]) if len(sys.argv) > 2 else 9092
try:
    with socket.create_connection((host, port), timeout=3) as sock:
        sock.sendall(encode_request(OffsetRequest("__health", 0, -1, 1)))
        header = sock.recv(6, socket.MSG_WAITALL)
        if len(header) != 6 or struct.unpack(">ih", header)[1] != 0:
            raise ConnectionError(f"bad answer {header!r}")
except OSError as exc:  # unhealthy; `docker inspect` shows why
    print(f"unhealthy: {host}:{port}: {exc}")
    sys.exit(1)

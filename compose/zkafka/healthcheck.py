#!/opt/zkafka/bin/python
"""Docker health check of a broker: a 0.7 broker answers an OFFSETS request, which it does once registered in
ZooKeeper; a 0.8 broker (``--line 0.8``) answers a Metadata request naming at least one broker, which it does
once the controller has told it the cluster (UpdateMetadata).

Usage: zkafka-healthcheck [--line 0.8] [HOST [PORT]]; HOST defaults to this container's host name (a broker
binds the address of its host name setting), PORT to 9092.
"""

import socket
import struct
import sys

from zkafka.protocol.metadata import MetadataRequestV0

args = sys.argv[1:]
line = "0.7"
if args[:1] == ["--line"]:
    line, args = args[1], args[2:]
host = args[0] if args else socket.gethostname()
port = int(args[1]) if len(args) > 1 else 9092


def recv_exact(sock, n):
    data = sock.recv(n, socket.MSG_WAITALL)
    if len(data) != n:
        raise ConnectionError(f"short answer {data!r}")
    return data


try:
    with socket.create_connection((host, port), timeout=3) as sock:
        if line == "0.8":
            from zkafka.protocol import v08

            request = MetadataRequestV0([])
            sock.sendall(v08.encode_request(request, 1, "healthcheck"))
            (size,) = struct.unpack(">i", recv_exact(sock, 4))
            answer = v08.decode_response(request.API_KEY, request.API_VERSION, recv_exact(sock, size)).body
            if not answer.brokers:
                raise ConnectionError("no brokers in its metadata yet")
        else:
            from zkafka.protocol.v07 import OffsetRequest, encode_request

            sock.sendall(encode_request(OffsetRequest("__health", 0, -1, 1)))
            header = sock.recv(6, socket.MSG_WAITALL)
            if len(header) != 6 or struct.unpack(">ih", header)[1] != 0:
                raise ConnectionError(f"bad answer {header!r}")
except OSError as exc:  # unhealthy; `docker inspect` shows why
    print(f"unhealthy: {host}:{port}: {exc}")
    sys.exit(1)

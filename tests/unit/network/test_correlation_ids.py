"""The network layer with the 0.8 header codec: SocketServer and BlockingChannel are protocol-neutral, so the
0.8 line plugs in a codec with correlation ids (the 0.8 clients' ``client08.channel.ClientCodec08``)."""

from __future__ import annotations

import gevent
import pytest

from zkafka.client08.channel import ClientCodec08
from zkafka.network.client import BlockingChannel
from zkafka.network.server import PendingResponse, SocketServer
from zkafka.protocol import v08
from zkafka.protocol.api_versions import ApiVersionRange, ApiVersionsRequestV0, ApiVersionsResponseV0


@pytest.fixture
def seen():
    return []


@pytest.fixture
def server(seen):
    def handle(request: v08.Request):
        seen.append((request.correlation_id, request.client_id))
        body = ApiVersionsResponseV0(0, [ApiVersionRange(18, 0, request.correlation_id)])
        if request.correlation_id == 2:  # answered later: the channel still gets the answers in order
            pending = PendingResponse()
            gevent.spawn(pending.set, v08.encode_response(request.correlation_id, body))
            return pending
        return v08.encode_response(request.correlation_id, body)

    server = SocketServer("127.0.0.1", 0, v08.CODEC, handle)
    server.start()
    yield server
    server.stop(timeout=1)


def test_pipelined_requests_carry_and_check_correlation_ids(server, seen):
    channel = BlockingChannel("127.0.0.1", server.port, ClientCodec08("test-client"))
    for _ in range(3):
        channel.send(ApiVersionsRequestV0())
    answers = [channel.receive() for _ in range(3)]
    assert [a.api_versions[0].max_version for a in answers] == [1, 2, 3]
    assert seen == [(1, "test-client"), (2, "test-client"), (3, "test-client")]
    assert channel.request(ApiVersionsRequestV0()).api_versions == [ApiVersionRange(18, 0, 4)]
    channel.close()

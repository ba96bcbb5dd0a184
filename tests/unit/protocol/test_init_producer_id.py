"""Golden bytes of InitProducerId v0-v4 both ways through the v08 codec, hand-assembled from Kafka 3.4's
InitProducerIdRequest/Response JSON: a nullable transactional id and a timeout, v2 flexible (compact nullable
string, tag buffers, request header v2 / response header v1), v3 adds the producer's id and epoch. Correlation
id 7, client id "cli"."""

from __future__ import annotations

import pytest

from tests.unit.protocol.test_v08_client import check_request, check_response
from zkafka.protocol.init_producer_id import INIT_PRODUCER_ID_APIS
from zkafka.protocol.versioned import make


def request(version, transactional_id=None, producer_id=-1, epoch=-1):
    cls = INIT_PRODUCER_ID_APIS[version][0]
    values = {"producer_id": producer_id, "producer_epoch": epoch}
    return make(cls, transactional_id=transactional_id, transaction_timeout_ms=60000, **values)


def response(version, error=0, producer_id=1000, epoch=0):
    cls = INIT_PRODUCER_ID_APIS[version][1]
    return make(cls, throttle_time_ms=0, error=error, producer_id=producer_id, producer_epoch=epoch)


REQUESTS = [
    pytest.param(
        request(0), "00000013 | 0016 0000 00000007 0003 636c69 | ffff | 0000ea60  # null id, 60 s", id="v0"
    ),
    pytest.param(request(1), "00000013 | 0016 0001 00000007 0003 636c69 | ffff | 0000ea60", id="v1"),
    pytest.param(
        request(2), "00000014 | 0016 0002 00000007 0003 636c69 00 | 00 | 0000ea60 | 00  # compact null", id="v2"
    ),
    pytest.param(
        request(3),
        "0000001e | 0016 0003 00000007 0003 636c69 00 | 00 | 0000ea60 | ffffffffffffffff ffff | 00",
        id="v3",
    ),
    pytest.param(
        request(4, "tx", 5, 1),
        "00000020 | 0016 0004 00000007 0003 636c69 00 | 03 7478 | 0000ea60 | 0000000000000005 0001 | 00",
        id="v4",
    ),
]

RESPONSES = [
    pytest.param(response(0), "00000014 | 00000007 | 00000000 | 0000 | 00000000000003e8 | 0000", id="v0"),
    pytest.param(response(1), "00000014 | 00000007 | 00000000 | 0000 | 00000000000003e8 | 0000", id="v1"),
    pytest.param(response(2), "00000016 | 00000007 00 | 00000000 | 0000 | 00000000000003e8 | 0000 | 00", id="v2"),
    pytest.param(response(3), "00000016 | 00000007 00 | 00000000 | 0000 | 00000000000003e8 | 0000 | 00", id="v3"),
    pytest.param(
        response(4, 15, -1, -1),
        "00000016 | 00000007 00 | 00000000 | 000f | ffffffffffffffff | ffff | 00  # COORDINATOR_NOT_AVAILABLE",
        id="v4",
    ),
]


@pytest.mark.parametrize("body, frame_hex", REQUESTS)
def test_request_golden_bytes(body, frame_hex):
    check_request(body, frame_hex)


@pytest.mark.parametrize("body, frame_hex", RESPONSES)
def test_response_golden_bytes(body, frame_hex):
    check_response(body, frame_hex)

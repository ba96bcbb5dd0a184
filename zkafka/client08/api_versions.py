"""Which version of each API zkafka's 0.8-line clients speak to one broker, as Kafka's clients decide it.

On a channel's first request the client asks ApiVersions v3; a broker that answers UNSUPPORTED_VERSION (in a
v0 answer listing its ranges) is asked again with v0, as Kafka's ``NetworkClient`` does. A 0.8.2 broker does
not know the API and closes the connection: the channel then speaks the 0.8.2 dialect (Produce, Fetch,
ListOffsets and Metadata v0), as it does with ``api.version.request=false`` (librdkafka's name). Otherwise
each API goes at the highest version both the broker and the client (``CLIENT_VERSIONS``) know.
"""

from __future__ import annotations

import logging
from typing import Any

from zkafka.errors import KafkaError
from zkafka.protocol.api_keys import FETCH, INIT_PRODUCER_ID, LIST_OFFSETS, PRODUCE
from zkafka.protocol.api_versions import ApiVersionsRequestV0, ApiVersionsRequestV3
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.fetch import MAX_VERSION as FETCH_MAX
from zkafka.protocol.offsets import MAX_VERSION as LIST_OFFSETS_MAX
from zkafka.protocol.produce import MAX_VERSION as PRODUCE_MAX

log = logging.getLogger(__name__)

CLIENT_SOFTWARE_NAME = "zkafka"
CLIENT_SOFTWARE_VERSION = "0.8"
# The newest version of each API zkafka's clients read and write; the rest (Metadata, the offset and group
# APIs) go at the versions they always sent; InitProducerId for enable.idempotence; ListOffsets v1+ for an
# offset by timestamp (v0 for offsets before a time).
CLIENT_VERSIONS = {
    PRODUCE: PRODUCE_MAX,
    FETCH: FETCH_MAX,
    INIT_PRODUCER_ID: 4,
    LIST_OFFSETS: LIST_OFFSETS_MAX,
}
OLD_DIALECT: dict[int, int] = {}  # 0.8.2: every API at v0


def negotiate(channel: Any) -> dict[int, int]:
    """``api_key -> version`` for ``channel``'s broker (see the module docstring); asked once a channel, and
    not at all with ``api.version.request=false`` (``channel.codec.api_version_request``)."""
    codec = channel.codec
    if codec.api_versions is not None:
        return codec.api_versions
    if not codec.api_version_request:
        codec.api_versions = OLD_DIALECT
        return OLD_DIALECT
    try:
        response = channel.request(
            ApiVersionsRequestV3(CLIENT_SOFTWARE_NAME, CLIENT_SOFTWARE_VERSION), retries=0
        )
        if response.error == ErrorCode.UNSUPPORTED_VERSION:
            response = channel.request(ApiVersionsRequestV0(), retries=0)
    except (KafkaError, OSError) as exc:
        log.info("%s does not answer ApiVersions (%s): speaking 0.8.2's versions", channel, exc)
        channel.disconnect()
        codec.api_versions = OLD_DIALECT
        return OLD_DIALECT
    served = {r.api_key: (r.min_version, r.max_version) for r in response.api_versions}
    codec.api_versions = {
        key: min(newest, served[key][1])
        for key, newest in CLIENT_VERSIONS.items()
        if key in served and served[key][0] <= min(newest, served[key][1])
    }
    return codec.api_versions


def version_for(channel: Any, api_key: int) -> int:
    """The version of ``api_key`` to send on ``channel`` (0 when the broker or the dialect has no newer)."""
    return negotiate(channel).get(api_key, 0)

"""ApiVersions (API key 18, Kafka 0.10) v0-v3, declared as schemas: the API keys a broker serves, each with its
lowest and highest version.

v1 adds ``throttle_time_ms`` to the response; v2 is v1 (a quota-violating answer comes before the throttle);
v3 (Kafka 2.4, KIP-511) is the first flexible version: the request names the client software, the response
may carry the broker's features in tagged fields (KIP-584, Kafka 2.7; ``zk_migration_ready``: 3.4). Whatever
the version, the response header is v0 (no tag buffer): a client that asked with a version the broker does
not know must still read the answer. Pure: bytes in, values out.
"""

from __future__ import annotations

from typing import Any

from zkafka.protocol.api_keys import API_VERSIONS, api_struct
from zkafka.protocol.flexible import TaggedField
from zkafka.protocol.schema import struct_class
from zkafka.protocol.types import Array, Boolean, Int16, Int32, Int64, String

ApiVersionRange = struct_class(
    "ApiVersionRange", ("api_key", Int16), ("min_version", Int16), ("max_version", Int16)
)
SupportedFeatureKey = struct_class(
    "SupportedFeatureKey", ("name", String), ("min_version", Int16), ("max_version", Int16)
)
FinalizedFeatureKey = struct_class(
    "FinalizedFeatureKey", ("name", String), ("max_version_level", Int16), ("min_version_level", Int16)
)

ApiVersionsRequestV0 = api_struct("ApiVersionsRequestV0", API_VERSIONS, 0)
ApiVersionsRequestV1 = api_struct("ApiVersionsRequestV1", API_VERSIONS, 1)
ApiVersionsRequestV2 = api_struct("ApiVersionsRequestV2", API_VERSIONS, 2)
ApiVersionsRequestV3 = api_struct(
    "ApiVersionsRequestV3",
    API_VERSIONS,
    3,
    ("client_software_name", String),
    ("client_software_version", String),
    flexible=True,
)

ApiVersionsResponseV0 = api_struct(
    "ApiVersionsResponseV0",
    API_VERSIONS,
    0,
    ("error", Int16),
    ("api_versions", Array(ApiVersionRange.SCHEMA)),
)
_response_v1 = (("error", Int16), ("api_versions", Array(ApiVersionRange.SCHEMA)), ("throttle_time_ms", Int32))
ApiVersionsResponseV1 = api_struct("ApiVersionsResponseV1", API_VERSIONS, 1, *_response_v1)
ApiVersionsResponseV2 = api_struct("ApiVersionsResponseV2", API_VERSIONS, 2, *_response_v1)
ApiVersionsResponseV3 = api_struct(
    "ApiVersionsResponseV3",
    API_VERSIONS,
    3,
    *_response_v1,
    flexible=True,
    tagged=(
        TaggedField(0, "supported_features", Array(SupportedFeatureKey.SCHEMA), ()),
        TaggedField(1, "finalized_features_epoch", Int64, -1),  # -1: unknown
        TaggedField(2, "finalized_features", Array(FinalizedFeatureKey.SCHEMA), ()),
        TaggedField(3, "zk_migration_ready", Boolean, False),
    ),
)

API_VERSIONS_APIS = (
    (ApiVersionsRequestV0, ApiVersionsResponseV0),
    (ApiVersionsRequestV1, ApiVersionsResponseV1),
    (ApiVersionsRequestV2, ApiVersionsResponseV2),
    (ApiVersionsRequestV3, ApiVersionsResponseV3),
)


def api_versions_response(version: int, error: int, ranges: list) -> Any:
    """The ApiVersions answer of ``version`` (0-3): from v1 with a throttle time of 0 (a throttled answer gets
    its own written in), v3 without feature tags (zkafka has no feature versioning)."""
    response_class = API_VERSIONS_APIS[version][1]
    return response_class(error, ranges) if version == 0 else response_class(error, ranges, 0)

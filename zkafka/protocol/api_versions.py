"""ApiVersions (API key 18, Kafka 0.10) v0, declared as schemas: the API keys a broker serves, each with its
lowest and highest version. Pure: bytes in, values out.
"""

from __future__ import annotations

from zkafka.protocol.api_keys import API_VERSIONS, api_struct
from zkafka.protocol.schema import struct_class
from zkafka.protocol.types import Array, Int16

ApiVersionRange = struct_class(
    "ApiVersionRange", ("api_key", Int16), ("min_version", Int16), ("max_version", Int16)
)
ApiVersionsRequestV0 = api_struct("ApiVersionsRequestV0", API_VERSIONS, 0)
ApiVersionsResponseV0 = api_struct(
    "ApiVersionsResponseV0",
    API_VERSIONS,
    0,
    ("error", Int16),
    ("api_versions", Array(ApiVersionRange.SCHEMA)),
)

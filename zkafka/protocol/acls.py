"""DescribeAcls (key 29), CreateAcls (30) and DeleteAcls (31) v0-v3 (Kafka 0.11's KIP-140), declared once with
the versions each field has (``versioned``). Pure: bytes in, values out.

What each version adds (Kafka's message JSONs): v1 the resource pattern type (KIP-290: LITERAL 3, PREFIXED 4;
a v0 request means LITERAL), v2 is flexible, v3 allows the User resource type. Codes of resource types,
operations, permission and pattern types: ``zkafka.security.acl``.
"""

from __future__ import annotations

from zkafka.protocol.api_keys import CREATE_ACLS, DELETE_ACLS, DESCRIBE_ACLS
from zkafka.protocol.types import Int8, Int16, Int32, String
from zkafka.protocol.versioned import Field, Nested, declare, pairs

VERSIONS = range(4)
FLEXIBLE_SINCE = 2
LITERAL = 3  # PatternType.LITERAL: what a v0 request's patterns are

_FILTER_FIELDS = (
    Field("resource_type_filter", Int8),
    Field("resource_name_filter", String, nullable_since=0),
    Field("pattern_type_filter", Int8, 1),
    Field("principal_filter", String, nullable_since=0),
    Field("host_filter", String, nullable_since=0),
    Field("operation", Int8),
    Field("permission_type", Int8),
)
_ACL_DESCRIPTION = Nested(
    "AclDescription",
    (
        Field("principal", String),
        Field("host", String),
        Field("operation", Int8),
        Field("permission_type", Int8),
    ),
)
_DESCRIBED_RESOURCE = Nested(
    "DescribeAclsResource",
    (
        Field("resource_type", Int8),
        Field("resource_name", String),
        Field("pattern_type", Int8, 1),
        Field("acls", _ACL_DESCRIPTION),
    ),
)
DESCRIBE_ACLS_APIS = pairs(
    declare("DescribeAclsRequest", DESCRIBE_ACLS, VERSIONS, _FILTER_FIELDS, flexible_since=FLEXIBLE_SINCE),
    declare(
        "DescribeAclsResponse",
        DESCRIBE_ACLS,
        VERSIONS,
        (
            Field("throttle_time_ms", Int32),
            Field("error", Int16),
            Field("error_message", String, nullable_since=0),
            Field("resources", _DESCRIBED_RESOURCE),
        ),
        flexible_since=FLEXIBLE_SINCE,
    ),
)

_CREATION = Nested(
    "AclCreation",
    (
        Field("resource_type", Int8),
        Field("resource_name", String),
        Field("resource_pattern_type", Int8, 1),
        Field("principal", String),
        Field("host", String),
        Field("operation", Int8),
        Field("permission_type", Int8),
    ),
)
_CREATION_RESULT = Nested(
    "AclCreationResult", (Field("error", Int16), Field("error_message", String, nullable_since=0))
)
CREATE_ACLS_APIS = pairs(
    declare(
        "CreateAclsRequest",
        CREATE_ACLS,
        VERSIONS,
        (Field("creations", _CREATION),),
        flexible_since=FLEXIBLE_SINCE,
    ),
    declare(
        "CreateAclsResponse",
        CREATE_ACLS,
        VERSIONS,
        (Field("throttle_time_ms", Int32), Field("results", _CREATION_RESULT)),
        flexible_since=FLEXIBLE_SINCE,
    ),
)

_DELETE_FILTER = Nested("DeleteAclsFilter", _FILTER_FIELDS)
_MATCHING_ACL = Nested(
    "DeleteAclsMatchingAcl",
    (
        Field("error", Int16),
        Field("error_message", String, nullable_since=0),
        Field("resource_type", Int8),
        Field("resource_name", String),
        Field("pattern_type", Int8, 1),
        Field("principal", String),
        Field("host", String),
        Field("operation", Int8),
        Field("permission_type", Int8),
    ),
)
_FILTER_RESULT = Nested(
    "DeleteAclsFilterResult",
    (
        Field("error", Int16),
        Field("error_message", String, nullable_since=0),
        Field("matching_acls", _MATCHING_ACL),
    ),
)
DELETE_ACLS_APIS = pairs(
    declare(
        "DeleteAclsRequest",
        DELETE_ACLS,
        VERSIONS,
        (Field("filters", _DELETE_FILTER),),
        flexible_since=FLEXIBLE_SINCE,
    ),
    declare(
        "DeleteAclsResponse",
        DELETE_ACLS,
        VERSIONS,
        (Field("throttle_time_ms", Int32), Field("filter_results", _FILTER_RESULT)),
        flexible_since=FLEXIBLE_SINCE,
    ),
)
ACLS_APIS = (*DESCRIBE_ACLS_APIS, *CREATE_ACLS_APIS, *DELETE_ACLS_APIS)

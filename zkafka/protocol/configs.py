"""DescribeConfigs (key 32) v0-v4 and AlterConfigs (key 33) v0-v2 (Kafka 0.11's KIP-133), declared once with
the versions each field has (``versioned``). Pure: bytes in, values out.

What each version adds (Kafka's message JSONs): DescribeConfigs v1 (1.1) asks ``include_synonyms`` and answers
each config's ``config_source`` (instead of v0's ``is_default``) and ``synonyms``; v2 as v1; v3 (2.6)
``include_documentation`` and each config's ``config_type`` and ``documentation``; v4 is flexible.
AlterConfigs v1 as v0; v2 is flexible.
"""

from __future__ import annotations

from zkafka.protocol.api_keys import ALTER_CONFIGS, DESCRIBE_CONFIGS
from zkafka.protocol.types import Array, Boolean, Int8, Int16, Int32, String
from zkafka.protocol.versioned import Field, Nested, declare, nested_class, pairs

TOPIC, BROKER = 2, 4  # ConfigResource.Type
# DescribeConfigsResponse.ConfigSource
UNKNOWN, DYNAMIC_TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG = 0, 1, 2, 3
STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 4, 5
# ConfigDef.Type as DescribeConfigs v3 numbers it (ConfigType)
BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST = 1, 2, 3, 4, 5, 6, 7

_RESOURCE = Nested(
    "DescribeConfigsResource",
    (
        Field("resource_type", Int8),
        Field("resource_name", String),
        Field("configuration_keys", Array(String), nullable_since=0),  # null: every key
    ),
)
_SYNONYM = Nested(
    "DescribeConfigsSynonym",
    (Field("name", String), Field("value", String, nullable_since=0), Field("source", Int8)),
)
_CONFIG = Nested(
    "DescribeConfigsResourceResult",
    (
        Field("name", String),
        Field("value", String, nullable_since=0),
        Field("read_only", Boolean),
        Field("is_default", Boolean, 0, 0),
        Field("config_source", Int8, 1),
        Field("is_sensitive", Boolean),
        Field("synonyms", _SYNONYM, 1),
        Field("config_type", Int8, 3),
        Field("documentation", String, 3, nullable_since=0),
    ),
)
_RESULT = Nested(
    "DescribeConfigsResult",
    (
        Field("error", Int16),
        Field("error_message", String, nullable_since=0),
        Field("resource_type", Int8),
        Field("resource_name", String),
        Field("configs", _CONFIG),
    ),
)
DESCRIBE_CONFIGS_APIS = pairs(
    declare(
        "DescribeConfigsRequest",
        DESCRIBE_CONFIGS,
        range(5),
        (
            Field("resources", _RESOURCE),
            Field("include_synonyms", Boolean, 1),
            Field("include_documentation", Boolean, 3),
        ),
        flexible_since=4,
    ),
    declare(
        "DescribeConfigsResponse",
        DESCRIBE_CONFIGS,
        range(5),
        (Field("throttle_time_ms", Int32), Field("results", _RESULT)),
        flexible_since=4,
    ),
)

_ALTERABLE = Nested("AlterableConfig", (Field("name", String), Field("value", String, nullable_since=0)))
_ALTER_RESOURCE = Nested(
    "AlterConfigsResource",
    (Field("resource_type", Int8), Field("resource_name", String), Field("configs", _ALTERABLE)),
)
_ALTER_RESULT = Nested(
    "AlterConfigsResourceResponse",
    (
        Field("error", Int16),
        Field("error_message", String, nullable_since=0),
        Field("resource_type", Int8),
        Field("resource_name", String),
    ),
)
ALTER_CONFIGS_APIS = pairs(
    declare(
        "AlterConfigsRequest",
        ALTER_CONFIGS,
        range(3),
        (Field("resources", _ALTER_RESOURCE), Field("validate_only", Boolean)),
        flexible_since=2,
    ),
    declare(
        "AlterConfigsResponse",
        ALTER_CONFIGS,
        range(3),
        (Field("throttle_time_ms", Int32), Field("responses", _ALTER_RESULT)),
        flexible_since=2,
    ),
)
CONFIGS_APIS = (*DESCRIBE_CONFIGS_APIS, *ALTER_CONFIGS_APIS)


def describe_resource_class(version: int) -> type:
    """The resource struct of a DescribeConfigs ``version`` request."""
    return nested_class(_RESOURCE, version)


def alter_resource_class(version: int) -> type:
    """The resource struct of an AlterConfigs ``version`` request."""
    return nested_class(_ALTER_RESOURCE, version)


def alterable_config_class(version: int) -> type:
    return nested_class(_ALTERABLE, version)

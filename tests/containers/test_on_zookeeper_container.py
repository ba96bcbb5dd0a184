"""A subset of the integration suite run again, against ZooKeeper in a container (testcontainers).

The tests are the integration suite's own functions, imported here: in this directory ``zookeeper_server``
is the container of tests/containers/conftest.py, whatever ZKAFKA_TEST_ZK chose for the rest of the suite.
Covered: broker registration, the producer's broker discovery, the consumer group.
"""

import pytest

from tests.integration.test_broker import (  # noqa: F401
    test_clean_shutdown_removes_znodes_at_once,
    test_registration_values_and_topics,
    test_session_expiry_reregisters_broker_and_topics,
    test_two_brokers_register,
)
from tests.integration.test_consumer_group import (  # noqa: F401
    connectors,
    test_group_of_three_reads_every_message_once_and_owners_match_the_range_assignment,
    test_member_leaving_hands_over_its_partitions_without_loss_or_going_back,
    test_new_broker_and_new_partitions_trigger_a_rebalance,
    test_restart_resumes_from_committed_offsets,
)
from tests.integration.test_producer import (  # noqa: F401
    test_a_broker_joining_mid_stream_gets_traffic_without_a_producer_restart,
    test_a_new_topic_bootstraps_to_partition_0_of_each_broker_then_widens,
    test_messages_without_a_key_spread_over_every_partition,
    test_session_expiry_rebuilds_the_cache_and_its_watches,
    two_brokers,
)

pytestmark = [pytest.mark.integration, pytest.mark.container]


def test_the_server_is_the_container(zookeeper_server):
    assert type(zookeeper_server).__name__ == "ZooKeeperContainer"
    assert zookeeper_server.is_running() and zookeeper_server.is_serving()

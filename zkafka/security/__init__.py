"""Authorization: ACLs, the ACL authorizer and its store in ZooKeeper (Kafka's ``kafka.security``)."""

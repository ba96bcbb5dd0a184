"""Client quotas, pure: the quota entities and their configs, Kafka's sampled rate and the throttle time (Kafka's
``org.apache.kafka.server.quota`` and ``ClientQuotaManager``'s arithmetic); the broker applies them in
``server``."""

"""The broker servers of both lines: start-up, request handlers, the metadata cache, replication, the purgatory
and the registries."""

"""What the 0.8 clients share: a channel speaking the 0.8 header (``channel``) and the cluster's metadata as
brokers serve it (``metadata``: the bootstrap list, Metadata requests, the topic-partition-leader cache)."""

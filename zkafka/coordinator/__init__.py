"""The 0.9 group coordinator: group membership, client-side assignors and offsets kept in ``__consumer_offsets``."""

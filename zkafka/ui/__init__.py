"""``zkafka ui``: a live web view of a ZooKeeper-era cluster, with every rebalance explained step by step."""

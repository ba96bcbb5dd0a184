"""The 0.8 line's administration through ZooKeeper (0.8.2's AdminUtils): replica assignment, topics, configs."""

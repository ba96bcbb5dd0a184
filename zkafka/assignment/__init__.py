"""Partition assignment (both lines), pure: who gets which partition, computed from plain inputs.

``range`` and ``roundrobin`` serve the ZooKeeper consumers (0.7's range over ``b-p`` names, 0.8.2's range
and roundrobin over partition ids and thread ids, chosen by ``partition.assignment.strategy``: ``assignor``)
and the group client's assignors (``consumer.group.assignors``: 0.9's range and roundrobin over member
ids); ``sticky`` is the group client's sticky assignment. ``explain`` lays their steps out. No sockets, no
ZooKeeper, no wire formats: the callers read the inputs and encode the results.
"""

"""Code shared by the tests; test files hold tests and the helpers only they use.

Plugins (tests/conftest.py registers them): ``session`` (SIGTERM, per-marker timeouts), ``zookeeper`` (a real
ZooKeeper, a chroot per test), ``brokers`` (in-process and child-process brokers), ``frame_recorder`` (a
socket server decoding request frames). Helpers: ``wire`` (raw 0.7 sockets, a raw producer), ``producers``,
``consumers`` (also a child consumer process), ``logs`` (clock, hand-built entries), ``spark``, ``brokers08``
(the ZooKeeper side of 0.8 brokers),
``zk_container`` (ZooKeeper in Docker).
"""

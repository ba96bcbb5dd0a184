#!/usr/bin/env bash
# Install zkafka with its test extras and run every test: ruff, the unit and integration suites (a real
# ZooKeeper as a local process, real brokers; Spark tests included; the web view in a headless Chromium,
# Debian's chromium installed if missing), then the container tests and fault drills: a Docker engine is
# installed and started, the images built (or reused), and an engine that cannot start fails the run with
# its reason. Extra arguments go to the main pytest run, e.g. -m "not slow".
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh test
# The web view's tests drive Debian's Chromium headless through Playwright (no browser download).
if ! command -v chromium >/dev/null && command -v apt-get >/dev/null; then
  sudo=""; if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
fi
# The network partition drills cut loopback traffic with iptables (as root, or through sudo -n).
if ! command -v iptables >/dev/null && command -v apt-get >/dev/null; then
  sudo=""; if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq iptables >/dev/null
fi
export ZKAFKA_REQUIRE_BROWSER=1
python3 -m ruff check zkafka tests benchmarks
ZKAFKA_TEST_ZK=process python3 -m pytest -q -p no:cacheprovider --ignore=tests/containers "$@"
# The pure-Python path end to end, as on a machine with no compiler (about a minute and a half): the unit tests
# of the codec and of what calls it (records, log, consumer, producer: ~25 s; the main run switches paths in
# one process, this one never loads the core), then 0.8 clients, a ZooKeeper group, broker processes and a
# kill -9 drill, every process with ZKAFKA_NO_EXTENSIONS=1.
ZKAFKA_NO_EXTENSIONS=1 python3 -c "from zkafka.records import native; assert native.built is None"
ZKAFKA_NO_EXTENSIONS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/unit/records tests/unit/log tests/unit/consumer tests/unit/producer
ZKAFKA_NO_EXTENSIONS=1 ZKAFKA_TEST_ZK=process python3 -m pytest -q -p no:cacheprovider \
  tests/integration/test_clients08.py tests/integration/test_consumer08_group.py \
  tests/integration/test_broker08_process.py \
  "tests/integration/test_replication_drills.py::test_kill_9_of_the_leader_under_acks_all_load"
bash scripts/docker-setup.sh
bash scripts/build-images.sh
ZKAFKA_REQUIRE_DOCKER=1 python3 -m pytest -q -p no:cacheprovider tests/containers

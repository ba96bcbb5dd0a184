#!/usr/bin/env bash
# Install zkafka (and Apache ZooKeeper from Debian's packages), then run the demo: a real ZooKeeper, two
# brokers, a keyed producer and a consumer group on loopback, with a live view. Arguments go to
# `zkafka demo` (e.g. --duration 60, --no-ui, --consumers 3). Ctrl-C stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
exec python3 -m zkafka.cli demo "$@"

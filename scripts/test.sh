#!/usr/bin/env bash
# Install zkafka with its test extras and run the whole test suite (unit + integration against a real
# ZooKeeper and real brokers). Extra arguments go to pytest, e.g. `bash scripts/test.sh -m "not slow"`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh test
python3 -m ruff check zkafka tests benchmarks
python3 -m pytest -q -p no:cacheprovider "$@"

#!/usr/bin/env bash
# Install what zkafka needs on a fresh Debian machine: Apache ZooKeeper (and Java) from Debian, the package
# from this checkout. Pass "test" to add the test extras. Safe to run again: it skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if [ ! -f /usr/share/java/zookeeper.jar ] && [ -z "${ZOOKEEPER_HOME:-}" ]; then
  echo "installing Apache ZooKeeper from Debian's packages..." >&2
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq zookeeper >/dev/null
fi

# The native codec core is compiled by pip with the machine's C compiler and this Python's headers; without
# them zkafka still installs and runs on its pure-Python codec (it says so), so only add what is missing.
include="$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
if { ! command -v gcc >/dev/null || [ ! -f "$include/Python.h" ]; } && command -v apt-get >/dev/null; then
  echo "installing a C compiler and Python headers for the native codec core..." >&2
  as_root apt-get update -qq
  packages="gcc"
  case "$include" in /usr/include/*) packages="gcc python3-dev" ;; esac
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq $packages >/dev/null || true
fi

extras=""
if [ "${1:-}" = "test" ]; then extras="[test]"; fi
python3 -m pip install -q --disable-pip-version-check -e ".${extras}"

# The tests drive real npm clients, pinned, installed into a cache outside the checkout (tests/support/node.py
# reads it). Offline, the install says so and the Node tests fail naming what is missing.
if [ "${1:-}" = "test" ]; then
  if ! command -v npm >/dev/null && command -v apt-get >/dev/null; then
    echo "installing Node.js and npm from Debian's packages..." >&2
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq nodejs npm >/dev/null || true
  fi
  node_cache="${ZKAFKA_NODE_CACHE:-$HOME/.cache/zkafka-node}"
  node_packages="kafkajs@2.2.4 kafka-node@5.0.0"
  if ! grep -qs '"kafkajs": "2.2.4"' "$node_cache/package.json" \
      || ! grep -qs '"kafka-node": "5.0.0"' "$node_cache/package.json" \
      || [ ! -d "$node_cache/node_modules/kafka-node" ]; then
    mkdir -p "$node_cache"
    npm install --prefix "$node_cache" --no-audit --no-fund --omit=optional --save-exact $node_packages >/dev/null \
      || echo "npm install of $node_packages into $node_cache failed: the Node client tests will fail" >&2
  fi
fi

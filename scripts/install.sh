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

extras=""
if [ "${1:-}" = "test" ]; then extras="[test]"; fi
python3 -m pip install -q --disable-pip-version-check -e ".${extras}"

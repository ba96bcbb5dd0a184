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

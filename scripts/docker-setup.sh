#!/usr/bin/env bash
# Install and start a Docker engine (Debian's docker.io) plus a compose command, for the container tests
# and fault drills. Safe to run again: it skips what is there. Exits non-zero, saying why, when the engine
# cannot be made to answer `docker info`.
set -euo pipefail

LOG=${DOCKERD_LOG:-/var/log/zkafka-dockerd.log}
WAIT=${DOCKERD_WAIT:-60}

say() { echo "docker-setup: $*" >&2; }
die() { say "error: $*"; exit 1; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
apt_install() {
  say "installing $*"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}

need=()
command -v dockerd >/dev/null || need+=(docker.io)
# Compose v2 (`docker compose`) where it exists; Debian bookworm has only the v1 `docker-compose`.
docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null || need+=(docker-compose)
if [ ${#need[@]} -gt 0 ]; then apt_install "${need[@]}" || die "cannot install ${need[*]} with apt-get"; fi

if docker info >/dev/null 2>&1; then
  say "engine already running ($(docker version -f '{{.Server.Version}}'))"
  exit 0
fi

if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
  say "starting docker with systemctl"
  as_root systemctl start docker || say "systemctl start docker failed; see journalctl -u docker"
elif ! pgrep -x dockerd >/dev/null; then
  say "starting dockerd (log: $LOG)"
  as_root sh -c "nohup setsid dockerd >>'$LOG' 2>&1 </dev/null &"
else
  say "dockerd is running but does not answer yet"
fi

deadline=$((SECONDS + WAIT))
until docker info >/dev/null 2>&1; do
  if [ $SECONDS -ge $deadline ]; then
    reason=$(docker info 2>&1 | tail -3 || true)
    say "the engine did not answer within ${WAIT}s: $reason"
    if [ -f "$LOG" ]; then say "last lines of $LOG:"; tail -25 "$LOG" >&2; fi
    pgrep -x dockerd >/dev/null || say "no dockerd process is running (it exited)"
    exit 1
  fi
  sleep 0.5
done
say "engine ready ($(docker version -f '{{.Server.Version}}'))"

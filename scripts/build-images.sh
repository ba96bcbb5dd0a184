#!/usr/bin/env bash
# Build zkafka's container images with no container registry: a Debian bookworm base made by debootstrap
# (from Debian's package mirror) and `docker import`, then the ZooKeeper and zkafka images on top of it.
# An image that already exists is not built again, unless the files it is made of changed.
#
#   bash scripts/build-images.sh            # the three images below
#   FORCE=1 bash scripts/build-images.sh    # rebuild all three
#   BASE_IMAGE=debian:bookworm bash scripts/build-images.sh   # with a registry: pull the base instead
#   SPARK=1 bash scripts/build-images.sh    # also zkafka/spark:<version> (compose/docker-compose-cluster.yml)
#
# Images: zkafka/debian:bookworm, zkafka/zookeeper:3.8, zkafka/zkafka:<version from setup.cfg>; the
# variables BASE_IMAGE, ZOOKEEPER_IMAGE and ZKAFKA_IMAGE name them otherwise (a base under zkafka/ is
# made with debootstrap, any other is pulled). DEBIAN_MIRROR: the mirror debootstrap and apt use.
set -euo pipefail
cd "$(dirname "$0")/.."

BASE_IMAGE=${BASE_IMAGE:-zkafka/debian:bookworm}
ZOOKEEPER_IMAGE=${ZOOKEEPER_IMAGE:-zkafka/zookeeper:3.8}
VERSION=$(sed -n 's/^version *= *//p' setup.cfg)
ZKAFKA_IMAGE=${ZKAFKA_IMAGE:-zkafka/zkafka:$VERSION}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
FORCE=${FORCE:-0}
SPARK=${SPARK:-0}
SPARK_IMAGE=${SPARK_IMAGE:-zkafka/spark:$VERSION}

# Without the buildx plugin (Debian's docker.io) the classic builder is the one there is.
if ! docker buildx version >/dev/null 2>&1; then export DOCKER_BUILDKIT=0; fi

say() { echo "build-images: $*" >&2; }
die() { say "error: $*"; exit 1; }
# Run a step with its output in a log file; on failure show the end of the log and stop.
logged() {
  local log
  log=$(mktemp /var/tmp/zkafka-build.XXXXXX.log)
  if "$@" >"$log" 2>&1; then rm -f "$log"; return; fi
  tail -40 "$log" >&2
  die "failed: $* (whole log: $log)"
}
exists() { docker image inspect "$1" >/dev/null 2>&1; }
label() { docker image inspect -f "{{ index .Config.Labels \"$2\" }}" "$1" 2>/dev/null || true; }

docker info >/dev/null 2>&1 || die "the Docker engine does not answer (run scripts/docker-setup.sh)"

build_base() {
  if exists "$BASE_IMAGE" && [ "$FORCE" != 1 ]; then say "$BASE_IMAGE exists"; return; fi
  case "$BASE_IMAGE" in
    zkafka/*) ;;  # ours: made below
    *) say "pulling $BASE_IMAGE"; docker pull -q "$BASE_IMAGE" >/dev/null || die "cannot pull $BASE_IMAGE"; return ;;
  esac
  if ! command -v debootstrap >/dev/null; then
    say "installing debootstrap"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  fi
  local root
  root=$(mktemp -d /var/tmp/zkafka-rootfs.XXXXXX)
  trap 'rm -rf "$root"; trap - RETURN' RETURN
  say "debootstrap --variant=minbase bookworm from $DEBIAN_MIRROR"
  logged debootstrap --variant=minbase bookworm "$root" "$DEBIAN_MIRROR"
  # Like Debian's official image: updates and security sources, no recommends, no docs, no kept .debs.
  cat >"$root/etc/apt/sources.list" <<SRC
deb $DEBIAN_MIRROR bookworm main
deb $DEBIAN_MIRROR bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
SRC
  echo 'APT::Install-Recommends "false"; APT::Install-Suggests "false";' >"$root/etc/apt/apt.conf.d/90zkafka"
  echo 'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb || true"; };' >>"$root/etc/apt/apt.conf.d/90zkafka"
  printf 'path-exclude /usr/share/doc/*\npath-exclude /usr/share/man/*\npath-exclude /usr/share/locale/*\n' \
    >"$root/etc/dpkg/dpkg.cfg.d/90zkafka-nodoc"
  # Files only: package scripts (a JRE's update-alternatives) expect the man directories to exist.
  find "$root"/usr/share/doc "$root"/usr/share/man "$root"/usr/share/locale -type f -delete
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/tmp/*
  say "docker import $BASE_IMAGE"
  tar -C "$root" --numeric-owner -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["/bin/bash"]' - "$BASE_IMAGE" >/dev/null
}

# An image made from files of this repository is rebuilt when they change (a digest kept as a label).
digest_of() {
  find "$@" -type f -not -path '*/__pycache__/*' -not -name '*.pyc' -print0 \
    | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16
}
up_to_date() { [ "$FORCE" != 1 ] && [ "$(label "$1" org.zkafka.source)" = "$2" ]; }

build_zookeeper() {
  local digest
  digest=$(digest_of compose/zookeeper)
  if up_to_date "$ZOOKEEPER_IMAGE" "$digest"; then say "$ZOOKEEPER_IMAGE exists"; return; fi
  say "building $ZOOKEEPER_IMAGE"
  logged docker build --force-rm --build-arg BASE_IMAGE="$BASE_IMAGE" --label org.zkafka.source="$digest" \
    -t "$ZOOKEEPER_IMAGE" compose/zookeeper
}

# The dependency wheels, downloaded on the host (whose pip knows how to reach PyPI here), for CPython 3.11
# on glibc: the build then needs no index.
download_wheels() {
  local dest=$1 arch requirements
  arch=$(uname -m)
  mapfile -t requirements < <(python3 -c '
import configparser
c = configparser.ConfigParser()
c.read("setup.cfg")
print("\n".join(r.strip() for r in c["options"]["install_requires"].splitlines() if r.strip()))')
  local platforms=()
  for v in 2_36 2_35 2_34 2_31 2_28 2_27 2_24 2_17 2_12 2_5; do platforms+=(--platform "manylinux_${v}_$arch"); done
  logged python3 -m pip download --disable-pip-version-check -d "$dest" --only-binary=:all: \
    --python-version 3.11 --implementation cp --abi cp311 --abi abi3 --abi none "${platforms[@]}" \
    setuptools wheel "${requirements[@]}"
}

build_zkafka() {
  local digest ctx
  digest=$(digest_of setup.cfg pyproject.toml README.md zkafka config compose/zkafka)
  if up_to_date "$ZKAFKA_IMAGE" "$digest"; then say "$ZKAFKA_IMAGE exists (source $digest)"; return; fi
  say "building $ZKAFKA_IMAGE (source $digest)"
  ctx=$(mktemp -d /var/tmp/zkafka-context.XXXXXX)
  trap 'rm -rf "$ctx"; trap - RETURN' RETURN
  mkdir -p "$ctx/compose"
  cp -r setup.cfg pyproject.toml README.md zkafka config "$ctx/"
  cp -r compose/zkafka "$ctx/compose/"
  find "$ctx" -name __pycache__ -prune -exec rm -rf {} +
  download_wheels "$ctx/compose/zkafka/wheels"
  logged docker build --force-rm --build-arg BASE_IMAGE="$BASE_IMAGE" --build-arg PIP_NO_INDEX=1 \
    --label org.zkafka.source="$digest" -f "$ctx/compose/zkafka/Dockerfile" -t "$ZKAFKA_IMAGE" "$ctx"
}

# Spark for the compose profile "cluster": the zkafka image with Java and the spark extra (about 1 GB).
build_spark() {
  local digest ctx
  digest=$(digest_of compose/spark)-$(docker image inspect -f '{{.Id}}' "$ZKAFKA_IMAGE" | cut -c8-19)
  if up_to_date "$SPARK_IMAGE" "$digest"; then say "$SPARK_IMAGE exists"; return; fi
  say "building $SPARK_IMAGE"
  ctx=$(mktemp -d /var/tmp/zkafka-spark.XXXXXX)
  trap 'rm -rf "$ctx"; trap - RETURN' RETURN
  cp compose/spark/Dockerfile "$ctx/"
  # The host's own pyspark, py4j and pyarrow versions (the ones the tests ran); pyspark comes as a source
  # distribution, hence --no-deps with the dependencies named here.
  mapfile -t requirements < <(python3 -c '
from importlib.metadata import version
print("\n".join(f"{p}=={version(p)}" for p in ("pyspark", "py4j", "pyarrow")))')
  logged python3 -m pip download --disable-pip-version-check -d "$ctx/wheels" --no-deps \
    --python-version 3.11 --implementation cp --abi cp311 --abi abi3 --abi none \
    --platform "manylinux_2_28_$(uname -m)" --platform "manylinux_2_17_$(uname -m)" --platform any "${requirements[@]}"
  logged docker build --force-rm --build-arg ZKAFKA_IMAGE="$ZKAFKA_IMAGE" --label org.zkafka.source="$digest" \
    -t "$SPARK_IMAGE" "$ctx"
}

start=$SECONDS
build_base
build_zookeeper
build_zkafka
if [ "$SPARK" = 1 ]; then build_spark; fi
docker image prune -f --filter label=org.zkafka.source >/dev/null  # the versions these replaced
say "ready in $((SECONDS - start))s: $BASE_IMAGE $ZOOKEEPER_IMAGE $ZKAFKA_IMAGE$([ "$SPARK" = 1 ] && echo " $SPARK_IMAGE")"

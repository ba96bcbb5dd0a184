#!/usr/bin/env bash
# Like Kafka's bin/zookeeper-server-start.sh: zookeeper-server-start.sh zookeeper.properties
if [ $# -ne 1 ]; then
  echo "USAGE: $0 zookeeper.properties" >&2
  exit 1
fi
exec python3 -m zkafka.cli zookeeper start "$1"

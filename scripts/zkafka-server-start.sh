#!/usr/bin/env bash
# Like Kafka's bin/kafka-server-start.sh: zkafka-server-start.sh server.properties [--override key=value ...]
if [ $# -lt 1 ]; then
  echo "USAGE: $0 server.properties [--override key=value ...]" >&2
  exit 1
fi
exec python3 -m zkafka.cli broker start "$@"

#!/usr/bin/env bash
# Like Kafka's bin/kafka-server-stop.sh: a clean shutdown (SIGTERM) of every local zkafka broker.
pkill -TERM -f "zkafka(\.cli)? broker start" || echo "no zkafka broker to stop" >&2

"""Third-party clients on a zkafka 0.8 broker, one run per process, for ``benchmarks/compare.py``.

    python benchmarks/third_party_clients.py kafka-python produce --port 9092 --topic t --messages 100000
    python benchmarks/third_party_clients.py confluent-kafka consume --port 9092 --topic t --messages 100000

Prints one JSON object: ``{"messages": n, "seconds": s, "messages_per_sec": r}``. kafka-python is told the
broker is 0.8.2 (``api_version``); librdkafka (confluent-kafka) is told so with ``api.version.request=false``
and ``broker.version.fallback=0.8.2.2``. Producers batch ``--batch-size`` messages a request as zkafka's
sync producer does, with ``--acks`` (1 unless told; 0 is 0.8.2's producer default); consumers read partition 0 from the start with 1 MiB fetches, no group.
``seconds`` is steady state, as zkafka's perf tools time theirs: the clock starts once the client has connected
and has the metadata (a producer: its first message acknowledged; a consumer: the partition's first offset
looked up on its leader).
"""

from __future__ import annotations

import argparse
import json
import time

FETCH_SIZE = 1024 * 1024
SOCKET_BUFFER = 1024 * 1024  # as zkafka's clients get in compare.py
ENTRY_OVERHEAD = 26  # a 0.8 entry around a null-key value: offset, size, crc, magic, attributes, lengths


def kafka_python_produce(port: int, topic: str, messages: int, size: int, batch: int, acks: int) -> float:
    from kafka import KafkaProducer

    producer = KafkaProducer(
        bootstrap_servers=f"127.0.0.1:{port}",
        api_version=(0, 8, 2),
        acks=acks,
        batch_size=batch * (size + ENTRY_OVERHEAD),
        linger_ms=5,
        buffer_memory=256 * 1024 * 1024,
        max_request_size=FETCH_SIZE,
        send_buffer_bytes=SOCKET_BUFFER,
    )
    payload = b"x" * size
    producer.send(topic, payload).get(30)  # metadata and the connection before the clock starts (acks=0:
    # the future resolves once the request is written)
    began = time.perf_counter()
    for _ in range(messages):
        producer.send(topic, payload)
    producer.flush()
    elapsed = time.perf_counter() - began
    producer.close()
    return elapsed


def kafka_python_consume(port: int, topic: str, messages: int) -> float:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(
        bootstrap_servers=f"127.0.0.1:{port}",
        api_version=(0, 8, 2),
        group_id=None,
        enable_auto_commit=False,
        max_partition_fetch_bytes=FETCH_SIZE,
        fetch_max_bytes=FETCH_SIZE,
        receive_buffer_bytes=SOCKET_BUFFER,
    )
    partition = TopicPartition(topic, 0)
    consumer.assign([partition])
    consumer.seek(partition, consumer.beginning_offsets([partition])[partition])  # connect, metadata, lookup
    got = 0
    began = time.perf_counter()
    while got < messages:
        for records in consumer.poll(timeout_ms=1000, max_records=100_000).values():
            got += len(records)
    elapsed = time.perf_counter() - began
    consumer.close()
    return elapsed


LIBRDKAFKA_08 = {
    "api.version.request": False,
    "broker.version.fallback": "0.8.2.2",
    "socket.send.buffer.bytes": SOCKET_BUFFER,
    "socket.receive.buffer.bytes": SOCKET_BUFFER,
}


def confluent_produce(port: int, topic: str, messages: int, size: int, batch: int, acks: int) -> float:
    from confluent_kafka import Producer

    producer = Producer(
        {
            "bootstrap.servers": f"127.0.0.1:{port}",
            **LIBRDKAFKA_08,
            "acks": acks,
            "batch.num.messages": batch,
            "linger.ms": 5,
            "queue.buffering.max.messages": 2_000_000,
            "queue.buffering.max.kbytes": 2_000_000,
        }
    )
    payload = b"x" * size
    producer.produce(topic, payload)
    producer.flush(30)
    began = time.perf_counter()
    for _ in range(messages):
        try:
            producer.produce(topic, payload)
        except BufferError:
            producer.poll(0.01)
            producer.produce(topic, payload)
    if producer.flush(120):
        raise RuntimeError("confluent-kafka: messages left undelivered")
    return time.perf_counter() - began


def confluent_consume(port: int, topic: str, messages: int) -> float:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": f"127.0.0.1:{port}",
            **LIBRDKAFKA_08,
            "group.id": "compare",
            "enable.auto.commit": False,
            "fetch.message.max.bytes": FETCH_SIZE,
        }
    )
    low, _ = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=30)  # connect, metadata, lookup
    consumer.assign([TopicPartition(topic, 0, low)])
    got = 0
    began = time.perf_counter()
    deadline = began + 300
    while got < messages and time.perf_counter() < deadline:
        for message in consumer.consume(num_messages=100_000, timeout=1.0):
            if message.error() is None:
                got += 1
    elapsed = time.perf_counter() - began
    consumer.close()
    if got < messages:
        raise RuntimeError(f"confluent-kafka: read {got} of {messages} messages")
    return elapsed


CLIENTS = {
    ("kafka-python", "produce"): kafka_python_produce,
    ("kafka-python", "consume"): kafka_python_consume,
    ("confluent-kafka", "produce"): confluent_produce,
    ("confluent-kafka", "consume"): confluent_consume,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("client", choices=["kafka-python", "confluent-kafka"])
    parser.add_argument("action", choices=["produce", "consume"])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--messages", type=int, required=True)
    parser.add_argument("--message-size", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=200)
    parser.add_argument("--acks", type=int, default=1, choices=[-1, 0, 1], help="produce only")
    opts = parser.parse_args()
    run = CLIENTS[opts.client, opts.action]
    if opts.action == "produce":
        seconds = run(opts.port, opts.topic, opts.messages, opts.message_size, opts.batch_size, opts.acks)
    else:
        seconds = run(opts.port, opts.topic, opts.messages)
    print(
        json.dumps(
            {"messages": opts.messages, "seconds": seconds, "messages_per_sec": opts.messages / seconds}
        )
    )


if __name__ == "__main__":
    main()

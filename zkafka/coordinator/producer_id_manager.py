"""Producer ids for InitProducerId (KIP-98), handed out from blocks of 1000 each broker takes from ZooKeeper, as
Kafka's ``ProducerIdManager`` (2.x): ``/latest_producer_id_block`` holds the last block taken,
``{"version":1,"broker":<id>,"block_start":"<first>","block_end":"<last>"}``; a broker takes the next block
with a write conditional on the znode's version, reading again when another broker took one first. Ids are
unique across the cluster and never reused (a broker's unused rest of a block is lost when it stops).
"""

from __future__ import annotations

import json
import logging
from typing import Any, NamedTuple

from kazoo.exceptions import BadVersionError, NodeExistsError

from zkafka.errors import KafkaError

log = logging.getLogger(__name__)

PRODUCER_ID_BLOCK_PATH = "/latest_producer_id_block"
PRODUCER_ID_BLOCK_SIZE = 1000
BLOCK_VERSION = 1


class ProducerIdBlock(NamedTuple):
    broker: int
    block_start: int
    block_end: int


def encode_block(block: ProducerIdBlock) -> str:
    """The znode value, as Kafka writes it (the ids as strings)."""
    return json.dumps(
        {
            "version": BLOCK_VERSION,
            "broker": block.broker,
            "block_start": str(block.block_start),
            "block_end": str(block.block_end),
        },
        separators=(",", ":"),
    )


def parse_block(data: str) -> ProducerIdBlock:
    """A block from the znode's JSON; KafkaError naming the znode when it is not one."""
    try:
        value = json.loads(data)
        return ProducerIdBlock(int(value["broker"]), int(value["block_start"]), int(value["block_end"]))
    except (ValueError, KeyError, TypeError) as exc:
        raise KafkaError(f"{PRODUCER_ID_BLOCK_PATH} holds no producer id block: {data!r}") from exc


class ProducerIdManager:
    """Producer ids of this broker's current block; the next block taken from ZooKeeper when it runs out."""

    def __init__(self, broker_id: int, zk_client: Any) -> None:
        self.broker_id = broker_id
        self.zk_client = zk_client
        self._block: ProducerIdBlock | None = None
        self._next = -1

    def generate_producer_id(self) -> int:
        """A producer id no broker of the cluster handed out before."""
        if self._block is None or self._next > self._block.block_end:
            self._block = self._take_block()
            self._next = self._block.block_start
        self._next += 1
        return self._next - 1

    def _take_block(self) -> ProducerIdBlock:
        zk = self.zk_client
        while True:
            zk.ensure_path(PRODUCER_ID_BLOCK_PATH)
            data, stat = zk.get(PRODUCER_ID_BLOCK_PATH)
            start = parse_block(data.decode()).block_end + 1 if data else 0
            block = ProducerIdBlock(self.broker_id, start, start + PRODUCER_ID_BLOCK_SIZE - 1)
            try:
                zk.set(PRODUCER_ID_BLOCK_PATH, encode_block(block).encode(), version=stat.version)
            except (BadVersionError, NodeExistsError):
                continue  # another broker took a block since the read: read again
            log.info("took producer id block %d..%d from %s", start, block.block_end, PRODUCER_ID_BLOCK_PATH)
            return block

"""KafkaRequestHandlers: one short method per request type, each a call into the LogManager.

A handler returns the response parts (bytes and file regions) or None for produce requests, which 0.7
never answers. An exception escaping a handler makes the server close that connection.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

from zkafka.broker.log_manager import LogManager
from zkafka.broker.server import FileRegion, Response
from zkafka.errors import KafkaError, MessageSizeTooLargeError, code_for_error
from zkafka.protocol.v07 import (
    EARLIEST_TIME,
    FETCH,
    LATEST_TIME,
    MULTIFETCH,
    MULTIPRODUCE,
    OFFSETS,
    PRODUCE,
    RANDOM_PARTITION,
    REQUEST_NAMES,
    FetchRequest,
    OffsetRequest,
    ProducerRequest,
    decode_request,
    encode_offsets_response,
    response_header,
)

log = logging.getLogger(__name__)

_EMPTY: list[bytes | FileRegion] = []


class KafkaRequestHandlers:
    """Maps a request type to the log operation that serves it."""

    def __init__(
        self, log_manager: LogManager, on_log_failure: Callable[[OSError], None] | None = None
    ) -> None:
        self.log_manager = log_manager
        self.on_log_failure = on_log_failure
        self._dispatch = {
            PRODUCE: self.handle_producer_request,
            MULTIPRODUCE: self.handle_multi_producer_request,
            FETCH: self.handle_fetch_request,
            MULTIFETCH: self.handle_multi_fetch_request,
            OFFSETS: self.handle_offset_request,
        }

    def __call__(self, request_type: int, body: memoryview) -> Response | None:
        request = decode_request(request_type, body)
        log.debug("%s %s", REQUEST_NAMES[request_type], request)
        return self._dispatch[request_type](request)

    # -- produce ------------------------------------------------------------------------------------------

    def handle_producer_request(self, request: ProducerRequest) -> None:
        self._append(request)

    def handle_multi_producer_request(self, request) -> None:
        for produce in request.produces:
            self._append(produce)

    def _append(self, request: ProducerRequest) -> None:
        partition = request.partition
        if partition == RANDOM_PARTITION:
            partition = self.log_manager.choose_partition(request.topic)
        target = self.log_manager.get_or_create_log(request.topic, partition)
        try:
            target.append(request.messages)
        except MessageSizeTooLargeError as exc:
            log.warning("dropping a produce request to %s-%d: %s", request.topic, partition, exc)
        except OSError as exc:
            if self.on_log_failure is not None:
                self.on_log_failure(exc)
            raise

    # -- fetch --------------------------------------------------------------------------------------------

    def handle_fetch_request(self, request: FetchRequest) -> Response:
        error, region = self._read_message_set(request)
        size = region.length if region else 0
        return [response_header(error, size), region] if region else [response_header(error, 0)]

    def handle_multi_fetch_request(self, request) -> Response:
        parts: list[bytes | FileRegion] = []
        total = 0
        for fetch in request.fetches:
            error, region = self._read_message_set(fetch)
            size = region.length if region else 0
            parts.append(response_header(error, size))
            if region:
                parts.append(region)
            total += 6 + size
        return [response_header(0, total), *parts]

    def _read_message_set(self, request: FetchRequest) -> tuple[int, FileRegion | None]:
        try:
            topic_log = self.log_manager.get_log(request.topic, request.partition)
            if topic_log is None:
                return 0, None
            segment, position, length = topic_log.read_region(request.offset, request.max_size)
            if length <= 0:
                return 0, None
            # A private descriptor: the cleaner may close the segment while the bytes are being sent.
            return 0, FileRegion(os.dup(segment.fileno()), position, length)
        except KafkaError as exc:
            log.debug("fetch %s failed: %s", request, exc)
            return code_for_error(exc), None
        except Exception as exc:
            log.error("fetch %s failed: %s", request, exc)
            return -1, None

    # -- offsets ------------------------------------------------------------------------------------------

    def handle_offset_request(self, request: OffsetRequest) -> Response:
        topic_log = self.log_manager.get_log(request.topic, request.partition)
        if topic_log is None:
            offsets = [0] if request.time in (LATEST_TIME, EARLIEST_TIME) else []
        else:
            offsets = topic_log.offsets_before(request.time, request.max_offsets)
        return [encode_offsets_response(offsets)]

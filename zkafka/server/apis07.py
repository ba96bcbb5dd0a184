"""KafkaRequestHandlers: one short method per 0.7 request, each a call into the LogManager.

The socket server hands over a decoded request (``protocol.v07``); a handler returns the response frame's
parts (bytes and file regions) or None for produce requests, which 0.7 never answers. An exception escaping a
handler makes the server close that connection.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

from zkafka.errors import KafkaError, MessageSizeTooLargeError, code_for_error
from zkafka.log.log_manager07 import LogManager
from zkafka.network.send import FileRegion, Response
from zkafka.protocol import EARLIEST_TIME, LATEST_TIME
from zkafka.protocol.v07 import (
    RANDOM_PARTITION,
    FetchRequest,
    FetchResponse,
    MultiFetchRequest,
    MultiFetchResponse,
    MultiProducerRequest,
    OffsetRequest,
    OffsetResponse,
    ProducerRequest,
    Request,
)

log = logging.getLogger(__name__)


class KafkaRequestHandlers:
    """Maps a request to the log operation that serves it."""

    def __init__(
        self,
        log_manager: LogManager,
        on_log_failure: Callable[[OSError], None] | None = None,
        on_sent: Callable[[str, int], None] | None = None,
    ) -> None:
        self.log_manager = log_manager
        self.on_log_failure = on_log_failure
        self.on_sent = on_sent  # told the topic and size of every log region a fetch response sends (metrics)
        self._dispatch = {
            ProducerRequest: self.handle_producer_request,
            MultiProducerRequest: self.handle_multi_producer_request,
            FetchRequest: self.handle_fetch_request,
            MultiFetchRequest: self.handle_multi_fetch_request,
            OffsetRequest: self.handle_offset_request,
        }

    def __call__(self, request: Request) -> Response | None:
        log.debug("%r", request)
        return self._dispatch[type(request)](request)

    # -- produce ------------------------------------------------------------------------------------------

    def handle_producer_request(self, request: ProducerRequest) -> None:
        self._append(request)

    def handle_multi_producer_request(self, request: MultiProducerRequest) -> None:
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
        return self._read_message_set(request).encode_frame()

    def handle_multi_fetch_request(self, request: MultiFetchRequest) -> Response:
        return MultiFetchResponse(0, [self._read_message_set(f) for f in request.fetches]).encode_frame()

    def _read_message_set(self, request: FetchRequest) -> FetchResponse:
        try:
            topic_log = self.log_manager.get_log(request.topic, request.partition)
            if topic_log is None:
                return FetchResponse(0, b"")
            segment, position, length = topic_log.read_region(request.offset, request.max_size)
            if length <= 0:
                return FetchResponse(0, b"")
            if self.on_sent is not None:
                self.on_sent(request.topic, length)
            # A private descriptor: the cleaner may close the segment while the bytes are being sent.
            return FetchResponse(0, FileRegion(os.dup(segment.fileno()), position, length))
        except KafkaError as exc:
            log.debug("fetch %s failed: %s", request, exc)
            return FetchResponse(code_for_error(exc), b"")
        except Exception as exc:
            log.error("fetch %s failed: %s", request, exc)
            return FetchResponse(-1, b"")

    # -- offsets ------------------------------------------------------------------------------------------

    def handle_offset_request(self, request: OffsetRequest) -> Response:
        topic_log = self.log_manager.get_log(request.topic, request.partition)
        if topic_log is None:
            offsets = [0] if request.time in (LATEST_TIME, EARLIEST_TIME) else []
        else:
            offsets = topic_log.offsets_before(request.time, request.max_offsets)
        return OffsetResponse(0, offsets).encode_frame()

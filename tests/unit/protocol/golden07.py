"""Golden bytes of the 0.7 wire protocol, shared by the protocol, message and broker tests: the reference's
worked examples (``kafka-0.7-reference.md``) and frames written by hand from the layouts, never by the codec."""

from __future__ import annotations

from tests.unit.protocol.golden08 import hexbytes

# The worked message entry: magic 1, no compression, payload "hello".
HELLO_ENTRY = hexbytes("0000000b | 01 | 00 | 3610a686 | 68656c6c6f")

# -- requests: int32 size | int16 type | body --------------------------------------------------------------------
# PRODUCE test/0 with the hello entry.
PRODUCE_FRAME = hexbytes("0000001f | 0000 | 0004 74657374 | 00000000 | 0000000f") + HELLO_ENTRY
# FETCH test/0 offset 0 max 1 MiB.
FETCH_FRAME = hexbytes("00000018 | 0001 | 0004 74657374 | 00000000 | 0000000000000000 | 00100000")
# OFFSETS test/0 time -1 max 1.
OFFSETS_FRAME = hexbytes("00000018 | 0004 | 0004 74657374 | 00000000 | ffffffffffffffff | 00000001")
# MULTIFETCH of the one FETCH above.
MULTIFETCH_FRAME = hexbytes("0000001a | 0002 | 0001 | 0004 74657374 | 00000000 | 0000000000000000 | 00100000")
# MULTIPRODUCE of the one PRODUCE above.
MULTIPRODUCE_FRAME = hexbytes("00000021 | 0003 | 0001 | 0004 74657374 | 00000000 | 0000000f") + HELLO_ENTRY

# -- responses: int32 size | int16 error | body ------------------------------------------------------------------
# FETCH: the hello entry.
FETCH_RESPONSE = hexbytes("00000011 | 0000") + HELLO_ENTRY
# MULTIFETCH: the hello entry, then error 3 (invalid partition) with no data.
MULTIFETCH_RESPONSE = hexbytes("0000001d | 0000 | 00000011 0000") + HELLO_ENTRY + hexbytes("00000002 0003")
# OFFSETS: [15] after the hello entry was appended.
OFFSETS_RESPONSE = hexbytes("0000000e | 0000 | 00000001 | 000000000000000f")

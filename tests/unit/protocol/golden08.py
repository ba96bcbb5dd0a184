"""Golden bytes shared by the 0.8/0.9 protocol tests: written by hand from the layouts, never by the codec."""

from __future__ import annotations

import re


def hexbytes(text: str) -> bytes:
    """Bytes from hex written with spaces, newlines, ``|`` separators and ``# comments``."""
    return bytes.fromhex(re.sub(r"#[^\n]*|[\s|]", "", text))


# The sheet's worked message-set entry (§2.1): offset 0, null key, value "hello" (31 bytes).
HELLO_ENTRY = hexbytes("00000000 00000000 | 00000013 | 87a77ab2 | 00 | 00 | ffffffff | 00000005 | 68656c6c6f")
# The sheet's consumer protocol examples (§4.9): metadata ["t"] and assignment {t: [0, 1]}.
METADATA_T = hexbytes("0000 | 00000001 | 0001 74 | 00000000")
ASSIGNMENT_T01 = hexbytes("0000 | 00000001 | 0001 74 | 00000002 | 00000000 | 00000001 | 00000000")
# Every request below: correlation id 7, client id "cli".
CORRELATION_ID = 7
CLIENT_ID = "cli"

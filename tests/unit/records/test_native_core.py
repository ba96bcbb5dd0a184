"""The native codec core's own functions: its CRC-32 and CRC-32C against zlib's and the crc32c package's, the
producer's type check, how a ``Layout`` refuses what it cannot build, and the decoder's objects left out of
the cyclic GC. They need the built extension, so tests/unit/records/conftest.py collects this module only
where it is built and enabled; test_native.py compares the two paths and runs on either.
"""

import gc
import zlib

import pytest
from crc32c import crc32c
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zkafka.consumer.stream07 import _LAYOUT as _LAYOUT07
from zkafka.records import native
from zkafka.records.message07 import Message, build_message_set
from zkafka.zk.paths07 import BrokerPartition

P = BrokerPartition(0, 0)
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(autouse=True, scope="module")
def _both_codec_paths():
    """The compiled core is called directly (overrides the directory's fixture)."""


@given(st.binary(max_size=300), st.integers(0, 2**32 - 1))
def test_crc32_is_zlibs(data, start):
    assert native.built.crc32(data) == zlib.crc32(data)
    assert native.built.crc32(data, start) == zlib.crc32(data, start)


@SETTINGS
@given(st.binary(min_size=48, max_size=3000), st.integers(0, 15), st.integers(0, 2**32 - 1))
def test_crc32_of_long_data_is_zlibs(data, skip, start):
    # Long enough for the folding path (64 bytes on), at every alignment, with a tail of 0 to 15 bytes.
    view = memoryview(data)[skip:]
    assert native.built.crc32(view, start) == zlib.crc32(view, start)


@SETTINGS
@given(st.binary(max_size=3000), st.integers(0, 7))
def test_crc32c_is_the_crc32c_packages(data, skip):
    # Three 256-byte lanes at a time from 768 bytes on, then eight bytes, then one, at every alignment.
    view = memoryview(data)[skip:]
    assert native.built.crc32c(view) == crc32c(view)


class _Bytes(bytes):
    pass


def test_raw_values_is_the_producers_exact_type_check():
    raw = {bytes, type(None)}
    cases = [
        [],
        (),
        [b"a", None],
        (b"a",),
        [b"a", bytearray(b"b")],
        [memoryview(b"a")],
        ["s"],
        [_Bytes(b"a")],
        [5],
    ]
    for values in cases:
        assert native.built.raw_values(values) is (set(map(type, values)) <= raw), values
    assert native.built.raw_values(iter([b"a"])) is False  # a list or a tuple only


def test_layout_refuses_what_it_cannot_build():
    Layout = native.built.Layout
    with pytest.raises(ValueError, match="unknown message field"):
        Layout(tuple, ("offset", "colour"))
    with pytest.raises(TypeError, match="not a writable slot"):
        Layout(Message, (("codec", "magic"),))
    with pytest.raises(TypeError, match="pairs"):
        Layout(Message, ("magic",))
    with pytest.raises(ValueError, match="constants"):
        native.built.decode(build_message_set([b"x"]), 7, 0, 0, 0, Layout(tuple, (0, 1)), ("only one",), [])
    with pytest.raises(ValueError, match="unknown line"):
        native.built.scan(b"", 9, 0, -1)
    with pytest.raises(ValueError, match="outside"):
        native.built.scan(b"abc", 7, 4, -1)


def test_decoded_objects_and_their_list_are_left_to_reference_counting():
    """The decoder's objects hold only leaves and constants: the cyclic GC need not walk them (nor the list)."""
    data = build_message_set([b"a", b"b", b"c"])
    out: list = []
    native.built.decode(data, 7, 0, 0, -(2**63), _LAYOUT07, ("t", P), out)
    assert len(out) == 3 and not gc.is_tracked(out) and not any(gc.is_tracked(m) for m in out)
    limited: list = []
    stop, _ = native.built.decode(data, 7, 0, 0, -(2**63), _LAYOUT07, ("t", P), limited, 2)
    assert [m.payload for m in limited] == [b"a", b"b"] and stop == len(build_message_set([b"a", b"b"]))

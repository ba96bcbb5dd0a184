import pytest

from zkafka.records import native

# The compiled core's own functions are tested where it is built and enabled; without it (no compiler, or
# ZKAFKA_NO_EXTENSIONS=1) there is nothing of it to test, and every other module runs on the pure path.
collect_ignore = [] if native.built is not None else ["test_native_core.py"]


@pytest.fixture(autouse=True, scope="module")
def _both_codec_paths(codec_path):
    """Every records test runs on the native codec core and on the pure-Python codec."""
    return codec_path

import pytest


@pytest.fixture(autouse=True, scope="module")
def _both_codec_paths(codec_path):
    """Every records test runs on the native codec core and on the pure-Python codec."""
    return codec_path

import pytest

from tests.support.consumers import check_collectors


@pytest.fixture(autouse=True)
def _stream_errors_fail_the_test():
    """A consumer stream error that no test reads fails the test that made the Collector."""
    yield
    check_collectors()

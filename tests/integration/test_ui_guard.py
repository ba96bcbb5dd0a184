"""The web views refuse what a page of another site could send: a POST without the page's token or with a
foreign Origin, and any request whose Host is not 127.0.0.1/localhost (DNS rebinding); refused actions change
nothing (the broker stays registered), the page's own token works."""

from __future__ import annotations

import http.client
import urllib.error

import gevent
import pytest

from tests.support.web_view import page_token, post_action
from zkafka.ui.server import ClusterView, serve
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration


def status(port: int, method: str, path: str, **headers: str) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(method, path, headers=headers)
        return connection.getresponse().status
    finally:
        connection.close()


def off_hub(fn, *args, **kwargs):
    """``fn`` on a thread, so the view's server on this thread's hub answers it."""
    return gevent.get_hub().threadpool.apply(fn, args, kwargs)


def test_actions_need_the_page_token_a_matching_origin_and_host(start_broker, zk_connect, zk_client):
    broker = start_broker(0)
    view = ClusterView(zk_connect, interval=0.5, actions={"stop-broker": broker.stop}).start()
    server = serve(view, 0)
    port, url = server.server_port, f"http://127.0.0.1:{server.server_port}/"
    try:
        token = off_hub(page_token, url)
        for bad in ("", "guess"):  # no token, a wrong one
            with pytest.raises(urllib.error.HTTPError, match="403"):
                off_hub(post_action, url, "stop-broker", token=bad)
        with pytest.raises(urllib.error.HTTPError, match="403"):
            off_hub(post_action, url, "stop-broker", token, Origin="http://evil.example")
        assert off_hub(status, port, "GET", "/", Host=f"evil.example:{port}") == 403  # a rebound name
        assert off_hub(status, port, "GET", "/api/znode?path=/brokers", Host=f"evil.example:{port}") == 403
        assert off_hub(status, port, "GET", "/api/znode?path=/brokers", Host=f"localhost:{port}") == 200
        assert zk_client.exists("/brokers/ids/0")  # nothing refused acted
        assert off_hub(post_action, url, "stop-broker", token, Origin=f"http://127.0.0.1:{port}") == {
            "done": "stop-broker"
        }
        wait_until(lambda: not zk_client.exists("/brokers/ids/0"), 30, message="the broker stopped")
    finally:
        server.stop(timeout=1)
        view.close()

"""What the web views let in: requests naming them as ``127.0.0.1:<port>`` or ``localhost:<port>`` in their Host
header (a page of another site that rebinds its name to 127.0.0.1 sends its own name: DNS rebinding), and
state-changing requests only with the run's token (``X-Zkafka-Token``, carried by the served page) and no
foreign Origin (a form or script of another site)."""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Mapping
from typing import Any

TOKEN_HEADER = "X-Zkafka-Token"
TOKEN_META = '<meta name="zkafka-token" content="">'
READ_ONLY = ("GET", "HEAD")


def new_token() -> str:
    """A random token for one run of a view."""
    return secrets.token_urlsafe(24)


def with_token(page: bytes, token: str) -> bytes:
    """The page with ``token`` in its ``zkafka-token`` meta tag."""
    return page.replace(TOKEN_META.encode(), TOKEN_META.replace('content=""', f'content="{token}"').encode())


def refusal(environ: Mapping[str, Any], token: str) -> str | None:
    """Why a request is refused (403), or None when it may go on."""
    port = environ.get("SERVER_PORT", "")
    own = {f"127.0.0.1:{port}", f"localhost:{port}"}
    host = environ.get("HTTP_HOST", "")
    if host not in own:
        return f"Host {host!r} is not 127.0.0.1:{port} or localhost:{port}"
    if environ.get("REQUEST_METHOD", "GET") in READ_ONLY:
        return None
    origin = environ.get("HTTP_ORIGIN")
    if origin is not None and origin not in {f"http://{name}" for name in own}:
        return f"Origin {origin!r} is not this page's"
    sent = environ.get("HTTP_" + TOKEN_HEADER.upper().replace("-", "_"), "")
    if not hmac.compare_digest(sent.encode(), token.encode()):
        return f"no valid {TOKEN_HEADER} header"
    return None

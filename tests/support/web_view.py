"""Calls to a web view as a script would make them: the page's token read from the page, then sent."""

from __future__ import annotations

import json
import re
import urllib.request
from typing import Any

from zkafka.ui.guard import TOKEN_HEADER


def page_token(url: str) -> str:
    """The token the page at ``url`` carries in its ``zkafka-token`` meta tag."""
    with urllib.request.urlopen(url, timeout=10) as answer:
        return re.search(r'<meta name="zkafka-token" content="([^"]+)">', answer.read().decode()).group(1)


def post_action(url: str, name: str, token: str | None = None, **headers: str) -> Any:
    """``POST url/api/action/<name>`` with the page's token (read from the page when not given)."""
    sent = {TOKEN_HEADER: token if token is not None else page_token(url), **headers}
    request = urllib.request.Request(f"{url}api/action/{name}", method="POST", headers=sent)
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())

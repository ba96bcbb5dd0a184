"""Real npm clients (kafkajs, kafka-node) for tests: run one of tests/node/*.js with a deadline, read its JSON.

``scripts/install.sh test`` installs the pinned packages into a cache directory outside the checkout
(``$ZKAFKA_NODE_CACHE``, default ``~/.cache/zkafka-node``); nothing from npm is committed. A missing Node
or package fails the test with the reason and the command that fixes it, never skips it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

NODE_PACKAGES = {"kafkajs": "2.2.4", "kafka-node": "5.0.0"}
SCRIPTS = Path(__file__).resolve().parent.parent / "node"


def node_cache() -> Path:
    """Where scripts/install.sh put the npm packages."""
    return Path(os.environ.get("ZKAFKA_NODE_CACHE", Path.home() / ".cache" / "zkafka-node"))


def node_modules(package: str) -> Path:
    """The installed package's node_modules directory; fails the test naming what is missing."""
    if shutil.which("node") is None:
        pytest.fail("node is not installed: run `bash scripts/install.sh test`", pytrace=False)
    modules = node_cache() / "node_modules"
    manifest = modules / package / "package.json"
    if not manifest.exists():
        pytest.fail(f"{package} is not installed in {modules}: run `bash scripts/install.sh test`", pytrace=False)
    version = json.loads(manifest.read_text())["version"]
    if version != NODE_PACKAGES[package]:
        pytest.fail(f"{manifest}: {package} {version}, tests pin {NODE_PACKAGES[package]}", pytrace=False)
    return modules


def run_node(script: str, package: str, args: dict, timeout: float = 60.0) -> dict:
    """Run tests/node/``script`` with ``args`` (JSON on argv) and return the JSON object it prints last.

    The script must finish within ``timeout`` seconds; its stderr is shown when it fails or prints no JSON.
    """
    env = dict(os.environ, NODE_PATH=str(node_modules(package)))
    command = ["node", str(SCRIPTS / script), json.dumps(args)]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as timed_out:
        stderr = timed_out.stderr.decode(errors="replace") if timed_out.stderr else ""
        pytest.fail(f"{script} still running after {timeout:.0f} s; stderr:\n{stderr}", pytrace=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        pytest.fail(f"{script} exited {done.returncode}; stdout:\n{done.stdout}\nstderr:\n{done.stderr}", pytrace=False)
    return json.loads(lines[-1])

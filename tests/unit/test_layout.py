"""The layout rules of the package map (README "The design, module by module"), checked on the source tree.

- no import cycles between modules or between packages (imports under ``TYPE_CHECKING`` count);
- the naming rule: a ``…07`` module never imports a ``…08`` module or the other way round (what both lines
  use lives in the unsuffixed module of the same concept);
- pure logic stays free of sockets and ZooKeeper;
- no module over ~400 lines, no function over ~60.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "zkafka"
MAX_MODULE_LINES = 420
MAX_FUNCTION_LINES = 62
PURE = [
    "zkafka.records",
    "zkafka.protocol",
    "zkafka.assignment",
    "zkafka.coordinator.group",
    "zkafka.coordinator.group_state",
    "zkafka.coordinator.group_protocols",
    "zkafka.coordinator.group_record",
    "zkafka.coordinator.static_membership",
    "zkafka.coordinator.pending_members",
    "zkafka.coordinator.effects",
    "zkafka.coordinator.member",
    "zkafka.consumer.group.subscription",
    "zkafka.consumer.group.offsets",
    "zkafka.consumer.group.membership_requests",
    "zkafka.controller.leader_selector",
    "zkafka.controller.request_planner",
    "zkafka.controller.reassignment",
    "zkafka.cluster",
    "zkafka.server.fetch_session",
]
IMPURE_ROOTS = ("gevent", "kazoo", "socket", "selectors", "zkafka.network", "zkafka.zk.client")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py")}


@cache
def tree(name: str) -> ast.Module:
    return ast.parse(modules()[name].read_text())


def imports(name: str) -> set[str]:
    """Every module ``name`` imports (third-party ones included), resolved to module names where they are ours."""
    found: set[str] = set()
    for node in ast.walk(tree(name)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in modules())
    return found


def internal_graph() -> dict[str, set[str]]:
    return {name: {d for d in imports(name) if d in modules() and d != name} for name in modules()}


def package_of(name: str) -> str:
    return name.split(".")[1] if name.count(".") >= 1 else name


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_import_cycles():
    assert cycles(internal_graph()) == []


def test_no_package_import_cycles():
    packages: dict[str, set[str]] = {}
    for name, deps in internal_graph().items():
        packages.setdefault(package_of(name), set()).update(
            package_of(d) for d in deps if package_of(d) != package_of(name)
        )
    assert cycles(packages) == []


def line_of(name: str) -> str | None:
    match = re.search(r"(07|08)$", name.rsplit(".", 1)[-1])
    return match.group(1) if match else None


def test_a_line_module_never_imports_the_other_lines_module():
    crossing = [
        (name, dep)
        for name, deps in internal_graph().items()
        for dep in deps
        if line_of(name) and line_of(dep) and line_of(name) != line_of(dep)
    ]
    assert crossing == []


def test_pure_logic_imports_no_sockets_and_no_zookeeper():
    pure = [n for n in modules() if any(n == p or n.startswith(p + ".") for p in PURE)]
    assert len(pure) > 10
    impure = {
        (name, dep)
        for name in pure
        for dep in imports(name)
        if any(dep == root or dep.startswith(root + ".") for root in IMPURE_ROOTS)
    }
    assert sorted(impure) == []


def test_modules_stay_small():
    sizes = {name: len(path.read_text().splitlines()) for name, path in modules().items()}
    assert {n: s for n, s in sizes.items() if s > MAX_MODULE_LINES} == {}


def test_functions_stay_short():
    long = {
        f"{name}.{node.name}": node.end_lineno - node.lineno + 1
        for name in modules()
        for node in ast.walk(tree(name))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    }
    assert long == {}

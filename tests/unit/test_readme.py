"""The README's module map ("Every module:") names every module of the package, and only modules that exist."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def module_map(readme: str) -> tuple[set[str], set[str]]:
    """``(files, folders)`` named in the last column of the map's rows; a bare name is in the folder of the
    path before it in the same cell (``zkafka/records/format07.py``, ``format08.py``)."""
    section = readme.split("Every module:", 1)[1].split("\n## ", 1)[0]
    files: set[str] = set()
    folders: set[str] = set()
    for line in section.splitlines():
        if not line.startswith("|") or set(line) <= set("|- "):
            continue
        folder = None
        for token in re.findall(r"`([^`]+)`", line.strip().strip("|").split("|")[-1]):
            if token.startswith("zkafka/"):
                path = token
            elif folder is not None:
                path = f"{folder}/{token}"
            else:
                continue
            if path.endswith("/"):
                folder = path.rstrip("/")
                folders.add(folder)
            else:
                folder = path.rsplit("/", 1)[0]
                files.add(path)
    return files, folders


def is_front_door(path: Path) -> bool:
    """A package ``__init__.py`` holding only a docstring, imports and assignments (re-exports, ``__all__``)."""
    if path.name != "__init__.py":
        return False
    body = ast.parse(path.read_text()).body
    return all(isinstance(node, (ast.Expr, ast.Import, ast.ImportFrom, ast.Assign)) for node in body)


def test_the_module_map_names_only_paths_that_exist():
    files, folders = module_map((ROOT / "README.md").read_text())
    assert len(files) > 100
    assert [p for p in sorted(files | folders) if not (ROOT / p).exists()] == []


def test_the_module_map_names_every_module():
    files, folders = module_map((ROOT / "README.md").read_text())
    sources = sorted(p for pattern in ("*.py", "*.c") for p in (ROOT / "zkafka").rglob(pattern))
    unnamed = [
        rel
        for path in sources
        if not is_front_door(path)
        and (rel := path.relative_to(ROOT).as_posix()) not in files
        and not any(rel.startswith(folder + "/") for folder in folders)
    ]
    assert unnamed == []


def test_a_bare_name_is_read_in_the_folder_of_the_path_before_it():
    table = "Every module:\n| a | b |\n|---|---|\n| x | `zkafka/r/a.py`, `b.py`, `zkafka/s/`, `c.py` |\n"
    assert module_map(table) == ({"zkafka/r/a.py", "zkafka/r/b.py", "zkafka/s/c.py"}, {"zkafka/s"})

"""The front door: `__all__` is sorted, complete, and every name resolves."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import evaldsl


def test_all_is_sorted_and_unique() -> None:
    assert evaldsl.__all__ == sorted(set(evaldsl.__all__))


def test_every_exported_name_resolves() -> None:
    for name in evaldsl.__all__:
        assert getattr(evaldsl, name) is not None, name


def test_all_lists_every_public_name_of_the_module() -> None:
    tree = ast.parse(Path(evaldsl.__file__).read_text())
    imported = {alias.asname or alias.name for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) for alias in node.names}
    public = {n for n in imported if not n.startswith("_") and n not in {"TYPE_CHECKING", "Any"}}
    assert public | {"__version__"} == set(evaldsl.__all__)


def test_checking_imports_no_runner_http_or_templates() -> None:
    code = ("import sys, evaldsl; evaldsl.compile('case \"c\"\\n prompt \"p\"\\n expect no error\\n"
            " expect final text matches /a+/\\n'); "
            "print(sorted(m for m in ('httpx', 'jinja2', 'asyncio', 'evaldsl.run._api') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_unknown_attribute_is_an_attribute_error() -> None:
    try:
        evaldsl.no_such_thing  # noqa: B018
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")

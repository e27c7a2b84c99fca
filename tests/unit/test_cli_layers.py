"""The house rule of issue 28: `evaldsl/cli/` holds argument parsing alone, so no command module imports
another (what they share is the package's own `cli/__init__.py` or the library's), and no library module
imports the CLI. Checked on the source with `ast`, lazy imports inside functions included."""

from __future__ import annotations

import ast
from pathlib import Path

import evaldsl

PACKAGE = Path(evaldsl.__file__).parent
CLI = PACKAGE / "cli"
SIBLINGS = frozenset(p.stem for p in CLI.glob("*.py") if p.stem != "__init__")


def _imported(tree: ast.AST, module: str) -> list[tuple[int, str]]:
    """Every module an import in ``tree`` (the source of ``module``, dotted) names, resolved to its
    absolute name: ``from . import x`` names ``<package>.x`` as well as the package (x may be a module)."""
    package = module if module.endswith(".__init__") else module.rsplit(".", 1)[0]
    package = package.removesuffix(".__init__")
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            target = f"{base}.{node.module}" if node.level and node.module else (base if node.level else node.module)
            assert target is not None
            found.append((node.lineno, target))
            found += [(node.lineno, f"{target}.{alias.name}") for alias in node.names]
    return found


def sibling_imports(source: str, name: str) -> list[str]:
    """``evaldsl/cli/NAME.py``'s imports of another module of `evaldsl.cli` (``line: module``): one of its
    files, or any private name in it (the command modules are all ``_x``, those gone included)."""
    own = f"evaldsl.cli.{name}"
    return [f"{line}: {target}" for line, target in _imported(ast.parse(source), own)
            if target.startswith("evaldsl.cli.") and target != own
            and (target.split(".")[2] in SIBLINGS or target.split(".")[2].startswith("_"))]


def cli_imports(source: str, module: str) -> list[str]:
    """A library module's imports of `evaldsl.cli` or anything in it."""
    return [f"{line}: {target}" for line, target in _imported(ast.parse(source), module)
            if target == "evaldsl.cli" or target.startswith("evaldsl.cli.")]


def test_no_cli_module_imports_a_sibling() -> None:
    """`cli/__init__.py` is the package, not a sibling: it registers the command modules (its children)."""
    bad = {path.name: found for path in sorted(CLI.glob("*.py")) if path.stem != "__init__"
           if (found := sibling_imports(path.read_text(encoding="utf-8"), path.stem))}
    assert bad == {}


def test_no_library_module_imports_the_cli() -> None:
    """Imports point down the pipeline: `__main__` (the entry point) is the one module above the CLI."""
    bad = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent)
        if relative.parts[1] in ("cli", "__main__.py"):
            continue
        module = ".".join(relative.with_suffix("").parts)
        if found := cli_imports(path.read_text(encoding="utf-8"), module):
            bad[str(relative)] = found
    assert bad == {}


def test_the_run_plan_sits_right_below_the_cli() -> None:
    """`evaldsl.plan` is imported by the CLI (and may be by the pytest plugin), never by what it builds on."""
    bad = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent)
        if relative.parts[1] in ("cli", "plan", "__main__.py", "pytest_plugin.py"):
            continue
        module = ".".join(relative.with_suffix("").parts)
        found = [f"{line}: {target}" for line, target in _imported(ast.parse(path.read_text(encoding="utf-8")), module)
                 if target == "evaldsl.plan" or target.startswith("evaldsl.plan.")]
        if found:
            bad[str(relative)] = found
    assert bad == {}


def test_the_checks_see_every_form_of_import() -> None:
    """The two checks above would catch each way a rule can be broken (so their passing means something)."""
    forms = ["from ._run import cmd_run", "from . import _lang", "from . import EXIT_OK, _report",
             "import evaldsl.cli._merge", "from evaldsl.cli._upload import x", "from evaldsl.cli import _lsp",
             "def f():\n    from ._compare import cmd_compare\n"]
    for source in forms:
        assert sibling_imports(source, "_import"), source
    assert sibling_imports("from . import EXIT_OK, positive_int\nfrom ..plan import build_plan\n", "_run") == []
    for source in ["from ..cli import main", "from ..cli._run import cmd_run", "import evaldsl.cli",
                   "def f():\n    from ...cli import _lang\n"]:
        depth = "evaldsl.report._x" if "...cli" not in source else "evaldsl.plan.sub._x"
        assert cli_imports(source, depth), source
    assert cli_imports("from ..plan import build_plan\nfrom .clients import x\n", "evaldsl.report._x") == []

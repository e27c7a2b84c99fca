"""The docstrings written under class attributes (``x: int`` then ``\"\"\"What x is.\"\"\"``), read from a
module's source: what pydantic's ``use_attribute_docstrings`` reads at every import, read here only when
a JSON Schema is asked for (`run._record.record_schema`)."""

from __future__ import annotations

import ast
import inspect


def field_docstrings(path: str) -> dict[str, dict[str, str]]:
    """Class name -> field name -> its docstring (cleaned as `inspect.cleandoc` does), for every class of
    the module at ``path``; a class also gets the fields its bases in that module document."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    own: dict[str, dict[str, str]] = {}
    bases: dict[str, list[str]] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        fields: dict[str, str] = {}
        body = node.body
        for first, second in zip(body, body[1:]):
            if (isinstance(first, ast.AnnAssign) and isinstance(first.target, ast.Name)
                    and isinstance(second, ast.Expr) and isinstance(second.value, ast.Constant)
                    and isinstance(second.value.value, str)):
                fields[first.target.id] = inspect.cleandoc(second.value.value)
        own[node.name] = fields
        bases[node.name] = [b.id for b in node.bases if isinstance(b, ast.Name)]

    def inherited(name: str) -> dict[str, str]:
        found: dict[str, str] = {}
        for base in reversed(bases.get(name, [])):
            found.update(inherited(base))
        found.update(own.get(name, {}))
        return found

    return {name: inherited(name) for name in own}

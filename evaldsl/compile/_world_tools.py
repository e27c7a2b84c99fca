"""A world method as a tool: its JSON Schema, its argument check and its call (LANGUAGE.md 14).

pydantic builds both the schema and the check from one model made from the
signature, so the model is told exactly what the method will accept. The
check is strict and reads the arguments as JSON (``"42"`` is no ``int``,
but an ISO date string is a ``date``), and no key that is not a parameter
passes; what does not validate gets an error answer that says why, as a
declared tool's param check does (docs/language.md 8).
"""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path
from typing import Any

from ._errors import CompileProblem
from ._model import CompiledTool, ToolAnswer
from ._tools import decode_args
from ._world import WorldMethod, error_answer, hints_of

_ARG_LINE = re.compile(r"^\s+(\*{0,2}[A-Za-z_][A-Za-z0-9_]*)\s*(?:\([^)]*\))?\s*:\s*(.+)$")
_SECTION = re.compile(r"^(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?|Notes?):\s*$")


def method_tool(cls: type, name: str, fn: Any, file: str, node: Any) -> tuple[WorldMethod, CompiledTool]:
    """The `WorldMethod` and the `CompiledTool` of one public method.

    Raises:
        CompileProblem: E244 when a parameter has no type hint, or is ``*args`` / ``**kwargs``.
    """
    from pydantic import ConfigDict, create_model

    signature = inspect.signature(fn)
    hints = hints_of(fn)
    params = list(signature.parameters.values())
    if params and params[0].name in ("self", "cls") and not isinstance(inspect.getattr_static(cls, name),
                                                                        staticmethod):
        params = params[1:]
    fields: dict[str, Any] = {}
    positional = []
    for param in params:
        where = f"{cls.__name__}.{name} ({Path(file).name}:{_line_of(fn)})"
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise CompileProblem(f"the world method {where} takes *{param.name}: a tool's arguments are named",
                                 node, code="E244", help="name each parameter, with a type hint")
        if param.name not in hints:
            raise CompileProblem(f"the world method {where} has no type hint for `{param.name}`", node,
                                 code="E244", help=f"write e.g. `{param.name}: str`, or start the method's "
                                 "name with `_` to keep it from being a tool")
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (hints[param.name], default)
        if param.kind == param.POSITIONAL_ONLY:
            positional.append(param.name)
    model = create_model(f"{cls.__name__}_{name}_args", __config__=ConfigDict(extra="forbid", strict=True),
                         **fields)
    doc = inspect.getdoc(fn) or ""
    schema = _schema(model, _arg_docs(doc))
    method = WorldMethod(name=name, args=model, positional=tuple(positional),
                         is_async=inspect.iscoroutinefunction(fn))
    line = _line_of(fn)
    tool = CompiledTool(name, _first_paragraph(doc), schema, _no_instance(name), file=file, line=line,
                        prepare=lambda args: validate(method, args), method=name)
    return method, tool


def _schema(model: Any, docs: dict[str, str]) -> dict[str, Any]:
    schema = model.model_json_schema()
    schema.pop("title", None)
    schema.setdefault("required", [])
    for key, prop in schema.get("properties", {}).items():
        prop.pop("title", None)
        if key in docs and "description" not in prop:
            prop["description"] = docs[key]
    return schema


def _first_paragraph(doc: str) -> str:
    """The docstring's first paragraph, on one line."""
    return " ".join(doc.split("\n\n", 1)[0].split())


def _arg_docs(doc: str) -> dict[str, str]:
    """``name: text`` lines of a Google-style ``Args:`` section (continuation lines joined)."""
    out: dict[str, str] = {}
    inside, last, indent = False, None, None
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped and not line[0].isspace():
            inside = bool(_SECTION.match(stripped)) and stripped[:-1] in ("Args", "Arguments", "Parameters")
            last, indent = None, None
            continue
        if not inside or not stripped:
            continue
        here = len(line) - len(line.lstrip())
        match = _ARG_LINE.match(line)
        if match and (indent is None or here == indent):
            indent, last = here, match.group(1).lstrip("*")
            out[last] = match.group(2).strip()
        elif last is not None:
            out[last] += " " + stripped
    return out


def _line_of(fn: Any) -> int:
    try:
        return inspect.getsourcelines(fn)[1]
    except (OSError, TypeError):
        return 0


def _no_instance(name: str) -> Any:
    def answer(args: Any) -> ToolAnswer:
        return ToolAnswer(False, f"Error: {name}: a world's tool is answered by the run's world instance "
                                 "(through the case context); there is none here")

    return answer


def validate(method: WorldMethod, args: Any) -> Any:
    """The validated arguments (a dict of the method's values), or the error answer saying why."""
    from pydantic import ValidationError

    args = decode_args(method.name, args)
    if isinstance(args, ToolAnswer):
        return args
    try:
        checked = method.args.model_validate_json(json.dumps(args, ensure_ascii=False))
    except ValidationError as exc:
        return ToolAnswer(False, f"Error: {method.name}: " + "; ".join(_why(e) for e in exc.errors()[:5]))
    except (TypeError, ValueError) as exc:  # arguments that are not JSON values at all
        return ToolAnswer(False, f"Error: {method.name}: arguments are not JSON: {exc}")
    return {key: getattr(checked, key) for key in type(checked).model_fields}


def _why(error: Any) -> str:
    where = ".".join(str(p) for p in error.get("loc", ())) or "arguments"
    kind = error.get("type")
    if kind == "missing":
        return f"missing required parameter `{where}`"
    if kind == "extra_forbidden":
        return f"unknown parameter `{where}`"
    return f"parameter `{where}`: {error.get('msg', 'is not valid')}"


def bound(method: WorldMethod, instance: Any, values: dict[str, Any]) -> Any:
    """Call the method on ``instance`` with validated values (a coroutine for an async method)."""
    fn = getattr(instance, method.name)
    positional = [values[p] for p in method.positional]
    named = {k: v for k, v in values.items() if k not in method.positional}
    return fn(*positional, **named)


def result_answer(name: str, result: Any) -> ToolAnswer:
    """A method's result as its answer: a `str` as it is, anything else as JSON."""
    if isinstance(result, str):
        return ToolAnswer(True, result)
    from pydantic_core import to_json

    try:
        return ToolAnswer(True, to_json(result, fallback=str).decode("utf-8"))
    except Exception as exc:  # a value that cannot be shown as JSON: an error answer, never a crash
        return error_answer(name, exc)

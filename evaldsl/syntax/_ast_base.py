"""The AST's foundation: `Node` and `Span`, and the helpers that make, copy and walk nodes (see `_ast`)."""

from collections.abc import Iterator
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

_M = TypeVar("_M", bound=BaseModel)


def make(cls: type[_M], **fields: Any) -> _M:
    """Build a node without validation, fast: the parser already guarantees its shape.

    Equivalent to `cls.model_construct(**fields)` for our models (every field
    given or defaulted to a constant), at a fraction of the cost, which
    matters when a file has hundreds of thousands of nodes.
    """
    obj = object.__new__(cls)
    defaults = _DEFAULTS.get(cls)
    _set(obj, "__dict__", {**(_defaults(cls) if defaults is None else defaults), **fields})  # as dict().update()
    key = (cls, *fields)
    given = _FIELDS_SET.get(key)
    if given is None:
        given = _FIELDS_SET[key] = set(fields)
    _set(obj, "__pydantic_fields_set__", given)
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    return obj


def make_spanned(cls: type[_M], fields: dict[str, Any], file: str, line: Any, column: Any, end_line: Any,
                 end_column: Any) -> _M:
    """``make(cls, span=span(file, line, column, end_line, end_column), **fields)`` in one call: the same
    node, with `span` and `make` written out inline (a file makes one such node per rule it reduces; the
    two calls and the unpacking of ``fields`` again cost `check` about 1 % of its instructions)."""
    where = object.__new__(Span)  # `span(...)`, inline
    _set(where, "__dict__", {"file": file, "line": line, "column": column, "end_line": end_line,
                             "end_column": end_column})
    _set(where, "__pydantic_fields_set__", _SPAN_FIELDS)
    _set(where, "__pydantic_extra__", None)
    _set(where, "__pydantic_private__", None)
    obj = object.__new__(cls)
    defaults = _DEFAULTS.get(cls)
    _set(obj, "__dict__", {**(_defaults(cls) if defaults is None else defaults), "span": where, **fields})
    key = (cls, "span", *fields)
    given = _FIELDS_SET.get(key)
    if given is None:
        given = _FIELDS_SET[key] = {"span", *fields}
    _set(obj, "__pydantic_fields_set__", given)
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    return obj


def replaced(node: _M, **changes: Any) -> _M:
    """``node.model_copy(update=changes)``, fast: a case filled from each of many rows makes many."""
    obj = object.__new__(type(node))
    values = dict(node.__dict__)
    values.update(changes)
    _set(obj, "__dict__", values)
    given = node.__pydantic_fields_set__
    if not given.issuperset(changes):
        given = given | set(changes)
    _set(obj, "__pydantic_fields_set__", given)  # shared when unchanged: nodes are frozen (see _FIELDS_SET)
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    return obj


_set = object.__setattr__
_FIELDS_SET: dict[tuple, set[str]] = {}
"""One fields-set per class and given fields, shared by its nodes (a set each
was about half of the tree's memory). Safe because nodes are frozen: pydantic
changes a fields-set only in `__setattr__`, and copies it in `model_copy`."""
_DEFAULTS: dict[type, dict[str, Any]] = {}


def _defaults(cls: type) -> dict[str, Any]:
    found = _DEFAULTS.get(cls)
    if found is None:
        found = {}
        for name, field in cls.model_fields.items():  # type: ignore[attr-defined]
            if field.default_factory is not None:
                found[name] = field.default_factory()  # only immutable () defaults here
            elif not field.is_required():
                found[name] = field.default
        _DEFAULTS[cls] = found
    return found


def span(file: str, line: Any, column: Any, end_line: Any, end_column: Any) -> "Span":
    """`make(Span, ...)` with every field given, faster: a file has a span per node."""
    obj = object.__new__(Span)
    _set(obj, "__dict__", {"file": file, "line": line, "column": column, "end_line": end_line,
                           "end_column": end_column})
    _set(obj, "__pydantic_fields_set__", _SPAN_FIELDS)
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    return obj


_SPAN_FIELDS = {"file", "line", "column", "end_line", "end_column"}
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def walk(node: Any) -> Iterator[Any]:
    """Every AST node under `node` (itself included), depth first, without recursion."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, tuple):
            stack.extend(current)
            continue
        cls = type(current)
        fields = _CHILD_FIELDS.get(cls)
        if fields is None:
            if not issubclass(cls, Node):
                continue
            fields = _CHILD_FIELDS[cls] = tuple(
                f for f in cls.model_fields if f not in ("span", "kind", "comments")
            )
        yield current
        values = current.__dict__
        for f in fields:
            child = values[f]
            if isinstance(child, (Node, tuple)):
                stack.append(child)


class Span(BaseModel):
    """A region of a source file; lines and columns count from 1, end exclusive."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    file: str = "<string>"
    line: int = 1
    column: int = 1
    end_line: int = 1
    end_column: int = 1


class Node(BaseModel):
    """Base of every AST node. Equality ignores spans."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    span: Span | None = Field(default=None, exclude=True, repr=False)
    """Where the node stands in the source (not part of equality)."""

    def __eq__(self, other: object) -> bool:
        if type(self) is not type(other):
            return NotImplemented
        assert isinstance(other, Node)
        return self.model_dump() == other.model_dump()

    def __hash__(self) -> int:
        return hash((type(self).__name__, repr(self.model_dump())))

__all__ = [
    "Span",
    "Node",
    "make",
    "make_spanned",
    "replaced",
    "span",
    "walk",
]

"""An imported suite and the tools its cases name: adding a ``use "LIB"`` line, and finding the tools
nothing declares (a `--model` run offers the model only declared tools, and refuses to start without them).

Imported suites declare no tool of their own (the JSON and RON formats hold no tool definitions), so a
`use`d library is the only place one can come from.
"""

from __future__ import annotations


def with_use(text: str, library: str) -> str:
    """``text`` with ``use "LIBRARY"`` after its `suite` line (imported suites always have one)."""
    from ._emit import string

    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("suite "))
    lines.insert(at + 1, f"use {string(library)}")
    return "\n".join(lines)


def undeclared_tools(text: str, where: str, *, uses: bool) -> list[str]:
    """The tools the cases of ``text`` (as the file ``where`` would hold it) expect calls of that nothing
    declares, sorted. ``uses``: the text has a `use` line, so it is compiled to read what the library declares.

    Raises:
        EvlError: the text does not compile as written to ``where`` (a `use` file not found from there, say).
    """
    from .. import compile as compile_evl
    from .. import parse
    from ..compile._expect import called_names

    declared = {tool.name for tool in compile_evl(text, where).tools} if uses else set()
    return sorted(called_names(parse(text, where)) - declared)

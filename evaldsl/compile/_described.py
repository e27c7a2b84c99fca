"""What the suite fingerprint (`run._shard.suite_version`) hashes of each case: its description, a line.

A case's line is ``(name, prompt, settings, setup, labels, tools)`` as repr
writes that tuple, from ``name``'s repr on (the file's part, its path
relative to the common root of the loaded files, is put in front by
`suite_version`, which alone knows which files are loaded). Describing is
most of the fingerprint's cost, and it is the same for every run of an
unchanged file, so the run's loader (`_loading.compile_file`) has a suite's
lines made (`describe`: sorted and joined per file, with the file's whole
fingerprint for a run of it alone) and kept on the suite object before the
suite goes into the suite cache: a suite read back from the cache is never
described again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import ntpath
import posixpath
import zlib
from collections.abc import Iterable
from typing import Any

from ._model_suite import CompiledCase

_KEPT = "_described"
"""The attribute of a `CompiledSuite` (not a field: not compared, not shown) holding ``(cases, lines)``:
its lines (`describe`) and the cases they describe (a suite whose ``cases`` were swapped has none)."""

FileLines = dict[str, tuple[int, bytes, str]]
"""Each file's lines: how many; the lines sorted (as bytes), joined by newlines and compressed (`zlib`: the
suite cache authenticates every byte it reads back, at about 17 instructions a byte, and the lines, much
alike, shrink about tenfold); the file's fingerprint when it is the only one loaded (what a run of that one
file gives, and then the lines are not read)."""


def describe(suite: Any) -> None:
    """Make the lines of ``suite``'s cases (`describe_files`) and keep them on the suite, for `kept`: what the
    run's loader does before the suite goes into the suite cache, which then stores them with it.

    Nothing is kept when its cases are made when read (`SuiteCases`: the rows of an `examples from` file
    are not held, nor are their lines) or a line would hold a newline (`describe_files`). A suite compiled
    without the cache keeps nothing either: a run describes its cases once anyway (`suite_version`), and
    the lines would only stay in memory.
    """
    cases = suite.cases
    if type(cases) is tuple:
        lines = describe_files(cases)
        if lines is not None:
            object.__setattr__(suite, _KEPT, (cases, lines))


def kept(suite: Any) -> FileLines | None:
    """The lines `describe` kept on ``suite``, if it kept them for the cases it holds now; else None."""
    held = getattr(suite, "__dict__", {}).get(_KEPT)
    return held[1] if held is not None and held[0] is suite.cases else None  # type: ignore[no-any-return]


def describe_files(cases: Iterable[CompiledCase]) -> FileLines | None:
    """Each file's lines of ``cases`` (`FileLines`), sorted as bytes (UTF-8 keeps the order of code points),
    joined by newlines and compressed, with their count and the file's fingerprint as the only one loaded.
    None when a line holds a newline (a world's spec whose repr does): a file's lines could then not be
    told apart, and `suite_version` describes such cases itself."""
    describer = Describer()
    by_file: dict[str, list[bytes]] = {}
    for case in cases:
        by_file.setdefault(case.file, []).append(describer(case))
    out: FileLines = {}
    for file, lines in by_file.items():
        lines.sort()
        joined = b"\n".join(lines)
        if joined.count(b"\n") != len(lines) - 1:
            return None
        alone = hashed([(prefix_of(_components(file)[-1:]), joined)])  # (`file_keys` of this file alone)
        out[file] = (len(lines), zlib.compress(joined, 1), alone)
    return out


def hashed(blocks: Iterable[tuple[bytes, bytes]]) -> str:
    """The fingerprint of each file's block of sorted lines with its prefix (``(prefix, block)``, in the
    prefixes' order): every line of the block with the prefix in front, all joined by newlines, SHA-256."""
    digest = hashlib.sha256()
    for n, (prefix, block) in enumerate(blocks):
        if n:
            digest.update(b"\n")
        digest.update(prefix)
        digest.update(block.replace(b"\n", b"\n" + prefix))
    return "sha256:" + digest.hexdigest()[:16]


def prefix_of(key: tuple[str, ...]) -> bytes:
    """What comes before the rest of each line of a file whose key (`file_keys`) is ``key``."""
    return f"({'/'.join(key)!r}, ".encode("utf-8", "surrogatepass")


def file_keys(files: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Each file's path relative to the common root of ``files``, as a tuple of components."""
    parts = {f: _components(f) for f in dict.fromkeys(files)}
    if not parts:
        return {}
    dirs = [p[:-1] for p in parts.values()]
    common = dirs[0]
    for d in dirs[1:]:
        n = 0
        while n < min(len(common), len(d)) and common[n] == d[n]:
            n += 1
        common = common[:n]
    return {f: p[len(common):] for f, p in parts.items()}


def _components(path: str) -> tuple[str, ...]:
    flavour = ntpath if "\\" in path else posixpath
    norm = flavour.normpath(path).replace("\\", "/")
    return tuple(x for x in norm.split("/") if x not in ("", "."))


class Describer:
    """A case's description, after its file's part: ``(name, prompt, settings, setup, labels, tools)``
    as repr writes that tuple, from ``name``'s repr on, UTF-8; the reprs of the parts cases share
    (a suite's tools, most cases' settings) made once."""

    def __init__(self) -> None:
        self._tools: dict[int, tuple[Any, str]] = {}
        self._settings: dict[int, tuple[Any, str]] = {}

    def __call__(self, case: CompiledCase) -> bytes:
        held = self._tools.get(id(case.tools))
        if held is None or held[0] is not case.tools:
            held = self._tools[id(case.tools)] = (case.tools, repr(repr([(t.name, t.parameters) for t in case.tools])))
        kept = self._settings.get(id(case.settings))
        if kept is None or kept[0] is not case.settings:
            kept = self._settings[id(case.settings)] = (case.settings, settings_text(case.settings))
        labels = [e.label for e in case.expectations]
        # repr, not JSON: deterministic for these values (str, numbers, JSON-shaped setup) and cheaper;
        # repr((name, prompt, settings, setup, labels, tools)) written out, without its "(", with the shared
        # parts' repr kept. No line holds a newline: every part is a repr. A case of language v2 (turns,
        # a simulated user, `given` lines, a world) adds what it holds of them, so such cases that differ
        # only there differ in the fingerprint, and a v1 case's description is what it always was.
        v2 = ""
        if case.turns or case.simulated_user is not None or case.given or case.world is not None:
            turns = [(t.message, [e.label for e in t.expectations]) for t in case.turns]
            given = [(g.tool, g.line) for g in case.given]
            world = getattr(case.world, "spec", None) if case.world is not None else None
            v2 = f", {turns!r}, {case.simulated_user!r}, {given!r}, {world!r}"
        return (f"{case.name!r}, {case.prompt!r}, {kept[1]}, {case.setup!r}, {labels!r}, {held[1]}{v2})"
                ).encode("utf-8", "surrogatepass")


V2_SETTINGS = {"user_turns": 10, "tools": None}
"""Settings of language v2 and their defaults: left out of a description at their default (`settings_text`)."""


def settings_text(settings: Any) -> str:
    """``repr(settings)`` as version 1 wrote it: a v2 setting at its default left out, so that the
    fingerprint of a suite that uses none stays what it was."""
    parts = [f"{f.name}={getattr(settings, f.name)!r}" for f in dataclasses.fields(settings)
             if not (f.name in V2_SETTINGS and getattr(settings, f.name) == V2_SETTINGS[f.name])]
    return f"{type(settings).__name__}({', '.join(parts)})"

"""The HTML dashboard: one self-contained file built from run records.

Python renders a shell (jinja2, autoescaped) holding the data as JSON in
``<script type="application/json">`` blocks, plus a small hand-written
script and style sheet, inlined; the script draws the page from the data.
Nothing is fetched: no CDN, font or image, so the file opens offline.

Why the data cannot break out of its block: inside a ``<script>`` element
the HTML parser only looks for ``</script`` (and ``<!--``), and the JSON
here holds no ``<`` at all (``<``, ``>`` and ``&`` are written as ``\\u003c``,
``\\u003e``, ``\\u0026``, which JSON.parse reads back as the same characters).
The script puts every string on the page with createTextNode/textContent.
As a second wall, the page's Content-Security-Policy runs only the one
script whose SHA-256 it names, and allows no network access at all.

jinja2 is imported here, lazily from the CLI, so `evaldsl check` never loads it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..run._record import EvalReport
from ._html_data import PageData, build_page_data

_TEMPLATES = Path(__file__).parent / "templates"


def render_html(
    records: Sequence[tuple[str, EvalReport]],
    *,
    title: str | None = None,
    comparison: dict[str, Any] | None = None,
) -> str:
    """The dashboard of ``records`` (``(source file, record)`` pairs) as one HTML document.

    Args:
        records: the run records, in the order of the leaderboard and heatmap columns.
        title: the page title; by default names the agents.
        comparison: a two-record comparison to show (see `evaldsl.report._html_compare`).
    """
    return render_page(build_page_data(records, title=title, comparison=comparison))


def render_page(page: PageData) -> str:
    """Render already built `PageData` (tests and the bench use this directly)."""
    import jinja2
    from markupsafe import Markup

    from .. import __version__

    script = (_TEMPLATES / "dashboard.js").read_text(encoding="utf-8")
    style = (_TEMPLATES / "dashboard.css").read_text(encoding="utf-8")
    for name, text in (("dashboard.js", script), ("dashboard.css", style)):
        lowered = text.lower()
        if "</script" in lowered or "</style" in lowered or "<!--" in lowered:  # pragma: no cover - our own files
            raise ValueError(f"{name} must not contain </script, </style or <!--")
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(_TEMPLATES), autoescape=True,
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
    )
    template = env.get_template("dashboard.html.j2")
    return template.render(
        title=page.title, version=__version__,
        style=Markup(style), script=Markup(script),
        style_hash=_csp_hash(style), script_hash=_csp_hash(script),
        data=Markup(script_json(page.summary)),
        details=[Markup(script_json(d)) for d in page.details],
    )


def write_html(path: str | os.PathLike[str], html: str) -> None:
    """Write the dashboard atomically (a reader never sees half a file)."""
    from ._json import write_atomic

    write_atomic(path, html)


def script_json(value: Any) -> str:
    """JSON that is safe inside a ``<script>`` element: no ``<``, ``>`` or ``&`` characters.

    Non-finite floats (which JSON has no word for) become the strings
    ``"NaN"``, ``"Infinity"`` and ``"-Infinity"`` rather than being dropped.
    """
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:
        text = json.dumps(_finite(value), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")

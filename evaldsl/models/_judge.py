"""The LLM judge: `expect judge "rubric"` graded by a model (LANGUAGE.md 4.3).

The judge is shown what the rubric is about (the prompt, the tool calls with
their arguments and results, the final text) through a jinja2 template that
ships in the package (``templates/judge.j2``) and that a user can replace
(``--judge-template FILE``). It asks at temperature 0 for structured output,
``{"score": 0..1, "reasoning": "..."}``, and reads the reply strictly: one
JSON object, optionally inside a ```json fence. An unreadable reply is asked
again once, with the reason; a second one raises `JudgeError`, which makes
the run an error whose message shows what the judge said. There is never a
default score.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from ..artifacts import RunArtifacts
from ..compile._model import JudgeVerdict
from ._chat import ChatBackend, Sampling

TEMPLATE = Path(__file__).parent / "templates" / "judge.j2"
"""The judge prompt evaldsl ships; `--judge-template FILE` replaces it."""

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "reasoning": {"type": "string"},
    },
    "required": ["score", "reasoning"],
    "additionalProperties": False,
}
"""The structured output the judge is asked for."""

_FENCE = re.compile(r"\A```(?:json)?[ \t]*\n(?P<body>.*?)\n?```\Z", re.DOTALL | re.IGNORECASE)
_SHOWN = 300


class JudgeError(RuntimeError):
    """The judge's reply could not be read, even after one retry."""

    error_kind = "judge_unreadable"


class TemplateError(ValueError):
    """A judge template that cannot be read or does not compile; says which file and line."""


def load_template(path: str | Path | None = None) -> PromptTemplate:
    """The judge template, from ``path`` or the shipped one.

    Raises:
        TemplateError: when the file cannot be read or is not a valid template.
    """
    where = Path(path) if path is not None else TEMPLATE
    try:
        text = where.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TemplateError(f"cannot read judge template {where}: {getattr(exc, 'strerror', None) or exc}") from None
    return PromptTemplate(text, str(where))


class PromptTemplate:
    """A jinja2 template kept with its text, so that it pickles (`--executor ray` sends the judge and the
    simulated user to its workers, where the text is compiled again; a compiled jinja2 template holds
    generated functions that do not pickle)."""

    def __init__(self, text: str, where: str) -> None:
        self.text, self.where = text, where
        self._compiled = _compiled(text, where)

    def render(self, **values: Any) -> str:
        return str(self._compiled.render(**values))

    def __getstate__(self) -> dict[str, str]:
        return {"text": self.text, "where": self.where}

    def __setstate__(self, state: dict[str, str]) -> None:
        self.__init__(state["text"], state["where"])  # type: ignore[misc]


def _compiled(text: str, where: str) -> Any:
    import jinja2

    env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True)
    env.filters["json"] = _json  # jinja2's own `tojson` escapes <, > and & for HTML
    try:
        return env.from_string(text)
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(f"{where}:{exc.lineno}: judge template error: {exc.message}") from None


class LLMJudge:
    """A `JudgeFn` backed by a chat model.

    Args:
        backend: the judge's endpoint.
        template: a template file replacing the shipped prompt (see `TEMPLATE`).
        max_tokens: the bound on each judge reply (None: the API's default).
    """

    def __init__(self, backend: ChatBackend, *, template: str | Path | None = None,
                 max_tokens: int | None = None) -> None:
        self.backend = backend
        self.template = load_template(template)
        self.sampling = Sampling(temperature=0.0, max_tokens=max_tokens)

    def __repr__(self) -> str:
        return f"LLMJudge({self.backend.label!r})"

    def render(self, *, rubric: str, prompt: str, artifacts: RunArtifacts) -> str:
        """The judge's prompt for one run."""
        return str(self.template.render(
            rubric=rubric, prompt=prompt, tool_calls=artifacts.tool_calls,
            final_text=artifacts.final_text, error=artifacts.error,
        ))

    async def __call__(self, *, rubric: str, prompt: str, artifacts: RunArtifacts) -> JudgeVerdict:
        """Grade one run; raises `JudgeError` when the reply cannot be read after one retry,
        and the backend's `BackendError` when the request fails."""
        messages: list[dict[str, Any]] = [
            {"role": "user", "content": self.render(rubric=rubric, prompt=prompt, artifacts=artifacts)}
        ]
        for attempt in (1, 2):
            reply = await self.backend.chat(messages, response_schema=VERDICT_SCHEMA, sampling=self.sampling,
                                            accept=_readable)
            try:
                return parse_verdict(reply.text)
            except ValueError as exc:
                why = str(exc)
            if attempt == 2:
                break
            messages = [*messages, {"role": "assistant", "content": reply.text or ""}, {
                "role": "user",
                "content": f"Your reply could not be read ({why}). Reply with only a JSON object: "
                           '{"score": <number from 0 to 1>, "reasoning": "<text>"}',
            }]
        raise JudgeError(f"the judge ({self.backend.label}) failed: its reply could not be read after "
                         f"one retry ({why}); it replied: {_cut(reply.text)}")


def parse_verdict(text: str | None) -> JudgeVerdict:
    """Read a judge reply strictly: a JSON object (optionally in a ```json fence) with
    ``score``, a number from 0 to 1, and ``reasoning``, a string.

    Raises:
        ValueError: saying what is wrong with it.
    """
    if text is None or not text.strip():
        raise ValueError("the reply has no text")
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced["body"].strip()
    try:
        value = json.loads(body)
    except ValueError:
        raise ValueError("the reply is not a JSON object") from None
    if not isinstance(value, dict):
        raise ValueError(f"the reply is JSON {type(value).__name__}, not an object")
    score, reasoning = value.get("score"), value.get("reasoning")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or math.isnan(score):
        raise ValueError("`score` is missing or not a number")
    if not 0 <= score <= 1:
        raise ValueError(f"`score` is {score:g}, not from 0 to 1")
    if not isinstance(reasoning, str):
        raise ValueError("`reasoning` is missing or not a string")
    return JudgeVerdict(float(score), reasoning.strip())


def _readable(reply: Any) -> None:
    """The cache's test of a judge reply: one that `parse_verdict` cannot read is never stored."""
    parse_verdict(reply.text)


def _json(value: Any) -> str:
    """A value as JSON, unescaped; a string (raw arguments that are not JSON) as it is."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _cut(text: str | None) -> str:
    if text is None:
        return "(no text)"
    text = text.strip()
    return json.dumps(text if len(text) <= _SHOWN else text[:_SHOWN] + "...", ensure_ascii=False)

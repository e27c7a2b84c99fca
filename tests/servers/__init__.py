"""Scripted OpenAI- and Anthropic-compatible HTTP servers on 127.0.0.1, for tests.

Import as ``servers`` (tests/ is on ``sys.path`` under pytest's default
import mode, as for ``_docblocks``); the fixtures ``openai_server`` and
``anthropic_server`` are registered for every test by tests/conftest.py.

Stable API (other tests build on it):

- ``ScriptedServer(flavour, reply=None)``: ``flavour`` is ``"openai"``
  (``POST /v1/chat/completions``) or ``"anthropic"`` (``POST /v1/messages``).
  ``.start()`` / ``.stop()`` or ``with``; ``.base_url`` is what a backend
  takes (``http://127.0.0.1:PORT/v1`` for OpenAI, no ``/v1`` for Anthropic);
  ``.reply`` is the script, settable any time; ``.requests`` is a list of
  `Recorded` (``index``, ``method``, ``path``, ``headers`` with Authorization
  and x-api-key redacted, ``json`` body, ``sent_secret(header, value)``);
  ``.reset(reply=None)`` clears the record and restarts numbering.
- A script is ``reply(request_json, request_index) -> Response``, where a
  Response is one of: ``Text(text, input_tokens=10, output_tokens=5)``,
  ``ToolCalls(calls, text=None, ...)`` of ``Call(name, args, raw=None,
  id=None)`` (``raw`` sends the argument string verbatim, e.g. invalid
  JSON), ``HttpError(status, body="", headers={})`` (an empty body becomes
  the flavour's own error JSON, ``"scripted error STATUS"``), ``Drop()``
  (close the connection, no reply), ``Delay(seconds, then)``, ``RawBody(body,
  status=200)`` (any body, verbatim).
- Builders: ``text(s)``, ``call(name, args, raw=, id=)``, ``tool_calls(*calls,
  text=None)``, ``always(response)``, ``sequence(*responses)`` (the i-th
  request gets the i-th, then the last repeats), ``tool_then_text(name, args,
  answer)`` (call the tool until a tool result is in the messages, then
  answer), ``has_tool_result(request)``.
"""

from ._script import (
    Call,
    Delay,
    Drop,
    HttpError,
    RawBody,
    Response,
    Script,
    Text,
    ToolCalls,
    always,
    call,
    has_tool_result,
    sequence,
    text,
    tool_calls,
    tool_then_text,
)
from ._server import Recorded, ScriptedServer

__all__ = [
    "Call",
    "Delay",
    "Drop",
    "HttpError",
    "RawBody",
    "Recorded",
    "Response",
    "Script",
    "ScriptedServer",
    "Text",
    "ToolCalls",
    "always",
    "call",
    "has_tool_result",
    "sequence",
    "text",
    "tool_calls",
    "tool_then_text",
]

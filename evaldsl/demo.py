"""A rule-based demo agent, for trying evaldsl without an API key.

`agent` is NOT a model and has no intelligence: it is a stand-in made of a
handful of regular-expression rules keyed on the wording of the shipped
baseline's prompts (suites/baseline/). It exists so that the README's first
command shows a real run, with tool calls, a transcript and a report, on a
machine with no network and no credentials::

    evaldsl run suites/baseline --agent evaldsl.demo:agent

It follows the baseline's tool convention (a ``search`` tool taking
``{query}``, a ``calculator`` taking ``{op: add|sub|mul|div, a, b}``, a
``send_email`` taking ``{to, subject, body}``) with built-in fake tools: the
calculator really computes, the search answers from a tiny canned index, and
the email is never sent. Token counts are made up (about four tokens per
three words of the transcript), so that reports have something to show.

It is deterministic: the same prompt always gives the same artifacts. Prompts
that no rule recognises get a polite "I don't know" and no tool call, which
is what makes it fail most suites other than the baseline, as it should.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from .artifacts import RunArtifacts, ToolCall

__all__ = ["DemoAgent", "agent"]

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_CAPITALS = {
    "france": "Paris", "japan": "Tokyo", "italy": "Rome", "germany": "Berlin",
    "spain": "Madrid", "canada": "Ottawa", "australia": "Canberra",
}
_SEARCH_INDEX: tuple[tuple[tuple[str, ...], str], ...] = (
    (("weather", "paris"), "Paris weather today: sunny, high of 24 C, light wind from the west."),
    (("python",), ("Python 3.13 released: a new interactive shell, "
                   "an experimental free-threaded build and a JIT.")),
    (("pride and prejudice",), "Pride and Prejudice is an 1813 novel by Jane Austen."),
    (("evaldsl",), ("evaldsl: pytest, but for LLM agents. "
                    "Compact .evl case files, compiled to checks.")),
)
_WORD_OPS = (
    (r"\bmultiplied by\b", "*"), (r"\bdivided by\b", "/"), (r"\btimes\b", "*"),
    (r"\bplus\b", "+"), (r"\bminus\b", "-"), (r"\bover\b", "/"), ("×", "*"), ("÷", "/"),
)
_OP_NAMES = {"+": "add", "-": "sub", "*": "mul", "/": "div"}
_TOKEN = re.compile(r"\d+(?:\.\d+)?|[-+*/()]|[^\s\d()+*/-]+")


def _number(text: str) -> int | float:
    value = float(text)
    return int(value) if value.is_integer() else value


def _show(value: float) -> str:
    """A number as a person would write it: 42, -25, 1.75."""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.10g}"


# ---------------------------------------------------------------- tools --


def _calculator(args: dict) -> str:
    a, b, op = args["a"], args["b"], args["op"]
    if op == "div" and b == 0:
        return "Error: division by zero"
    operations: dict[str, Callable[[], float]] = {
        "add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b, "div": lambda: a / b,
    }
    return _show(operations[op]())


def _search(args: dict) -> str:
    query = args["query"].lower()
    hits = [text for words, text in _SEARCH_INDEX if all(w in query for w in words)]
    if not hits:
        return "No results found."
    return "\n".join(f"{i}. {text}" for i, text in enumerate(hits, 1))


def _send_email(args: dict) -> str:
    return "Email queued for delivery."  # the demo sends nothing


_FILES = {"Cargo.toml": '[package]\nname = "agents-v2"\nversion = "0.1.0"\n', "src/main.rs": "fn main() {}\n"}
"""The demo's make-believe project: what `read_file` and `list_files` see (it reads no real file)."""


def _read_file(args: dict) -> str:
    return _FILES.get(args["path"], f"Error: no such file: {args['path']}")


def _list_files(args: dict) -> str:
    folder = args.get("path", ".").strip("./")
    names = sorted({n[len(folder) + 1:] if folder else n for n in _FILES if n.startswith(folder)})
    return "\n".join(names) if names else "(empty)"


_TOOLS: dict[str, Callable[[dict], str]] = {
    "calculator": _calculator, "search": _search, "send_email": _send_email,
    "read_file": _read_file, "list_files": _list_files,
}


class _Session:
    """One run: records tool calls and a chat-completions style transcript."""

    def __init__(self, prompt: str) -> None:
        self.calls: list[ToolCall] = []
        self.messages: list[dict] = [{"role": "user", "content": prompt}]

    def call(self, name: str, args: dict) -> str:
        result = _TOOLS[name](args)
        call_id = f"call_{len(self.calls) + 1}"
        function = {"name": name, "arguments": json.dumps(args)}
        self.messages.append({
            "role": "assistant", "content": None,
            "tool_calls": [{"id": call_id, "type": "function", "function": function}],
        })
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
        self.calls.append(ToolCall(name=name, args=args, result=result))
        return result

    def finish(self, text: str) -> RunArtifacts:
        self.messages.append({"role": "assistant", "content": text})
        words = sum(len(json.dumps(m).split()) for m in self.messages)
        return RunArtifacts(
            tool_calls=self.calls, final_text=text,
            tokens=words * 4 // 3, transcript=self.messages,
        )


# --------------------------------------------------------------- rules --
# Each rule takes the prompt and the session and returns the final text,
# or None when it does not apply. The first rule that applies answers.

Rule = Callable[[str, _Session], "str | None"]


def _exact_word(prompt: str, session: _Session) -> str | None:
    found = re.search(r'exactly the word "([^"]+)"', prompt, re.IGNORECASE)
    return found.group(1) if found else None


def _json_object(prompt: str, session: _Session) -> str | None:
    if "json" not in prompt.lower():
        return None
    keys_part = re.search(r"keys? (.+?) for ", prompt)
    if not keys_part:
        return None
    extractors = {"name": r"named (\w+)", "age": r"(\d+) years? old", "city": r"lives in (\w+)"}
    value: dict[str, object] = {}
    for key in re.findall(r'"(\w+)"', keys_part.group(1)):
        found = re.search(extractors.get(key, r"(?!)"), prompt)
        text = found.group(1) if found else None
        value[key] = _number(text) if text and text.isdigit() else text
    return json.dumps(value)


def _primary_colours(prompt: str, session: _Session) -> str | None:
    if not re.search(r"primary colou?rs", prompt, re.IGNORECASE):
        return None
    colours = ["red", "yellow", "blue"] if "paint" in prompt.lower() else ["red", "green", "blue"]
    return ", ".join(colours)


def _capital(prompt: str, session: _Session) -> str | None:
    found = re.search(r"capital of (\w+)", prompt, re.IGNORECASE)
    if not found or found.group(1).lower() not in _CAPITALS:
        return None
    country, city = found.group(1), _CAPITALS[found.group(1).lower()]
    prefix_pattern = r'(?:begin|start) your (?:reply|answer) with "([^"]+)"'
    prefix = re.search(prefix_pattern, prompt, re.IGNORECASE)
    if prefix:
        return f"{prefix.group(1)} The capital of {country} is {city}."
    if re.search(r"\bonly\b|\bone word\b", prompt, re.IGNORECASE):
        return city
    return f"The capital of {country} is {city}."


def _search_query(prompt: str) -> str:
    """What to search for: a quoted term, the object of 'look up'/'search for', or the question."""
    patterns = (
        r'search (?:the web )?for "([^"]+)"',
        r"look up (?:the )?(.+?)(?: and |[.?!]|$)",
        r"search (?:the web )?for (.+?)(?: and |[.?!]|$)",
        r"([^.?!]*\?)",
    )
    for pattern in patterns:
        found = re.search(pattern, prompt, re.IGNORECASE)
        if found:
            return found.group(1).strip().rstrip("?")
    return prompt.strip()


def _email(prompt: str, session: _Session) -> str | None:
    address = _EMAIL.search(prompt)
    if not address or not re.search(r"\b(e-?mail|mail|send)\b", prompt, re.IGNORECASE):
        return None
    subject_match = re.search(r'subject "([^"]+)"', prompt, re.IGNORECASE)
    if re.search(r"\b(search|look up|find)\b", prompt, re.IGNORECASE):
        query = _search_query(prompt)
        found = session.call("search", {"query": query})
        subject = subject_match.group(1) if subject_match else f"Summary: {query}"
        body = f"Hi,\n\nHere is what I found:\n{found}\n"
    else:
        message_pattern = r"\btell (?:her|him|them) (?:that )?(.+?)\.?\s*$"
        message = re.search(message_pattern, prompt, re.IGNORECASE)
        subject = subject_match.group(1) if subject_match else "A message from the demo agent"
        said = message.group(1) if message else prompt.strip()
        body = f"Hi,\n\n{said[0].upper()}{said[1:]}.\n"
    args = {"to": address.group(0), "subject": subject, "body": body}
    session.call("send_email", args)
    return f'I emailed {args["to"]} with the subject "{subject}".'


def _files(prompt: str, session: _Session) -> str | None:
    """Read a named file (``Read the Cargo.toml file``), or list a folder (``What files are in ...``)."""
    read = re.search(r"\b(?:read|show me the contents of|open)\s+(?:the\s+)?(?:file\s+)?([\w./-]+\.\w+)", prompt,
                     re.IGNORECASE)
    if read:
        path = read.group(1)
        content = session.call("read_file", {"path": path})
        return f"{path}:\n{content}"
    if re.search(r"\b(what files|list (?:the )?(?:files|everything))\b", prompt, re.IGNORECASE):
        folder = re.search(r"\bin (?:the )?([\w./-]+) (?:directory|folder)", prompt, re.IGNORECASE)
        path = folder.group(1) if folder and folder.group(1).lower() not in ("current", "this", "project") else "."
        listing = session.call("list_files", {"path": path})
        return f"The files are:\n{listing}"
    return None


def _search_only(prompt: str, session: _Session) -> str | None:
    if not re.search(r"\b(search|look up|find out)\b", prompt, re.IGNORECASE):
        return None
    query = _search_query(prompt)
    found = session.call("search", {"query": query})
    if found == "No results found.":
        return f'I searched for "{query}" but found nothing.'
    first = found.splitlines()[0].split(". ", 1)[-1]
    return f"According to my search: {first}"


# ----------------------------------------------------------- arithmetic --


def _math_runs(prompt: str) -> list[list[str]]:
    """Maximal runs of number/operator/bracket tokens in the prompt."""
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", prompt)
    for pattern, symbol in _WORD_OPS:
        text = re.sub(pattern, f" {symbol} ", text, flags=re.IGNORECASE)
    runs: list[list[str]] = [[]]
    for token in _TOKEN.findall(text):
        if token[0].isdigit() or token in "+-*/()":
            runs[-1].append(token)
        elif runs[-1]:
            runs.append([])
    return [run for run in runs if any(t in "+-*/" for t in run) and len(run) >= 3]


class _Calc:
    """Recursive-descent evaluation; every binary operation is one calculator call."""

    def __init__(self, tokens: list[str], session: _Session) -> None:
        self.tokens, self.pos, self.session = tokens, 0, session

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str:
        self.pos += 1
        return self.tokens[self.pos - 1]

    def expr(self, ops: str = "+-") -> float:
        left = self.term() if ops == "+-" else self.atom()
        while (following := self.peek()) is not None and following in ops:
            op = self.take()
            right = self.term() if ops == "+-" else self.atom()
            args = {"op": _OP_NAMES[op], "a": _number(_show(left)), "b": _number(_show(right))}
            answer = self.session.call("calculator", args)
            if answer.startswith("Error"):
                raise ZeroDivisionError(answer)
            left = float(answer)
        return left

    def term(self) -> float:
        return self.expr("*/")

    def atom(self) -> float:
        token = self.take()
        if token == "(":
            value = self.expr()
            if self.take() != ")":
                raise ValueError("unbalanced brackets")
            return value
        if token == "-":
            return -self.atom()
        return float(token)


def _arithmetic(prompt: str, session: _Session) -> str | None:
    for run in _math_runs(prompt):
        calc = _Calc(run, session)
        try:
            value = calc.expr()
        except ZeroDivisionError:
            return "That divides by zero, so it has no answer."
        except (ValueError, IndexError):
            continue
        if calc.pos != len(run):
            continue
        shown = " ".join(run).replace("( ", "(").replace(" )", ")")
        shown = re.sub(r"(^|[-+*/(] ?)- (?=[\d(])", r"\1-", shown)  # unary minus
        return f"{shown} = {_show(value)}"
    return None


def _word_problem(prompt: str, session: _Session) -> str | None:
    numbers = re.findall(r"\d+(?:\.\d+)?", prompt)
    if len(numbers) != 2 or not re.search(r"\bhow (many|much)\b", prompt, re.IGNORECASE):
        return None
    if not re.search(r"\b(each|per|holds|contains|every)\b", prompt, re.IGNORECASE):
        return None
    a, b = (_number(n) for n in numbers)
    result = session.call("calculator", {"op": "mul", "a": a, "b": b})
    return f"{_show(a)} x {_show(b)} = {result}, so the answer is {result}."


def _chit_chat(prompt: str, session: _Session) -> str | None:
    if re.search(r"\b(hello|hi|hey|how are you|thanks|thank you)\b", prompt, re.IGNORECASE):
        return "Hello! I'm doing well, thanks for asking. How can I help you today?"
    return None


_UNKNOWN = "I'm the evaldsl demo agent, a rule-based stand-in, and I don't know how to answer that."
_RULES: tuple[Rule, ...] = (
    _exact_word, _json_object, _primary_colours, _capital, _email, _files, _search_only,
    _arithmetic, _word_problem, _chit_chat,
)


class DemoAgent:
    """The rule-based stand-in agent; see the module docstring for what it is and is not."""

    name = "evaldsl-demo"

    def run(self, instruction: str, ctx: object = None) -> RunArtifacts:
        """Answer one prompt by the first rule that recognises it.

        It takes the case context (docs/models.md) to see the suite's tools: its
        own are built in, except in a shop conversation (suites/examples/shop),
        where it calls the world's `lookup_order` and `refund_order` through
        the context (`_demo_shop`).
        """
        from ._demo_shop import is_shop, shop_turn

        if ctx is not None and is_shop(ctx):
            return shop_turn(instruction, ctx)
        session = _Session(instruction)
        for rule in _RULES:
            text = rule(instruction, session)
            if text is not None:
                return session.finish(text)
        return session.finish(_UNKNOWN)


agent = DemoAgent()
"""The demo agent instance: ``evaldsl run suites/baseline --agent evaldsl.demo:agent``."""

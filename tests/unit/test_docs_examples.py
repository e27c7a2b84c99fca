"""The examples in the user docs are run: they compile, fail, or print what the page says.

Conventions in docs/language.md (and README.md, when it has examples):

- a fence opened with three or more backticks and the word ``evl`` holds a
  whole .evl file, which must compile;
- ``evl-error``: a whole file that must fail with `EvlError`;
- ``evl-fragment``: one or a few case lines (``expect ...``, a setting) or a
  single argument pattern, wrapped in a minimal case before compiling (a
  pattern becomes the pattern of a key: ``expect called t with <k: PATTERN>``);
- further words of the info string: a code such as ``E205`` or ``W301``
  that the block must report (an ``evl`` or ``evl-fragment`` block must
  report exactly the warnings it lists, so an example never warns by
  accident), and ``file=NAME``: the block is also written under NAME in the
  docs' example folder (any language: csv, jsonl, json), so that ``use`` and
  ``examples from`` find it;
- a ``console`` block whose first line is ``$ evaldsl ...`` shows that command
  run in the example folder and, after it, exactly what it prints (stdout,
  then stderr);
- an inline code span that starts with ``expect `` compiles as a fragment.

Every test is named by the file and line of its example (``language.md:120``),
so a broken example is one search away. Failure details and mock-tool answers
quoted on the page are checked against the code below, and the page's table
of error codes is checked against every code the package can raise.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from _docblocks import Block, fenced_blocks

import evaldsl
from evaldsl import EvalContext, EvlError, RunArtifacts, ToolCall

ROOT = Path(__file__).resolve().parents[2]
LANGUAGE = ROOT / "docs" / "language.md"
DOCS = [path for path in (LANGUAGE, ROOT / "README.md") if path.is_file()]
EVL_KINDS = ("evl", "evl-error", "evl-fragment")
_CODE = re.compile(r"[EW]\d{3}")
_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_CASE_WORDS = frozenset(
    [
        "expect",
        "tags",
        "repeat",
        "pass",
        "timeout",
        "system",
        "mode",
        "max",
        "skip",
        "xfail",
        "setup",
    ]
)
"""First words of the case lines that a fragment may start with; anything else is a pattern."""


def codes_of(block: Block) -> set[str]:
    """The diagnostic codes an example's info string says it must report."""
    return {w for w in block.words if _CODE.fullmatch(w)}


def inline_examples(doc: Path) -> list[Block]:
    """Inline code spans outside fences that start with `expect `."""
    fenced: set[int] = set()
    for block in fenced_blocks(doc):
        fenced.update(range(block.line, block.line + block.text.count("\n") + 2))
    found = []
    for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
        if number in fenced:
            continue
        for m in _SPAN.finditer(line):
            code = m[2].strip() if len(m[1]) > 1 else m[2]
            if code.startswith("expect "):
                found.append(
                    Block(
                        doc,
                        number,
                        "evl-fragment",
                        (),
                        code.replace("\\|", "|") + "\n",
                        column=m.start() + 1,
                    )
                )
    return found


BLOCKS = [b for doc in DOCS for b in fenced_blocks(doc)]
EVL_BLOCKS = [b for b in BLOCKS if b.kind in EVL_KINDS] + [
    b for doc in DOCS for b in inline_examples(doc)
]
CONSOLE_BLOCKS = [b for b in BLOCKS if b.kind == "console" and b.text.startswith("$ evaldsl ")]


def wrap_fragment(text: str) -> str:
    """A minimal case around case lines, or around a pattern (as the pattern of a key)."""
    first = text.split(None, 1)[0] if text.strip() else ""
    body = text if first in _CASE_WORDS else f"expect called t with <k: {text.rstrip()}>\n"
    indented = "".join(f"  {line}\n" for line in body.splitlines())
    return f'case "fragment"\n  prompt "fragment"\n  expect no error\n{indented}'


@pytest.fixture(scope="module")
def example_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Path]:
    """Per doc, a folder holding every block that names a `file=`."""
    dirs = {}
    for doc in DOCS:
        folder = tmp_path_factory.mktemp(doc.stem)
        names = [b.file for b in BLOCKS if b.doc == doc and b.file]
        assert len(names) == len(set(names)), f"{doc.name}: two blocks with the same file= name"
        for block in BLOCKS:
            if block.doc == doc and block.file:
                (folder / block.file).write_text(block.text, encoding="utf-8")
        dirs[doc] = folder
    return dirs


def _source(block: Block, folder: Path) -> tuple[str, str]:
    name = block.file or f"{block.doc.stem}_L{block.line}.evl"
    text = wrap_fragment(block.text) if block.kind == "evl-fragment" else block.text
    return text, str(folder / name)


@pytest.mark.parametrize("block", EVL_BLOCKS, ids=lambda b: b.id)
def test_example(block: Block, example_dirs: dict[Path, Path]) -> None:
    text, filename = _source(block, example_dirs[block.doc])
    if block.kind == "evl-error":
        with pytest.raises(EvlError) as info:
            evaldsl.compile(text, filename)
        found = {d.code for d in info.value.diagnostics}
        assert info.value.errors, f"{block.id}: raised without an error"
        assert codes_of(block) <= found, (
            f"{block.id}: expected {sorted(codes_of(block))}, got:\n{info.value}"
        )
        return
    try:
        suite = evaldsl.compile(text, filename)
    except EvlError as exc:
        pytest.fail(
            f"{block.id}: the example does not compile:\n{exc.render()}\n--- source ---\n{text}"
        )
    warned = {w.code for w in suite.warnings}
    assert warned == codes_of(block), (
        f"{block.id}: warnings {sorted(warned)}, the page lists {sorted(codes_of(block))}"
    )


@pytest.mark.parametrize("block", CONSOLE_BLOCKS, ids=lambda b: b.id)
def test_console(
    block: Block,
    example_dirs: dict[Path, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from evaldsl.cli import main

    command, _, shown = block.text.partition("\n")
    monkeypatch.chdir(example_dirs[block.doc])
    main(shlex.split(command[2:])[1:])
    out = capsys.readouterr()
    actual = [line.rstrip() for line in (out.out + out.err).rstrip("\n").splitlines()]
    assert actual == [line.rstrip() for line in shown.rstrip("\n").splitlines()], block.id


def test_the_page_has_examples_of_every_kind() -> None:
    kinds = [b.kind for b in EVL_BLOCKS if b.doc == LANGUAGE]
    assert kinds.count("evl") >= 20 and kinds.count("evl-error") >= 10
    assert kinds.count("evl-fragment") >= 40  # fenced fragments and inline `expect ...` spans
    assert any(b.doc == LANGUAGE for b in CONSOLE_BLOCKS)


def test_fragments_are_wrapped_in_a_case() -> None:
    assert wrap_fragment('contains "x"\n') == (
        'case "fragment"\n  prompt "fragment"\n  expect no error\n'
        '  expect called t with <k: contains "x">\n'
    )
    assert wrap_fragment("repeat 3\n").endswith("  expect no error\n  repeat 3\n")


# ------------------------------------------------- quoted details ------


def _run(expect: str, calls: tuple[tuple[str, Any], ...] = (), **artifacts: Any) -> str | None:
    case = evaldsl.compile(f'case "c"\n  prompt "p"\n  expect {expect}\n').cases[0]
    arts = RunArtifacts(tool_calls=[ToolCall(name=n, args=a) for n, a in calls], **artifacts)
    return case.expectations[-1](EvalContext(artifacts=arts)).detail


DETAILS: list[tuple[str, tuple[tuple[str, Any], ...], dict[str, Any], str]] = [
    # (expectation, calls, other artifacts, a detail the page quotes)
    ("called search", (("fetch_page", {}),), {}, "search was not called; calls: fetch_page"),
    ("called search", (), {}, "no tool was called"),
    (
        "called calculator with <op: add>",
        (("calculator", {"op": "sub", "a": 2, "b": 2}),),
        {},
        (
            "no call of calculator matched <op: add>; calls of calculator: "
            'calculator({"op": "sub", "a": 2, "b": 2}); closest: op: expected "add", got "sub"'
        ),
    ),
    ("called search twice", (("search", {}),), {}, "expected search twice, called 1 time"),
    (
        "called calculator with <op: add> at least 2 times",
        (("calculator", {"op": "add"}),),
        {},
        (
            "expected calculator with <op: add> at least 2 times, matched 1 time; "
            'calls of calculator: calculator({"op": "add"})'
        ),
    ),
    (
        "called any tool at most 2 times",
        (("a", {}), ("b", {}), ("c", {})),
        {},
        "expected any tool at most 2 times, called 3 times; calls: a, b, c",
    ),
    (
        "called search then send_email",
        (("send_email", {}), ("search", {})),
        {},
        "step 2 (send_email) not found after search at call 2; calls: send_email, search",
    ),
    (
        "calls are search then send_email",
        (("search", {}), ("fetch", {})),
        {},
        "call 2 was fetch, expected send_email; calls: search, fetch",
    ),
    (
        "calls are search then send_email",
        (("search", {}), ("send_email", {}), ("search", {})),
        {},
        "expected 2 calls, got 3; calls: search, send_email, search",
    ),
    (
        "only called read_file, list_files",
        (("read_file", {}), ("delete_file", {})),
        {},
        "called tools not allowed: delete_file (call 2); allowed: read_file, list_files",
    ),
    (
        "first call read_file",
        (("list_files", {}), ("read_file", {})),
        {},
        "first call was list_files, not read_file; calls: list_files, read_file",
    ),
    (
        'last call send_email with <to: "bob@example.com">',
        (("send_email", {"to": "al@example.com"}),),
        {},
        (
            'last call send_email({"to": "al@example.com"}) did not match <to: "bob@example.com">: '
            'to: expected "bob@example.com", got "al@example.com"'
        ),
    ),
    (
        'every call read_file with <path: starts with "src/">',
        (("read_file", {"path": "src/a.rs"}), ("read_file", {"path": "/etc/passwd"})),
        {},
        (
            '1 of 2 calls of read_file did not match <path: starts with "src/">; '
            'call 2 read_file({"path": "/etc/passwd"}): '
            'path: expected a string starting with "src/", got "/etc/passwd"'
        ),
    ),
    ("no tool calls", (("search", {}),), {}, "expected no tool calls, got 1; calls: search"),
    (
        "not called delete_repo",
        (("delete_repo", {"name": "prod"}),),
        {},
        'expected not `called delete_repo`, but it held; calls: delete_repo({"name": "prod"})',
    ),
    (
        'final text contains "hello"',
        (),
        {"final_text": "Hi there"},
        'final text "Hi there" does not contain "hello"',
    ),
    ('final text contains "hello"', (), {}, "no final text"),
    ('final text is "Paris"', (), {"final_text": "Paris."}, 'final text "Paris." is not "Paris"'),
    (
        'final text starts with "Yes"',
        (),
        {"final_text": "No."},
        'final text "No." does not start with "Yes"',
    ),
    (
        "final text matches /[0-9]{3}/",
        (),
        {"final_text": "abc"},
        'final text "abc" does not match /[0-9]{3}/',
    ),
    ("final text is empty", (), {"final_text": "x"}, 'final text "x" is not empty'),
    ("final number is 4", (), {"final_text": "2 + 2 = 5"}, "last number 5 is not 4"),
    ("final number at least 10", (), {"final_text": "9 items"}, "last number 9 is not at least 10"),
    ("final number is 4", (), {"final_text": "no digits"}, 'no number in final text "no digits"'),
    (
        "final number is 3.14 within 0.001",
        (),
        {"final_text": "pi is 3.1416"},
        "last number 3.1416 is not 3.14 (within 0.001)",
    ),
    (
        "final number between 1 and 5",
        (),
        {"final_text": "a loss of -1,024.50"},
        "last number -1024.5 is not between 1 and 5",
    ),
    (
        'final json <name: "Ada">',
        (),
        {"final_text": '{"name": "Bob"}'},
        'final json {"name": "Bob"}: name: expected "Ada", got "Bob"',
    ),
    (
        'final json <name: "Ada">',
        (),
        {"final_text": "just prose"},
        'final text is not JSON and holds no ```json block: "just prose"',
    ),
    (
        'final json <name: "Ada">',
        (),
        {"final_text": "```json\n{}\n```\n```json\n{}\n```"},
        "final text holds 2 ```json blocks, expected exactly one",
    ),
    (
        "no error",
        (),
        {"error": "HTTP 500 from the backend"},
        "the run reported an error: HTTP 500 from the backend",
    ),
    ("tokens at most 1000", (), {"tokens": 1500}, "the run used 1500 tokens, more than 1000"),
    ("tokens at most 1000", (), {}, "the run reported no token count"),
    ("duration at most 2s", (), {"duration_s": 3.5}, "the run took 3.5s, more than 2s"),
    ("called a or called b", (), {}, "none held: no tool was called; no tool was called"),
    (
        "first call read_file else first call list_files for 0.5",
        (("list_files", {}),),
        {},
        (
            "first call was list_files, not read_file; calls: list_files; "
            "fallback `first call list_files` held, credit 0.5"
        ),
    ),
    (
        "called search with <limit: above 5>",
        (("search", '{"limit": 5}'),),
        {},
        "closest: limit: expected above 5, got 5",
    ),
    (
        "called search with <query: any>",
        (("search", "query=weather"),),
        {},
        "closest: arguments are not valid JSON: query=weather",
    ),
    (
        "called search with <query: any>",
        (("search", {"q": "x"}),),
        {},
        'closest: missing key "query"',
    ),
    (
        "called send_email with <cc: absent>",
        (("send_email", {"cc": "boss@example.com"}),),
        {},
        'closest: cc: expected no such key, got "boss@example.com"',
    ),
    (
        "called list_files with <options: <recursive: true>>",
        (("list_files", {"options": {"recursive": False}}),),
        {},
        "closest: options.recursive: expected true, got false",
    ),
    (
        "called t with <ids: [1, 2]>",
        (("t", {"ids": [1, 2, 3]}),),
        {},
        "closest: ids: expected an array of 2 elements, got 3: [1, 2, 3]",
    ),
    (
        "called t with <tags: contains news and contains weather>",
        (("t", {"tags": ["news"]}),),
        {},
        'closest: tags: expected an array containing "weather", got ["news"]',
    ),
    (
        "called t with <unit: one of [celsius, fahrenheit]>",
        (("t", {"unit": "kelvin"}),),
        {},
        'closest: unit: expected one of ["celsius", "fahrenheit"], got "kelvin"',
    ),
    ("called t with <n: 2>", (("t", {"n": True}),), {}, "closest: n: expected 2, got true"),
    # v2: precise matching
    (
        'called [search with <q: "paris">, search with <q: "rome">] in any order',
        (("search", {"q": "paris"}), ("search", {"q": "lyon"})),
        {},
        'step 2 (search with <q: "rome">) found no call of its own; calls: search, search; '
        'closest unmatched call: search({"q": "lyon"}): q: expected "rome", got "lyon"',
    ),
    (
        "calls are [search, send_email] in any order",
        (("send_email", {}), ("search", {}), ("search", {})),
        {},
        "expected exactly 2 calls, got 3; no step for search({}) (call 3)",
    ),
    (
        'called get_weather with only <city: "Paris">',
        (("get_weather", {"city": "Paris", "unit": "c"}),),
        {},
        'closest: unit: unexpected key (`only` names city), got "c"',
    ),
    (
        "called get_weather with <unit: absent or one of [c, f]>",
        (("get_weather", {"city": "Paris", "unit": "k"}),),
        {},
        'closest: unit: expected one of ["c", "f"], got "k"',
    ),
    (
        'called get_weather with <city: "New York, NY" loosely>',
        (("get_weather", {"city": "Boston"}),),
        {},
        'closest: city: expected "New York, NY" loosely, got "Boston"',
    ),
]


@pytest.mark.parametrize(
    "expect, calls, artifacts, detail", DETAILS, ids=[d[0] + " " + d[3][:30] for d in DETAILS]
)
def test_quoted_detail(expect: str, calls: tuple, artifacts: dict, detail: str) -> None:
    actual = _run(expect, calls, **artifacts)
    assert actual is not None and detail in actual, f"the code now says: {actual!r}"
    assert detail in LANGUAGE.read_text(encoding="utf-8"), (
        "docs/language.md does not quote this detail"
    )


def test_quoted_judge_and_custom_details() -> None:
    page = LANGUAGE.read_text(encoding="utf-8")
    src = (
        'case "c"\n  prompt "p"\n  expect judge "The answer is polite"\n'
        '  expect file_exists(path: "out/report.md")\n'
    )
    judge, custom = evaldsl.compile(src).cases[0].expectations

    def scored(score: float) -> Any:
        return lambda *, rubric, prompt, artifacts: score

    detail = judge(EvalContext(artifacts=RunArtifacts(), judge=scored(0.4))).detail
    assert detail == 'judge scored 0.40, below 0.5, on "The answer is polite"' and detail in page
    assert judge(EvalContext(artifacts=RunArtifacts(), judge=scored(0.5))).passed
    for result, expected in (
        (False, "file_exists returned false"),
        (0.5, "file_exists gave credit 0.5"),
    ):
        ctx = EvalContext(
            artifacts=RunArtifacts(), predicates={"file_exists": lambda a, w, r=result, **k: r}
        )
        assert custom(ctx).detail == expected and expected in page


def test_quoted_valid_arguments_detail() -> None:
    tools = 'tool get_weather\n  param city: string\n  param days?: integer\n'
    case = evaldsl.compile(f'{tools}case "c"\n  prompt "p"\n  expect valid arguments\n').cases[0]
    arts = RunArtifacts(tool_calls=[ToolCall(name="get_weather", args={"city": "Paris", "days": 2.0})])
    detail = case.expectations[0](EvalContext(artifacts=arts, tools=case.tools)).detail
    assert detail == ("1 of 1 calls had invalid arguments; call 1 get_weather({\"city\": \"Paris\", \"days\": 2.0}): "
                      "parameter `days` must be an integer")
    assert detail in LANGUAGE.read_text(encoding="utf-8")


def test_the_precise_matching_claims() -> None:
    # Forms the page says hold (v2).
    both = (("search", {"q": "lyon"}), ("search", {"q": "paris"}))
    assert _run('called [search, search with <q: "paris">] in any order', both) is None
    assert _run('called [search, search with <q: "paris">] in any order', both[::-1]) is None
    for city in ("new york ny", "NewYork-NY"):
        assert _run('called t with <c: "New York, NY" loosely>', (("t", {"c": city}),)) is None
    assert _run("called t with <days: 2>", (("t", {"days": 2.0}),)) is None


def test_quoted_details_that_hold() -> None:
    # Forms the page says hold; each is a small claim of the reference.
    assert _run('final text is "Paris"', final_text="  Paris\n") is None
    assert _run("final number is 4", final_text="3-4") is None
    assert _run("final number is 2", final_text="v2") == 'no number in final text "v2"'
    assert _run("final json <a: 1>", final_text='Here:\n```JSON\n{"a": 1}\n```') is None
    assert _run("final json <a: 1>", final_text='```jsonc\n{"a": 1}\n```') is not None
    assert _run('called t with <k: "straße" ignoring case>', (("t", {"k": "STRASSE"}),)) is None
    assert _run("called t with <k: 2>", (("t", {"k": 2.0}),)) is None
    assert _run("every call t with <k: 1>") is None
    assert _run("only called t") is None


def _compiled(marker: str) -> Any:
    """The compiled suite of the one fenced example holding `marker`."""
    (block,) = [b for b in BLOCKS if b.doc == LANGUAGE and b.kind == "evl" and marker in b.text]
    return evaldsl.compile(block.text)


def test_quoted_renderings() -> None:
    # What the page says its examples compile to.
    long = _compiled("Summarise this in one sentence").cases[0]
    assert (
        long.prompt
        == 'Summarise this in one sentence:\n\n  "The quick brown fox jumps over the lazy dog."'
    )
    assert [c.name for c in _compiled("adds {{a}} and {{b}}").cases] == [
        "adds 2 and 2",
        "adds 10 and 32",
        "adds 1 and 0.5",
    ]
    jinja = _compiled("explains {{ engine }} syntax").cases[0]
    assert jinja.prompt == "In Jinja, what does {{ user }} do?"
    capitals = _compiled("Bhutan").cases
    assert [(c.settings.tags, c.settings.skip) for c in capitals] == [
        (("europe",), None),
        (("asia", "big"), None),
        (("asia", "small"), "the agent has no data"),
    ]
    settings = _compiled("summarises the changelog").cases
    assert settings[0].settings.tags == ("nightly", "docs")
    assert (settings[1].settings.xfail, settings[2].settings.skip) == (
        "the agent cannot edit files yet",
        "",
    )


# -------------------------------------------------- mock tool answers --


def _doc_block(name: str) -> Block:
    return next(b for b in BLOCKS if b.doc == LANGUAGE and b.file == name)


MOCK_ANSWERS = [
    ({"path": "Cargo.toml"}, True, '[package]\nname = "agents-v2"'),
    ({"path": "secrets/key.pem"}, False, "Error: permission denied"),
    (
        {"path": "notes.txt"},
        False,
        'Error: read_file: no canned answer for arguments {"path": "notes.txt"}',
    ),
    ({}, False, "Error: read_file: missing required parameter `path`"),
    ({"path": 7}, False, "Error: read_file: parameter `path` must be a string"),
    (
        {"path": "a", "encoding": "ascii"},
        False,
        'Error: read_file: parameter `encoding` must be one of ["utf-8", "latin-1"]',
    ),
    (
        {"path": "a", "lines": [1, 2.5]},
        False,
        "Error: read_file: parameter `lines` item 1 must be an integer",
    ),
    ("path=a", False, "Error: read_file: arguments are not valid JSON: path=a"),
    ({"path": "a", "lines": [1, 2.0]}, False, "Error: read_file: parameter `lines` item 1 must be an integer"),
    ([1], False, "Error: read_file: arguments must be an object"),
]


@pytest.mark.parametrize("args, ok, text", MOCK_ANSWERS, ids=[repr(m[0]) for m in MOCK_ANSWERS])
def test_mock_tool_answers(args: Any, ok: bool, text: str, example_dirs: dict[Path, Path]) -> None:
    block = _doc_block("mock_tools.evl")
    suite = evaldsl.compile(block.text, str(example_dirs[LANGUAGE] / "mock_tools.evl"))
    tool = next(t for t in suite.tools if t.name == "read_file")
    answer = tool.answer(args)
    assert (answer.ok, answer.text) == (ok, text)
    if not ok and text.startswith("Error: read_file"):
        assert text in LANGUAGE.read_text(encoding="utf-8"), (
            "docs/language.md does not quote this answer"
        )


# ------------------------------------------------------- error codes --


def test_every_code_is_in_the_table() -> None:
    raised = set()
    for source in (ROOT / "evaldsl").rglob("*.py"):
        raised.update(re.findall(r"\"([EW]\d{3})\"", source.read_text(encoding="utf-8")))
    page = LANGUAGE.read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `([EW]\d{3})` \|", page, flags=re.MULTILINE))
    assert raised, "no codes found in the package: the scan is broken"
    assert sorted(raised - rows) == [], "codes the package raises but the table lacks"
    assert sorted(rows - raised) == [], "codes in the table that the package never raises"

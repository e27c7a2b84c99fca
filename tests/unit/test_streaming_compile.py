"""Compiling a file as it is read (issue 9): the same suite and the same diagnostics as
compiling its whole AST, without holding it; `examples from` rows made when read.

The reference everywhere is the two-step path the public API keeps:
`parse` to a `Suite`, then `compile` of that AST.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "properties"))
from _mutate import mutants, seeds  # noqa: E402

import evaldsl
from evaldsl.compile._compiler import check_suite, compile_suite
from evaldsl.compile._model import CaseSettings, CompiledCase, CompiledExpectation, LazyCases, SuiteCases, case_keys
from evaldsl.run._api import flatten_cases, run_suite
from evaldsl.run._shard import Shard, shard_cases, suite_version
from evaldsl.syntax._diagnostics import EvlError
from evaldsl.syntax._parser import parse_with_diagnostics

ROOT = Path(__file__).resolve().parents[2]


def _two_step(text: str, filename: str) -> tuple[Any, list]:
    """(the suite's JSON or None, every diagnostic) by parsing first, then compiling the AST."""
    suite, diags = parse_with_diagnostics(text, filename)
    if any(d.severity == "error" for d in diags):
        return None, diags
    try:
        compiled = compile_suite(suite, filename)
    except EvlError as exc:
        return None, diags + exc.diagnostics
    return compiled.to_json(), diags + [d for d in compiled.warnings if d not in diags]


def _streamed(text: str, filename: str, keep: bool = True) -> tuple[Any, list]:
    try:
        compiled = check_suite(text, filename, keep_cases=keep, import_worlds=True)  # as compile_suite does
    except EvlError as exc:
        return None, exc.diagnostics
    return (compiled.to_json() if keep else None), list(compiled.warnings)


def _key(diags: list) -> list:
    return [(d.code, d.severity, d.message, d.span, d.help) for d in diags]


@pytest.mark.parametrize("name", [n for n, _ in seeds()])
def test_every_shipped_and_golden_suite_compiles_the_same_streamed(name: str) -> None:
    text = (ROOT / name).read_text(encoding="utf-8")
    filename = str(ROOT / name)
    want_json, want_diags = _two_step(text, filename)
    got_json, got_diags = _streamed(text, filename)
    assert got_json == want_json
    assert _key(got_diags) == _key(want_diags)
    _, check_diags = _streamed(text, filename, keep=False)
    assert _key(check_diags) == _key(want_diags)


@pytest.mark.parametrize("seed", [11, 12])
def test_mangled_suites_give_the_same_diagnostics_streamed(seed: int) -> None:
    for data in mutants(seed, 60):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if "\x00" in text:
            continue
        want_json, want_diags = _two_step(text, "m.evl")
        got_json, got_diags = _streamed(text, "m.evl")
        assert got_json == want_json, text
        assert _key(got_diags) == _key(want_diags), text


def test_check_keeps_no_compiled_case() -> None:
    text = "".join(f'case "c{i}"\n  prompt "p"\n  expect no error\n' for i in range(50))
    assert check_suite(text, "k.evl").cases == ()
    assert len(check_suite(text, "k.evl", keep_cases=True).cases) == 50


def test_a_tool_block_below_a_case_is_known_to_the_case_above() -> None:
    text = ('case "a"\n  prompt "p"\n  expect called lookup with <q: "x">\n'
            'tool lookup "Look up"\n  param q: string "query"\n')
    suite = evaldsl.compile(text, filename="t.evl")
    assert [t.name for t in suite.tools] == ["lookup"]
    assert suite.cases[0].tools == suite.tools
    assert not [d for d in suite.warnings if "lookup" in d.message]  # not "undeclared tool"


def test_a_use_line_is_compiled_while_the_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "tools.evl").write_text('tool search "Search"\n  param query: string "q"\n', encoding="utf-8")
    (tmp_path / "main.evl").write_text(
        'use "tools.evl"\n# a comment\ncase "a"\n  prompt "p"\n  expect called search\n'
        '# another\ncase "b"\n  prompt "q"  # trailing\n  expect no error\n', encoding="utf-8")
    suite = evaldsl.load(tmp_path / "main.evl")[0]
    assert [c.name for c in suite.cases] == ["a", "b"]
    assert [t.name for t in suite.cases[1].tools] == ["search"]
    parsed = evaldsl.parse((tmp_path / "main.evl").read_text(encoding="utf-8"))  # the parser's state survived
    assert [c.text for c in parsed.comments] == ["# a comment", "# another", "# trailing"]


def test_a_syntax_error_below_a_bad_case_reports_only_the_syntax_error() -> None:
    text = 'case "a"\n  prompt "p"\n  expect called $tool\ncase "b"\n  prompt "q"\n  expect final number is\n'
    with pytest.raises(EvlError) as info:
        evaldsl.compile(text, filename="e.evl")
    assert [d.code for d in info.value.errors] == [d.code for d in _two_step(text, "e.evl")[1]]
    assert all(d.code != "E201" for d in info.value.errors)  # the placeholder error of case "a" is not shown


def test_duplicate_names_across_cases_and_rows() -> None:
    text = ('case "x"\n  prompt "p"\n  expect no error\n'
            'case "x"\n  prompt "p"\n  expect no error\n'
            'case "r"\n  prompt "{{n}}"\n  expect no error\n  examples\n  | n |\n  | 1 |\n  | 2 |\n')
    with pytest.raises(EvlError) as info:
        evaldsl.compile(text, filename="d.evl")
    dups = [d for d in info.value.errors if d.code == "E205"]
    assert [(d.span.line, d.help) for d in dups] == [
        (4, "another case of this name is at line 1"),
        (7, "two rows of this case's examples give it this name: put a column in the name"),
    ]


# ------------------------------------------------------------ examples rows --


def _rows_suite(tmp_path: Path, rows: list[dict], extra: str = "") -> Path:
    with open(tmp_path / "rows.jsonl", "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")
    path = tmp_path / "rows.evl"
    path.write_text(
        extra + 'case "row {{n}}"\n  prompt "What is {{n}} + 2?"\n'
        "  expect called calculator with <op: add, a: $n, b: 2>\n"
        "  expect final number is $total\n  expect no error\n"
        '  examples from "rows.jsonl"\n', encoding="utf-8")
    return path


def test_rows_of_a_file_are_made_when_read(tmp_path: Path) -> None:
    path = _rows_suite(tmp_path, [{"n": i, "total": i + 2} for i in range(30)], 'case "first"\n  prompt "p"\n'
                       "  expect no error\n")
    suite = evaldsl.load(path)[0]
    assert isinstance(suite.cases, SuiteCases) and len(suite.cases) == 31
    assert suite.cases[0].name == "first"
    assert suite.cases[5].name == "row 4" and suite.cases[-1].name == "row 29"
    assert [c.name for c in suite.cases[1:4]] == ["row 0", "row 1", "row 2"]
    assert suite.cases[7] is not suite.cases[7]  # made again at each read, never kept
    assert list(case_keys(suite.cases)) == [(c.file, c.name) for c in suite.cases]  # known without making them
    assert suite.cases[7].prompt == suite.cases[7].prompt == "What is 6 + 2?"
    with pytest.raises(IndexError):
        suite.cases[31]
    # the same cases as the same rows written as an inline table
    table = "".join(f"  | {i} | {i + 2} |\n" for i in range(30))
    inline = path.read_text(encoding="utf-8").replace('  examples from "rows.jsonl"\n',
                                                      "  examples\n  | n | total |\n" + table)
    eager = evaldsl.compile(inline, filename=str(path))
    assert isinstance(eager.cases, tuple)
    assert suite.to_json() == eager.to_json()
    assert suite_version(suite.cases) == suite_version(eager.cases)
    checks = [e.check for e in suite.cases[3].expectations]
    for got, want in zip(suite.cases[3].expectations, eager.cases[3].expectations):
        assert got.label == want.label and got.needs_judge == want.needs_judge
    assert checks[2] is suite.cases[9].expectations[2].check  # a row-free expectation is compiled once


def test_every_bad_row_is_reported_where_it_is(tmp_path: Path) -> None:
    rows: list[dict] = [{"n": i, "total": i + 2} for i in range(10)]
    rows[3]["total"] = "seven"
    rows[8] = {"n": 8}
    path = _rows_suite(tmp_path, rows)
    with pytest.raises(EvlError) as info:
        evaldsl.load(path)
    messages = [d.message for d in info.value.errors]
    assert any("rows.jsonl record 4, column `total`, holds `seven`" in m for m in messages), messages
    assert any("unknown example column `total`" in m for m in messages), messages
    assert len(messages) == 2


def test_a_broken_line_of_the_file_is_positioned_in_it(tmp_path: Path) -> None:
    path = _rows_suite(tmp_path, [{"n": 1, "total": 3}])
    with open(tmp_path / "rows.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"n": 2, "total": }\n')
    with pytest.raises(EvlError) as info:
        evaldsl.load(path)
    (diag,) = info.value.errors
    assert diag.code == "E215" and diag.span.file.endswith("rows.jsonl") and diag.span.line == 2


def test_lazy_cases_run_shard_and_flatten_without_materialising(tmp_path: Path) -> None:
    path = _rows_suite(tmp_path, [{"n": i, "total": i + 2} for i in range(40)])
    suite = evaldsl.load(path)[0]
    flat = flatten_cases(suite)
    assert isinstance(flat, SuiteCases) and len(flat) == 40
    assert len(flatten_cases([suite, suite])) == 40  # the same suite twice: each case once
    shards = [shard_cases(flat, Shard(i, 3), [str(path)]) for i in (1, 2, 3)]
    names = sorted(c.name for s in shards for c in s)
    assert names == sorted(c.name for c in flat) and len(set(names)) == 40

    class Answers:
        def run(self, prompt: str) -> Any:
            n = int(prompt.split()[2])
            from evaldsl.artifacts import RunArtifacts, ToolCall

            return RunArtifacts(tool_calls=[ToolCall(name="calculator", args={"op": "add", "a": n, "b": 2})],
                                final_text=str(n + 2 if n % 5 else n))

    report = run_suite(Answers(), suite, concurrency=4)
    assert [c.name for c in report.cases] == [f"row {i}" for i in range(40)]
    assert [c.status for c in report.cases].count("failed") == 8  # n = 0, 5, ..., 35
    assert report.cases[1].status == "passed"


def test_lazy_cases_as_a_plain_sequence() -> None:
    made: list[int] = []

    def build(i: int) -> Any:
        made.append(i)
        return i * 10

    lazy = LazyCases(5, build)  # type: ignore[arg-type]
    assert len(lazy) == 5 and made == []
    assert list(lazy) == [0, 10, 20, 30, 40]
    assert lazy[-1] == 40 and lazy[1:3] == [10, 20]
    with pytest.raises(IndexError):
        lazy[5]
    both = SuiteCases([[1, 2], lazy, [], [3]])  # type: ignore[list-item]
    assert len(both) == 8 and list(both) == [1, 2, 0, 10, 20, 30, 40, 3]
    assert both[2] == 0 and both[-1] == 3 and both[6] == 40


def test_an_expectation_text_seen_again_is_linted_again_when_it_warned() -> None:
    head = 'tool lookup "Look up"\n  param q: string "query"\n'
    case = 'case "c{i}"\n  prompt "p"\n  expect called lookup with <qq: "x">\n  expect called lookup\n'
    text = head + "".join(case.format(i=i) for i in range(3))
    suite = evaldsl.compile(text, filename="w.evl")
    lines = sorted(d.span.line for d in suite.warnings if d.code == "W302")
    assert lines == [5, 9, 13]  # each occurrence warned where it stands, not only the first
    assert _key(list(suite.warnings)) == _key(_two_step(text, "w.evl")[1])
    with pytest.raises(EvlError) as info:  # and an error, each time too
        evaldsl.compile(text.replace("expect called lookup\n", "expect called serach\n"), filename="w.evl")
    assert [d.span.line for d in info.value.errors] == [6, 10, 14]


def _reference_version(cases: list) -> str:  # type: ignore[type-arg]
    """The fingerprint as first defined: every case's entry in memory, sorted, joined, hashed."""
    import hashlib

    from evaldsl.compile._described import file_keys
    from evaldsl.compile._described import settings_text as _settings_text

    class Shown(str):  # a case's settings as suite_version writes them (v2 settings at their defaults left out)
        def __repr__(self) -> str:
            return str(self)

    keys = file_keys(c.file for c in cases)
    entries = sorted(repr(("/".join(keys[c.file]), c.name, c.prompt, Shown(_settings_text(c.settings)), c.setup,
                           [e.label for e in c.expectations], repr([(t.name, t.parameters) for t in c.tools])))
                     for c in cases)
    return "sha256:" + hashlib.sha256("\n".join(entries).encode("utf-8", "surrogatepass")).hexdigest()[:16]


_NAMES = st.text(alphabet=st.sampled_from(["a", "b", "'", '"', "\\", "é", "\n", "\ud800", " ", "("]), max_size=5)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["s/a.evl", "s/a.evl2", "s/./a.evl", "t/b'.evl", "s/a"]), _NAMES,
                          _NAMES, st.sampled_from([None, 1, 12, "x", {"k": [1]}])), max_size=25),
       st.integers(min_value=1, max_value=4), st.sampled_from([0, 200, 1 << 30]))
def test_suite_version_in_sorted_batches_is_the_whole_sort(cases: list, batch: int,  # type: ignore[type-arg]
                                                           raw: int) -> None:
    """`suite_version` sorts its lines a batch at a time and merges them by file: the fingerprint is
    that of sorting every entry at once, whatever the names, files (one key reached two ways) and batches,
    and whether the batches are kept compressed from the first, from some point on, or never."""
    import evaldsl.run._shard as shard

    made = [CompiledCase(suite="s", name=n, file=f, line=1, prompt=p, settings=CaseSettings(),
                         expectations=(CompiledExpectation(label=n + p, file=f, line=2, check=print),),
                         setup=setup) for f, n, p, setup in cases]
    whole = _reference_version(made)
    old = shard.SORT_BATCH, shard.RAW_BYTES
    try:
        shard.SORT_BATCH, shard.RAW_BYTES = batch, raw
        assert suite_version(made) == whole
        assert suite_version(iter(made)) == whole
    finally:
        shard.SORT_BATCH, shard.RAW_BYTES = old


def test_outlines_of_rows_describe_them_as_their_cases_do(tmp_path: Path) -> None:
    """An examples row's outline (what `suite_version` and the settings warning read) has its case's
    name, prompt, settings, setup, tools and expectation labels, lines and judges; its checks cannot run."""
    from evaldsl.compile._model import outlined

    path = _rows_suite(tmp_path, [{"n": i, "total": i + 2, "tags": f"tag{i % 3}"} for i in range(12)],
                       'tool calculator\n  param op: string\n  when <op: add> returns "4"\n\n')
    path.write_text(path.read_text(encoding="utf-8").replace(
        "  expect no error\n",
        '  expect no error\n  expect final text contains "{{tags}}" else final text contains "x" for 0.5\n'
        '  expect judge "is it {{n}}?" at least 0.5\n  timeout 9s\n  setup <n: $n>\n'
        '  system "you are {{tags}}"\n'), encoding="utf-8")
    suite = evaldsl.load(path)[0]
    sketch, bare = outlined(suite.cases), outlined(suite.cases, labels=False)
    assert len(sketch) == len(bare) == len(suite.cases) == 12
    for case, outline, plain in zip(suite.cases, sketch, bare):
        for got in (outline, plain):
            assert (got.name, got.file, got.line, got.prompt, got.settings, got.setup, got.tools) == (
                case.name, case.file, case.line, case.prompt, case.settings, case.setup, case.tools)
        assert [(e.label, e.file, e.line, e.needs_judge, e.from_suite) for e in outline.expectations] == [
            (e.label, e.file, e.line, e.needs_judge, e.from_suite) for e in case.expectations]
        assert plain.expectations == ()
    assert sketch[4].settings.system == "you are tag1" and sketch[4].setup == {"n": 4}
    assert sketch[4].settings.tags == ("tag1",)  # from the row's `tags` column
    with pytest.raises(RuntimeError, match="cannot be run"):
        sketch[0].expectations[0](None)  # type: ignore[arg-type]
    assert suite_version(suite.cases) == _reference_version(list(suite.cases))


def test_selecting_sharding_and_resuming_rows_keeps_them_made_when_read(tmp_path: Path) -> None:
    """`-k`, `-m`, `--tag`, `--lf`, `--shard` and what `--resume` has left to run pick examples rows by
    position (`picked`): the same cases as the eager table's, still made when read, never all held."""
    from evaldsl.run._select import picked, select_cases

    rows = [{"n": i, "total": i + 2, "tags": "odd" if i % 2 else "even"} for i in range(30)]
    path = _rows_suite(tmp_path, rows)
    lazy = flatten_cases(evaldsl.load(path)[0])
    table = "".join(f"  | {r['n']} | {r['total']} | {r['tags']} |\n" for r in rows)
    inline = path.read_text(encoding="utf-8").replace('  examples from "rows.jsonl"\n',
                                                      "  examples\n  | n | total | tags |\n" + table)
    eager = list(evaldsl.compile(inline, filename=str(path)).cases)
    for options in ({"keyword": '"row 1" or "row 2"'}, {"markers": "odd"}, {"tags": ["even"]}, {"keyword": "nothing"}):
        chosen = select_cases(lazy, **options)  # type: ignore[arg-type]
        assert isinstance(chosen, LazyCases), options
        assert [c.name for c in chosen] == [c.name for c in select_cases(eager, **options)]  # type: ignore[arg-type]
        assert chosen[0] is not chosen[0] if len(chosen) else True  # made again at each read
    odd = select_cases(lazy, markers="odd")
    assert suite_version(odd) == suite_version(list(odd))  # its outlines are those of the rows it picked
    for i in (1, 2):
        mine = shard_cases(lazy, Shard(i, 2), [str(path)])
        assert isinstance(mine, LazyCases)
        assert [c.name for c in mine] == [c.name for c in shard_cases(eager, Shard(i, 2), [str(path)])]
    left = picked(lazy, [29, 3, 4])
    assert [c.name for c in left] == ["row 29", "row 3", "row 4"] and left[-1].prompt == "What is 4 + 2?"
    assert [c.name for c in picked(eager, [29, 3])] == ["row 29", "row 3"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(), max_size=8), st.integers(-10, 10), st.integers(-10, 10) | st.none(),
       st.integers(-10, 10) | st.none(), st.sampled_from([1, 2, -1, -3]))
def test_items_made_by_position_index_and_slice_as_a_list_does(items: list[int], i: int, start: int | None,
                                                                stop: int | None, step: int) -> None:
    """The base of the compiler's made-when-read sequences (cases, rows, lines, keys) indexes as a list."""
    from evaldsl.compile._positions import ByPosition

    class Doubled(ByPosition[int]):
        def __len__(self) -> int:
            return len(items)

        def _at(self, j: int) -> int:
            return 2 * items[j]

    made, doubled = Doubled(), [2 * x for x in items]
    assert made[start:stop:step] == doubled[start:stop:step]
    if -len(items) <= i < len(items):
        assert made[i] == doubled[i]
    else:
        with pytest.raises(IndexError, match="item index out of range"):
            made[i]
    assert list(made) == doubled

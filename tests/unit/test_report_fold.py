"""A record folded from its journal in one piece (`report._fold`) is the record made a case at a time."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaldsl.artifacts import RunArtifacts, ToolCall
from evaldsl.compile._model import CaseSettings, CompiledCase, CompiledExpectation, Outcome
from evaldsl.report import _fold, _keeper
from evaldsl.report._journal import journal_path
from evaldsl.report._json import read_record, record_json
from evaldsl.report._keeper import RecordKeeper
from evaldsl.run._api import run_suite
from evaldsl.run._record import EvalReport
from evaldsl.run._scripted import ScriptedAgent
from evaldsl.run._select import case_key
from evaldsl.run._stats import summarize


def case(name: str) -> CompiledCase:
    check = CompiledExpectation(label='final text is "ok"', file="t.evl", line=2,
                                check=lambda ctx: Outcome(1.0 if ctx.artifacts.final_text == "ok" else 0.0, "nope"))
    return CompiledCase(suite="t", name=name, file="t.evl", line=1, prompt=name, settings=CaseSettings(),
                        expectations=(check,))


TEXTS = ["ok", "no", 'tab\there "quoted"\nnew line', "é ✓ \u2028 \x85", "ok", "x" * 3000, "", "\\n"]
NAMES = [f"case {i}" for i in range(len(TEXTS))]


def sample() -> EvalReport:
    agent = ScriptedAgent({n: RunArtifacts(final_text=t, tokens=5, tool_calls=[ToolCall(name="x", args={"k": [1, {}]})])
                           for n, t in zip(NAMES, TEXTS)})
    return run_suite(agent, [case(n) for n in NAMES])


def kept(report: EvalReport, folder: Path, order: list[int], *, whole: bool) -> tuple[RecordKeeper, bytes]:
    """A keeper's record of ``report``, the cases added in ``order``; with ``whole`` false the one-piece
    fold is not allowed (the case-at-a-time path, as before it)."""
    path = folder / "r.json"
    keeper = RecordKeeper([case_key("t.evl", n) for n in NAMES], report.meta.model_copy(), [path])
    keeper.start(summarize([]))
    for i in order:
        keeper.add(report.cases[i])
    keeper.meta.complete, keeper.meta.finished_at = report.meta.complete, report.meta.finished_at
    with pytest.MonkeyPatch.context() as patch:
        if not whole:
            patch.setattr(_keeper.JournalRun, "find", classmethod(lambda cls, *args: None))
        keeper.finish(summarize(report.cases))
    assert not journal_path(path).exists()
    return keeper, path.read_bytes()


@pytest.mark.parametrize("chunk", [1 << 20, 7, 1])
def test_the_record_folded_in_one_piece_is_byte_for_byte_the_record_made_case_by_case(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    monkeypatch.setattr(_fold, "_CHUNK", chunk)  # lines cut across reads of the journal, down to a byte a read
    report = sample()
    order = list(range(len(NAMES)))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    old_keeper, old = kept(report, tmp_path / "a", order, whole=False)
    new_keeper, new = kept(report, tmp_path / "b", order, whole=True)
    assert new == old == record_json(report).encode("utf-8")
    # the cases' new spans point where the old path's did: reading them back gives the same cases
    assert list(new_keeper._offset) == list(old_keeper._offset)
    assert list(new_keeper._length) == list(old_keeper._length)
    assert list(new_keeper._source) == list(old_keeper._source)
    assert list(new_keeper.cases()) == report.cases
    assert read_record(tmp_path / "b" / "r.json") == report


def test_a_journal_whose_lines_are_not_the_record_in_order_takes_the_case_by_case_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    found: list[object] = []
    real = _keeper.JournalRun.find.__func__  # type: ignore[attr-defined]

    def spy(cls: type, *args: object) -> object:
        found.append(real(cls, *args))
        return found[-1]

    monkeypatch.setattr(_keeper.JournalRun, "find", classmethod(spy))
    report = sample()
    order = list(reversed(range(len(NAMES))))  # finished last to first: the journal's lines in reverse
    _, text = kept(report, tmp_path, order, whole=True)
    assert found[-1] is None and text == record_json(report).encode("utf-8")


def find(keeper: RecordKeeper) -> object:
    return _fold.JournalRun.find(keeper._journal_source(), len(keeper._sources) - 1, keeper._source,
                                 keeper._offset, keeper._length)


@pytest.mark.parametrize("twice", [False, True])
def test_a_case_left_out_or_written_twice_takes_the_case_by_case_path(tmp_path: Path, twice: bool) -> None:
    report = sample()
    path = tmp_path / "r.json"
    keeper = RecordKeeper([case_key("t.evl", n) for n in NAMES], report.meta.model_copy(), [path])
    keeper.start(summarize([]))
    done = report.cases if twice else report.cases[:-1]
    for i, result in enumerate(done):
        keeper.add(result)
        if twice and i == 1:
            keeper.add(result)  # its later line wins: the earlier one is a gap between the cases' lines
    assert find(keeper) is None
    keeper.finish(summarize(done))
    assert read_record(path).cases == done
    assert path.read_bytes() == record_json(EvalReport(meta=keeper.meta, summary=summarize(done),
                                                       cases=done)).encode("utf-8")

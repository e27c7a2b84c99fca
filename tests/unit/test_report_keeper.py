"""The record of a run in progress: the base record, the journal beside it, the streamed consolidation,
and reading back whatever a kill left on disk (`report._journal`, `report._keeper`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaldsl.artifacts import RunArtifacts, ToolCall
from evaldsl.compile._model import CaseSettings, CompiledCase, CompiledExpectation, Outcome
from evaldsl.report._journal import journal_line, journal_path
from evaldsl.report._json import RecordError, RecordWriteError, read_record, record_json
from evaldsl.report._keeper import RecordKeeper
from evaldsl.report._unfinished import read_unfinished
from evaldsl.run._api import run_suite
from evaldsl.run._record import CaseResult, EvalReport, RunMeta
from evaldsl.run._scripted import ScriptedAgent
from evaldsl.run._select import case_key
from evaldsl.run._stats import summarize


def case(name: str) -> CompiledCase:
    check = CompiledExpectation(label='final text is "ok"', file="t.evl", line=2,
                                check=lambda ctx: Outcome(1.0 if ctx.artifacts.final_text == "ok" else 0.0, "nope"))
    return CompiledCase(suite="t", name=name, file="t.evl", line=1, prompt=name, settings=CaseSettings(),
                        expectations=(check,))


NAMES = ["a", "b", "c", "d", "e"]
TEXTS = {"a": "ok", "b": "no", "c": 'tab\there "quoted"\nnew line', "d": "é ✓ \u2028 \x85", "e": "ok"}


def sample() -> EvalReport:
    agent = ScriptedAgent({n: RunArtifacts(final_text=t, tokens=5, tool_calls=[ToolCall(name="x", args={"k": [1, {}]})])
                           for n, t in TEXTS.items()})
    return run_suite(agent, [case(n) for n in NAMES])


def keeper_for(report: EvalReport, *paths: Path, **kw: Any) -> RecordKeeper:
    return RecordKeeper([case_key("t.evl", n) for n in NAMES], report.meta.model_copy(), list(paths), **kw)


def finished(keeper: RecordKeeper, report: EvalReport, cases: list[CaseResult]) -> None:
    keeper.meta.complete = report.meta.complete
    keeper.meta.finished_at = report.meta.finished_at
    keeper.finish(summarize(cases))


def test_a_record_kept_case_by_case_is_byte_for_byte_the_record_written_whole(tmp_path: Path) -> None:
    report = sample()
    keeper = keeper_for(report, tmp_path / "r.json", out_dir=tmp_path / "out", stem="m_1")
    keeper.start(summarize([]))
    for result in reversed(report.cases):  # cases finish in any order; the record keeps case order
        keeper.add(result)
    assert journal_path(tmp_path / "r.json").read_bytes().count(b"\n") == 1 + len(NAMES)
    finished(keeper, report, report.cases)
    whole = record_json(report)
    assert (tmp_path / "r.json").read_text("utf-8") == whole
    assert (tmp_path / "out" / "m_1.json").read_text("utf-8") == whole
    assert keeper.written == [tmp_path / "r.json", tmp_path / "out" / "m_1.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "r.json"]  # journals removed, no temp files
    assert list(keeper.cases()) == report.cases and keeper.report(report.summary) == report


def test_a_journal_line_is_one_json_object_that_reads_back_as_its_case() -> None:
    for result in sample().cases:
        line = journal_line(result)
        assert line.endswith(b"\n") and line.count(b"\n") == 1
        assert CaseResult.model_validate_json(line) == result


def test_whatever_a_kill_leaves_reads_back_with_every_finished_case_once(tmp_path: Path) -> None:
    report = sample()
    record, journal = tmp_path / "r.json", journal_path(tmp_path / "r.json")
    keeper = keeper_for(report, record)
    keeper.start(summarize(report.cases[:2]))  # pretend two cases were resumed: put them in the base record
    keeper.resume(_found(report.cases[:2]))
    for result in report.cases[2:]:
        keeper.add(result)
    # a killed run: record (no cases) + journal (three cases)
    found = read_unfinished(record)
    assert found.journal_found and [c.name for c in found.results()] == ["c", "d", "e"]
    # a last line cut off mid-write (a memory-mapped journal ends in zero bytes until it is closed): ignored
    data = journal.read_bytes().rstrip(b"\0")
    journal.write_bytes(data[:-7] + bytes(4096))
    assert [c.name for c in read_unfinished(record).results()] == ["c", "d"]
    journal.write_bytes(data[:-7])
    assert [c.name for c in read_unfinished(record).results()] == ["c", "d"]
    # a journal alone: its header has the meta
    record.unlink()
    alone = read_unfinished(record)
    assert alone.meta.agent == report.meta.agent and [c.name for c in alone.results()] == ["c", "d"]
    # a finished record and a journal left beside it (killed between the rename and the removal)
    journal.write_bytes(data)
    record.write_text(report.model_dump_json(indent=2), "utf-8")
    assert sorted(c.name for c in read_unfinished(record).results()) == NAMES
    with pytest.raises(RecordError, match=r"r.json is not finished: its journal .*--resume"):
        read_record(record)
    journal.unlink()
    assert read_record(record) == report


def _found(cases: list[CaseResult]):  # type: ignore[no-untyped-def]
    from evaldsl.report._unfinished import Unfinished

    found = Unfinished(RunMeta(), [])
    found.cases = [(case_key(c.file, c.name), c) for c in cases]
    return found


_JOURNAL: dict[str, object] = {}


def _one_journal(folder: Path) -> tuple[bytes, list[CaseResult]]:
    """One journal of the sample's cases, made once (the runs' latencies differ from run to run)."""
    if not _JOURNAL:
        report = sample()
        keeper = keeper_for(report, folder / "made.json")
        keeper.start(summarize([]))
        for result in report.cases:
            keeper.add(result)
        # as a kill leaves it: a memory-mapped journal ends in zero bytes, which are not lines
        _JOURNAL["bytes"] = journal_path(folder / "made.json").read_bytes().rstrip(b"\0")
        _JOURNAL["cases"] = report.cases
    return _JOURNAL["bytes"], _JOURNAL["cases"]  # type: ignore[return-value]


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_journal_cut_at_any_byte_gives_exactly_its_whole_lines(tmp_path_factory: pytest.TempPathFactory,
                                                                 data: st.DataObject) -> None:
    folder = tmp_path_factory.mktemp("cut")
    whole, cases = _one_journal(folder)
    cut = data.draw(st.integers(0, len(whole)))
    padding = data.draw(st.sampled_from([0, 1, 5000]))
    journal_path(folder / "r.json").write_bytes(whole[:cut] + bytes(padding))
    lines = whole[:cut].count(b"\n")
    if lines == 0:  # not even the header: nothing to resume from
        with pytest.raises(RecordError, match="only its journal"):
            read_unfinished(folder / "r.json")
        return
    found = read_unfinished(folder / "r.json")
    assert list(found.results()) == cases[: lines - 1]


def test_a_file_that_cannot_be_written_at_the_start_raises_naming_it(tmp_path: Path) -> None:
    report = sample()
    (tmp_path / "folder.json").mkdir()
    with pytest.raises(RecordWriteError, match=r"cannot write the record to .*folder.json: "):
        keeper_for(report, tmp_path / "folder.json").start(summarize([]))
    (tmp_path / "file").write_text("x")
    with pytest.raises(RecordWriteError, match=r"cannot write the record to .*file"):
        keeper_for(report, out_dir=tmp_path / "file").start(summarize([]))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "folder.json"]  # no temp files left


def test_a_file_that_fails_later_is_reported_once_and_the_others_still_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from evaldsl.report import _keeper

    report = sample()
    errors: list[RecordWriteError] = []
    good, bad = tmp_path / "good.json", tmp_path / "bad" / "r.json"
    keeper = keeper_for(report, bad, good, on_error=errors.append)
    keeper.start(summarize([]))
    real, real_whole = _keeper.write_streamed, _keeper.JournalRun.write

    def full_disk(folder: Path, *args: object) -> object:
        if folder.name == "bad":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(folder, *args)  # type: ignore[arg-type]

    def full_disk_whole(run: object, folder: Path, *args: object) -> object:  # the record made in one piece
        if folder.name == "bad":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_whole(run, folder, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(_keeper, "write_streamed", full_disk)
    monkeypatch.setattr(_keeper.JournalRun, "write", full_disk_whole)
    for result in report.cases:
        keeper.add(result)
    finished(keeper, report, report.cases)
    assert [e.path for e in errors] == [bad] and list(keeper.failed) == [bad]
    assert "No space left on device" in str(errors[0])
    assert keeper.written == [good] and read_record(good) == report
    assert journal_path(bad).exists()  # the failed record keeps its journal: it can still be resumed
    assert sorted(c.name for c in read_unfinished(bad).results()) == NAMES
    monkeypatch.setattr(_keeper, "write_streamed", real)  # the disk has room again: the next write clears it
    monkeypatch.setattr(_keeper.JournalRun, "write", real_whole)
    keeper.finish(summarize(report.cases))
    assert keeper.failed == {} and read_record(bad) == report and len(errors) == 1


def test_an_optional_file_is_kept_when_it_can_be_and_never_fails_the_run(tmp_path: Path) -> None:
    report = sample()
    (tmp_path / "dir.json").mkdir()
    keeper = keeper_for(report, optional=tmp_path / "dir.json")
    keeper.start(summarize([]))
    for result in report.cases:
        keeper.add(result)
    finished(keeper, report, report.cases)
    assert keeper.failed == {} and keeper.written == [] and not keeper.optional_kept
    assert list(keeper.cases()) == report.cases  # nothing on disk: every case stayed in memory


def test_a_record_is_its_head_indented_then_a_case_a_line_the_same_json_as_the_model() -> None:
    import json

    report = sample()
    text = record_json(report)
    assert json.loads(text) == json.loads(report.model_dump_json())
    lines = text.split("\n")  # (not splitlines: a case's text may hold U+2028 or U+0085, which JSON leaves raw)
    cases = [line for line in lines if line.startswith('    {"suite":')]
    assert len(cases) == len(report.cases) and lines[-2:] == ["  ]", "}"]
    assert [CaseResult.model_validate_json(line.rstrip(",")) for line in cases] == report.cases
    assert lines[:2] == ["{", '  "schema_version": 3,'] and '  "meta": {' in lines  # the head stays indented
    empty = report.model_copy(update={"cases": []})
    assert record_json(empty) == empty.model_dump_json(indent=2)


def test_a_record_a_case_a_line_is_resumed_by_span(tmp_path: Path) -> None:
    report = sample()
    (tmp_path / "r.json").write_text(record_json(report), "utf-8")
    found = read_unfinished(tmp_path / "r.json")
    assert all(isinstance(where, tuple) for _, where in found.cases)  # spans, not cases read whole
    assert list(found.results()) == report.cases


def test_a_record_in_the_earlier_indented_layout_and_its_tabbed_journal_are_resumed_by_span(tmp_path: Path) -> None:
    """Records and journals written before a case was one line (cases indented over many lines; journal
    lines with tabs for line breaks) are still read by byte span, and the record is rewritten a case a line."""
    report = sample()
    record, journal = tmp_path / "r.json", journal_path(tmp_path / "r.json")
    record.write_text(report.model_copy(update={"cases": report.cases[:3]}).model_dump_json(indent=2), "utf-8")
    import json

    header = (json.dumps({"evaldsl_journal": 1, "meta": json.loads(report.meta.model_dump_json())}) + "\n").encode()
    tabbed = [case.model_dump_json(indent=2).replace("\n", "\t").encode() + b"\n" for case in report.cases[3:]]
    journal.write_bytes(header + b"".join(tabbed))
    found = read_unfinished(record)
    assert [c.name for c in found.results()] == NAMES
    assert all(isinstance(where, tuple) for _, where in found.cases)  # spans, not cases read whole
    keeper = keeper_for(report, record)
    keeper.resume(found)
    keeper.start(report.summary)
    finished(keeper, report, report.cases)
    assert json.loads(record.read_text("utf-8")) == json.loads(report.model_dump_json())
    assert read_record(record) == report and not journal.exists()


def test_a_record_in_another_layout_is_read_whole_and_rewritten_in_evaldsl_s(tmp_path: Path) -> None:
    report = sample()
    record = tmp_path / "r.json"
    record.write_text(report.model_dump_json(), "utf-8")  # compact: not the layout the spans are found in
    found = read_unfinished(record)
    assert list(found.results()) == report.cases and not found.journal_found
    keeper = keeper_for(report, record)
    keeper.resume(found)
    keeper.start(report.summary)
    finished(keeper, report, report.cases)
    assert record.read_text("utf-8") == record_json(report)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


@pytest.mark.parametrize("at", [0, 3])
def test_a_file_system_that_cannot_reserve_space_gets_plain_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   at: int) -> None:
    """`posix_fallocate` refused (EOPNOTSUPP: some network and FUSE file systems) at the first line or later:
    the journal goes on with plain writes, and the record is the same, byte for byte."""
    import errno
    import os

    from evaldsl.report import _journal

    real, calls = os.posix_fallocate, []

    def refusing(fd: int, offset: int, length: int) -> None:
        calls.append(length)
        if len(calls) > at:
            raise OSError(errno.EOPNOTSUPP, "Operation not supported")
        real(fd, offset, length)

    monkeypatch.setattr(os, "posix_fallocate", refusing)
    monkeypatch.setattr(_journal.Journal, "GROW", 256)  # a few lines a map, so a later growth is refused too
    report = sample()
    keeper = keeper_for(report, tmp_path / "r.json")
    keeper.start(summarize([]))
    for result in report.cases:
        keeper.add(result)
    journal = journal_path(tmp_path / "r.json").read_bytes()
    assert b"\0" not in journal and journal.count(b"\n") == 1 + len(NAMES)  # no reserved tail left behind
    assert [c.name for c in read_unfinished(tmp_path / "r.json").results()] == NAMES
    finished(keeper, report, report.cases)
    assert (tmp_path / "r.json").read_text("utf-8") == record_json(report)
    assert len(calls) == at + 1  # refused once, never asked again


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a.evl", "dir/b.evl", "c\udcff.evl"]),
                          st.text(max_size=6) | st.sampled_from(["", "\ud800", "é", "x"])), max_size=300))
def test_the_keepers_key_index_is_a_dict_of_positions(keys: list[tuple[str, str]]) -> None:
    """The keeper's compact index of case keys (a buffer of names, an open-addressing table) places,
    finds and gives back every key as a dict and a list would, past its table's growth, lone
    surrogates and empty names included."""
    from evaldsl.report._case_keys import CaseKeys as _Keys

    index, model = _Keys(), {}  # type: ignore[var-annotated]
    for key in keys:
        assert index.place(key) == model.setdefault(key, len(model))
    assert len(index) == len(model)
    for key, position in model.items():
        assert index.find(key) == position and index.key(position) == key
    assert index.find(("a.evl", "never placed")) == -1 and index.find(("other.evl", "x")) == -1


# ---- copying a finished record (.evaldsl/last.json) --------------------------------------------


def _copied(tmp_path: Path, data: bytes) -> bytes:
    from evaldsl.report._json import copy_bytes, write_temp

    source = tmp_path / "record.json"
    source.write_bytes(data)
    with open(source, "rb") as src:
        tmp = write_temp(tmp_path, "last.json", lambda fh: copy_bytes(src, fh))
    return Path(tmp).read_bytes()


def test_a_record_is_copied_byte_for_byte_by_the_kernel(tmp_path: Path) -> None:
    data = bytes(range(256)) * 9000  # over 2 MB: more than one MB block
    assert _copied(tmp_path, data) == data and _copied(tmp_path, b"") == b""


def test_where_the_kernel_cannot_copy_the_bytes_go_through_the_process(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import errno
    import os

    def cannot(*args: Any) -> int:
        raise OSError(errno.EINVAL, "not on this file system")

    monkeypatch.setattr(os, "sendfile", cannot)
    data = b"x" * 3_000_000 + b"end"
    assert _copied(tmp_path, data) == data


def test_a_real_error_while_copying_is_not_hidden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno
    import os

    def full(*args: Any) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "sendfile", full)
    with pytest.raises(OSError, match="No space"):
        _copied(tmp_path, b"some bytes")
    assert [p.name for p in tmp_path.iterdir()] == ["record.json"]  # the temporary copy is removed

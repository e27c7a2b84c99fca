"""A run record as JUnit XML, the report format every CI system reads.

The shape is the Ant/Jenkins one (``junit-10.xsd``): ``<testsuites>`` with
one ``<testsuite>`` per suite (its name, as run, in record order), one
``<testcase>`` per case. Choices, since CI systems only know tests:

- a case is ``name="<suite>.<case>"`` with the file as ``classname``;
  ``time`` is the sum of its runs' latencies (what the case cost; the mean
  is a property);
- failed: one ``<failure>`` whose message counts the failed expectations and
  whose text lists each (label, ``file:line``, in how many runs, its detail),
  then any run errors and the final answer, cut to `MAX_TEXT` characters;
- error (every run errored): ``<error type=... message=...>`` with the
  traceback; skipped: ``<skipped message=reason>``; xfailed: ``<skipped>``
  with ``xfail: reason``, as pytest writes it; xpassed: a passing case (it
  does not fail the run either), its status in a property;
- each case's ``<properties>``: status, repeat, runs, pass_rate,
  required_pass_rate, score, mean latency, line, tags; each suite's:
  the record's agent, backend, evaldsl version, start time and git commit.
  Some strict readers of ``junit-10.xsd`` do not know properties inside a
  ``<testcase>``; `write_junit` can leave them out (``case_properties=False``).

Every string is escaped by ElementTree; characters XML 1.0 cannot hold
(control characters other than tab and newlines, lone surrogates, U+FFFE and
U+FFFF) are replaced by a visible ``\\xNN`` / ``\\uNNNN`` escape, so the file
always parses and nothing is silently lost.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from datetime import timezone

from ..run._record import CaseResult, EvalReport
from ..run._stats import summarize
from ._json import write_atomic
from ._terminal import failed_expectations, run_errors

MAX_TEXT = 20_000
"""The longest failure or error text kept per case, in characters."""
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def clean(text: str) -> str:
    """``text`` with every character XML 1.0 cannot hold replaced by a visible escape."""
    return _NOT_XML.sub(_escape_char, text)


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def junit_xml(report: EvalReport, *, case_properties: bool = True) -> str:
    """The record as a JUnit XML document (a string, with the XML declaration)."""
    root = ET.Element("testsuites", _counts(report.cases, name="evaldsl"))
    for suite, cases in _by_suite(report.cases).items():
        root.append(_suite(report, suite, cases, case_properties))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(report: EvalReport, path: str | os.PathLike[str], *, case_properties: bool = True) -> None:
    """Write `junit_xml` of ``report`` to ``path`` atomically."""
    write_atomic(path, junit_xml(report, case_properties=case_properties))


def _by_suite(cases: Iterable[CaseResult]) -> dict[str, list[CaseResult]]:
    groups: dict[str, list[CaseResult]] = {}
    for case in cases:
        groups.setdefault(case.suite, []).append(case)
    return groups


def _counts(cases: list[CaseResult], *, name: str) -> dict[str, str]:
    s = summarize(cases)
    return {
        "name": clean(name), "tests": str(s.total), "failures": str(s.failed), "errors": str(s.errors),
        "skipped": str(s.skipped + s.xfailed), "time": _time(sum(_case_time(c) for c in cases)),
    }


def _suite(report: EvalReport, name: str, cases: list[CaseResult], case_properties: bool) -> ET.Element:
    attrs = _counts(cases, name=name)
    started = report.meta.started_at
    if started is not None:
        attrs["timestamp"] = started.astimezone(timezone.utc).replace(tzinfo=None).isoformat(timespec="seconds")
    element = ET.Element("testsuite", attrs)
    meta = report.meta
    _properties(element, [
        ("agent", meta.agent), ("backend", meta.backend), ("evaldsl_version", meta.evaldsl_version),
        ("started_at", started.isoformat() if started else None), ("git_commit", meta.git_commit),
        ("complete", str(meta.complete).lower()),
    ])
    for case in cases:
        element.append(_testcase(case, case_properties))
    return element


def _testcase(case: CaseResult, with_properties: bool) -> ET.Element:
    element = ET.Element("testcase", {
        "name": clean(f"{case.suite}.{case.name}"), "classname": clean(case.file), "time": _time(_case_time(case)),
    })
    if with_properties:
        _properties(element, [
            ("status", case.status), ("repeat", str(case.repeat)), ("runs", str(len(case.runs))),
            ("pass_rate", _num(case.pass_rate)), ("required_pass_rate", _num(case.required_pass_rate)),
            ("score", _num(case.score)), ("latency_mean_s", _num(case.latency_s)), ("line", str(case.line)),
            ("tags", " ".join(case.tags) or None),
        ])
    if case.status == "skipped":
        ET.SubElement(element, "skipped", {"message": clean(case.skip or "skipped")})
    elif case.status == "xfailed":
        ET.SubElement(element, "skipped", {"message": clean(f"xfail: {case.xfail}" if case.xfail else "xfail")})
    elif case.status == "error":
        _error(element, case)
    elif case.status == "failed":
        failed = failed_expectations(case)
        message = f"{len(failed)} expectation(s) failed" if failed else "runs errored"
        if len(case.runs) > 1:
            passed = sum(r.passed for r in case.runs)
            message += f"; {passed}/{len(case.runs)} runs passed, needed {case.required_pass_rate:.0%}"
        child = ET.SubElement(element, "failure", {"message": clean(message), "type": "failed"})
        child.text = clean(_cut(_failure_text(case)))
    return element


def _error(element: ET.Element, case: CaseResult) -> None:
    first = next((r.error for r in case.runs if r.error is not None), None)
    etype, message = (first.type, first.message) if first else ("Error", "the case errored")
    child = ET.SubElement(element, "error", {"type": clean(etype), "message": clean(_cut(message, 2_000))})
    lines = []
    for (kind, text), count in run_errors(case).items():
        times = f" [{count} of {len(case.runs)} runs]" if len(case.runs) > 1 else ""
        lines.append(f"{kind}: {text}{times}")
    if first is not None and first.traceback:
        lines += ["", first.traceback]
    child.text = clean(_cut("\n".join(lines)))


def _failure_text(case: CaseResult) -> str:
    n = len(case.runs)
    lines = []
    for label, where, detail, count in failed_expectations(case):
        times = f" [failed in {count} of {n} runs]" if n > 1 else ""
        lines.append(f"x expect {label}  ({where}){times}")
        if detail:
            lines.append("    " + detail.replace("\n", "\n    "))
    for (kind, text), count in run_errors(case).items():
        lines.append(f"error: {kind}: {text} [{count} of {n} runs]")
    answer = next((r.artifacts.final_text for r in reversed(case.runs)
                   if r.artifacts is not None and r.artifacts.final_text is not None), None)
    if answer is not None:
        lines.append(f"final answer: {answer}")
    return "\n".join(lines)


def _properties(parent: ET.Element, pairs: list[tuple[str, str | None]]) -> None:
    props = ET.SubElement(parent, "properties")
    for name, value in pairs:
        if value is not None:
            ET.SubElement(props, "property", {"name": name, "value": clean(value)})


def _case_time(case: CaseResult) -> float:
    return sum(r.latency_s for r in case.runs)


def _time(seconds: float) -> str:
    return f"{max(0.0, seconds):.3f}"


def _num(value: float | None) -> str | None:
    return None if value is None else f"{value:.6g}"


def _cut(text: str, limit: int = MAX_TEXT) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n... ({len(text) - limit} more characters cut)"

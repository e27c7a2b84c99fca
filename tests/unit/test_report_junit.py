"""JUnit XML: one testcase per case, valid against the JUnit XSD, every string escaped."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema
from _records import case, record, run
from hypothesis import given, settings
from hypothesis import strategies as st

from evaldsl.report._junit import clean, junit_xml, write_junit

XSD = xmlschema.XMLSchema(Path(__file__).parent.parent / "data" / "junit.xsd")


def sample():  # type: ignore[no-untyped-def]
    return record(
        case("adds", run(latency=0.25)),
        case("wrong", run(failed=[("final number is 4", "expected the last number to be 4, got 5")], text="5"),
             line=7),
        case("boom", run(error=("ConnectionError", "refused"), latency=1.5)),
        case("later", skip="not yet"),
        case("known", run(False), xfail="bug 12"),
        case("flaky", run(True, index=0), run(False, index=1), run(True, index=2), required=0.9),
        case("greets", run(), suite="Chat", file="suites/chat.evl", tags=["smoke"]),
    )


def parsed(report=None, **kw):  # type: ignore[no-untyped-def]
    text = junit_xml(report or sample(), **kw)
    XSD.validate(text)
    return ET.fromstring(text)


def cases(root: ET.Element) -> dict[str, ET.Element]:
    return {tc.get("name"): tc for tc in root.iter("testcase")}  # type: ignore[misc]


def props(element: ET.Element) -> dict[str, str]:
    return {p.get("name"): p.get("value") for p in element.find("properties")}  # type: ignore[misc, union-attr]


def test_document_is_valid_and_counts_are_right() -> None:
    root = parsed()
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == ("7", "2", "1", "2")
    math, chat = root.findall("testsuite")
    assert (math.get("name"), math.get("tests"), math.get("failures"), math.get("errors")) == ("Math", "6", "2", "1")
    assert math.get("skipped") == "2" and math.get("timestamp") == "2026-03-01T12:00:00"
    assert (chat.get("name"), chat.get("tests"), chat.get("failures")) == ("Chat", "1", "0")
    assert props(math)["agent"] == "agent-a"


def test_each_status_becomes_its_element() -> None:
    tc = cases(parsed())
    assert tc["Math.adds"].get("classname") == "suites/m.evl" and tc["Math.adds"].get("time") == "0.250"
    assert list(tc["Math.adds"]) == [tc["Math.adds"].find("properties")]  # passed: nothing but properties
    failure = tc["Math.wrong"].find("failure")
    assert failure is not None and failure.get("message") == "1 expectation(s) failed"
    assert "x expect final number is 4  (suites/m.evl:4)" in (failure.text or "")
    assert "expected the last number to be 4, got 5" in (failure.text or "")
    assert "final answer: 5" in (failure.text or "")
    error = tc["Math.boom"].find("error")
    assert error is not None and (error.get("type"), error.get("message")) == ("ConnectionError", "refused")
    assert tc["Math.boom"].get("time") == "1.500"
    assert tc["Math.later"].find("skipped").get("message") == "not yet"  # type: ignore[union-attr]
    assert tc["Math.known"].find("skipped").get("message") == "xfail: bug 12"  # type: ignore[union-attr]
    assert tc["Math.known"].find("failure") is None


def test_repeats_and_pass_rate_are_properties() -> None:
    flaky = cases(parsed())["Math.flaky"]
    p = props(flaky)
    assert (p["repeat"], p["runs"], p["pass_rate"], p["required_pass_rate"]) == ("3", "3", "0.666667", "0.9")
    assert p["status"] == "failed"
    failure = flaky.find("failure")
    assert failure is not None and "2/3 runs passed, needed 90%" in (failure.get("message") or "")
    assert "[failed in 1 of 3 runs]" in (failure.text or "")
    assert props(cases(parsed())["Chat.greets"])["tags"] == "smoke"


def test_case_properties_can_be_left_out_for_strict_readers() -> None:
    root = parsed(case_properties=False)
    assert all(tc.find("properties") is None for tc in root.iter("testcase"))


HOSTILE = 'a <b> & "c" \'d\' ]]> \x00\x1b\x7f \ud800 \ufffe tab\tnl\n end'


def test_hostile_strings_are_escaped_and_stripped_visibly() -> None:
    report = record(case(HOSTILE, run(failed=[(HOSTILE, HOSTILE)], text=HOSTILE), suite=HOSTILE, file=HOSTILE))
    text = junit_xml(report)
    XSD.validate(text)
    [tc] = ET.fromstring(text).iter("testcase")
    shown = clean(HOSTILE)
    assert tc.get("name") == f"{shown}.{shown}" and tc.get("classname") == shown
    assert "\\x00\\x1b" in shown and "\\ud800" in shown and "\\ufffe" in shown
    assert "tab\tnl\n end" in shown and "\x7f" in shown  # what XML can hold is kept as is
    assert f"final answer: {shown}" in (tc.find("failure").text or "")  # type: ignore[union-attr]


@settings(max_examples=50, deadline=None)
@given(st.text(st.one_of(st.characters(), st.characters(categories=["Cs", "Cc"]))))
def test_any_text_gives_a_well_formed_document(text: str) -> None:
    report = record(case(text or "x", run(error=("E" + text, text)), suite=text or "s"))
    XSD.validate(junit_xml(report))


def test_long_details_are_cut_and_say_so() -> None:
    report = record(case("big", run(failed=[("x", "y" * 50_000)])))
    failure = cases(parsed(report))["Math.big"].find("failure")
    assert failure is not None and len(failure.text or "") < 21_000
    assert "more characters cut" in (failure.text or "")


def test_an_empty_record_is_a_valid_document(tmp_path: Path) -> None:
    target = tmp_path / "out" / "junit.xml"
    write_junit(record(), target)
    XSD.validate(str(target))
    assert ET.parse(target).getroot().get("tests") == "0"


def test_the_schema_rejects_what_ci_would_reject() -> None:
    # the XSD is a real check: a testcase without a name, or a count that is not a number, fails it
    with pytest.raises(xmlschema.XMLSchemaValidationError):
        XSD.validate('<testsuites><testsuite name="s" tests="1"><testcase/></testsuite></testsuites>')
    with pytest.raises(xmlschema.XMLSchemaValidationError):
        XSD.validate('<testsuites><testsuite name="s" tests="many"/></testsuites>')

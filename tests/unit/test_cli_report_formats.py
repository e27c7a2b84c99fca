"""`evaldsl report --format markdown|junit`, in process: stdout or -o, one record or two (with the comparison)."""

from __future__ import annotations

from pathlib import Path

import pytest
import xmlschema
from _records import outcomes

from evaldsl.cli import main
from evaldsl.report._compare import compare_records
from evaldsl.report._markdown import markdown_comparison

XSD = Path(__file__).parent.parent / "data" / "junit.xsd"


@pytest.fixture
def records(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(outcomes("pppfffffffffff", agent="old").model_dump_json())
    b.write_text(outcomes("fppppppppppfff", agent="new").model_dump_json())
    return a, b


def test_markdown_of_one_record_to_stdout(records, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["report", "--format", "markdown", str(records[0])]) == 0
    out = capsys.readouterr().out
    assert out.startswith("### evaldsl: 11 failed, 3 passed (old)") and "Comparison" not in out


def test_markdown_of_two_records_starts_with_their_comparison(records, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "summary.md"
    assert main(["report", "--format", "markdown", str(records[0]), str(records[1]), "-o", str(target)]) == 0
    md = target.read_text(encoding="utf-8")
    assert md.startswith(f"### Comparison: {records[1]} against {records[0]}".replace("_", "\\_"))
    assert "**B is better than A** (exact McNemar p = 0.0391; 8 fixed, 1 regressed, over 14 paired cases)" in md
    assert "| accuracy | 21.4% | 71.4% | +50.0 pts |" in md
    assert "#### Regressed (1)\n\n- Math › c000 (`suites/m.evl:2`)" in md
    assert md.count("### evaldsl:") == 2
    assert "Markdown summary written to" in capsys.readouterr().err


def test_junit_of_one_record(records, tmp_path) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "junit.xml"
    assert main(["report", "--format", "junit", str(records[0]), "-o", str(target)]) == 0
    xmlschema.validate(str(target), str(XSD))


def test_junit_takes_one_record(records, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["report", "--format", "junit", *map(str, records)]) == 4
    assert "--format junit takes one record, not 2" in capsys.readouterr().err


def test_markdown_comparison_lists_reasons_and_escapes_names() -> None:
    a, b = outcomes("ps"), outcomes("pp")
    md = markdown_comparison(compare_records(a, b), a_name="base|line", b_name="pr_1")
    assert md.startswith("### Comparison: pr\\_1 against base\\|line")
    assert "#### Not compared (1)\n\n- Math › c001 (`suites/m.evl:2`): skipped in A" in md

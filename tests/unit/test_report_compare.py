"""The comparison table of several models: one row per model, read from the records."""

from __future__ import annotations

from types import SimpleNamespace

from evaldsl import EvalReport, Summary
from evaldsl.report._compare import format_comparison


def report(**summary: object) -> EvalReport:
    return EvalReport(summary=Summary(**summary))  # type: ignore[arg-type]


def test_rows_in_order_with_their_figures() -> None:
    text = format_comparison([
        ("openai:a", report(total=4, passed=2, xpassed=1, failed=1, accuracy=0.75, average_score=0.8,
                            latency_p50_s=0.5, latency_p95_s=1.5, tokens_total=12345),
         SimpleNamespace(hits=3, misses=5)),
        ("anthropic:b", report(total=4, errors=4, accuracy=0.0, average_score=0.0), None),
        ("openai:c", None, None),
    ])
    lines = text.strip().splitlines()
    assert lines[0] == "=== models compared ==="
    assert lines[2].split() == ["openai:a", "75.0%", "0.80", "3", "1", "0", "500ms", "1.50s", "12,345", "3/8"]
    assert lines[3].split() == ["anthropic:b", "0.0%", "0.00", "0", "0", "4", "-", "-", "-", "off"]
    assert lines[4].split() == ["openai:c", *["-"] * 9]
    assert len({len(line) for line in lines[1:3]}) == 1  # aligned columns

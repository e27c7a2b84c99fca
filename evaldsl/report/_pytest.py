"""How a failed `.evl` case reads in pytest's report (`pytest_plugin.EvlItem.repr_failure`): its first
problem as the headline pytest's short summary shows, then each distinct error and each failed expectation
with its detail, grouped as `evaldsl run` groups them."""

from __future__ import annotations

from typing import Any

from ._terminal import failed_expectations, run_errors


def render_failure(result: Any) -> str:
    """Each distinct error, and each failed expectation with its detail (as `evaldsl run` groups them).

    The first line (what pytest's short summary shows) names the first problem.
    """
    lines = [_headline(result), f"case {result.name!r} at {result.file}:{result.line}: {result.status}"]
    runs = len(result.runs)
    if runs > 1:
        lines[1] += (f", pass rate {result.pass_rate:.0%} of {runs} runs,"
                     f" needed {result.required_pass_rate:.0%}")
    for (kind, message), count in run_errors(result).items():
        lines.append(f"  error: {kind}: {message}" + (f" [{count} of {runs} runs]" if runs > 1 else ""))
    for label, where, detail, count in failed_expectations(result):
        lines.append(f"  {where}: expect {label}" + (f" [failed in {count} of {runs} runs]" if runs > 1 else ""))
        if detail:
            lines.append(f"      {detail}")
    return "\n".join(lines)


def _headline(result: Any) -> str:
    for run in result.runs:
        if run.error is not None:
            return f"error: {run.error.type}: {run.error.message}"
        for exp in run.expectations:
            if not exp.passed:
                return f"expect {exp.label}: {exp.detail or 'did not hold'}"
    return f"{result.status}"

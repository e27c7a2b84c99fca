"""The mutation fuzzer in every run: a few hundred mangled suites, nothing escapes.

Inputs come from tests/properties/_mutate.py (shipped and golden suites with
byte flips, token edits, line splices and inserted brackets, quotes and
unicode), with fixed seeds so a failure is reproducible by its index. Each
must go through the reader, `parse`, `compile` and `format` raising nothing
but `EvlError`, and `format` must keep the meaning of whatever parses.
A per-input alarm of 10 s is only a hang detector (no timing is asserted);
`bench/fuzz.py` runs the same check over 100,000 inputs.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from _mutate import check_input, mutants, seeds

HANG_LIMIT_S = 10


@contextmanager
def hang_guard(limit: int) -> Iterator[None]:
    """Fail an input that runs past `limit` seconds (a hang, not a slow machine)."""
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def hung(signum: int, frame: object) -> None:
        raise TimeoutError(f"an input ran past {limit} s")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(limit)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_the_seeds_are_the_shipped_and_golden_suites() -> None:
    names = [name for name, _ in seeds()]
    assert any(n.startswith("suites/") for n in names) and any(n.startswith("tests/golden/") for n in names)
    assert all(check_input(data) is None for _, data in seeds())


def test_the_seeds_hold_the_precise_matching_forms() -> None:
    text = b"\n".join(data for _, data in seeds())
    for form in (b"only <", b"absent or", b"loosely", b"in any order", b"valid arguments", b"\ntools ",
                 b"with <symbol: AAPL> or <ticker: AAPL>"):
        assert form in text, form


def test_mutants_are_reproducible_and_varied() -> None:
    first, again = list(mutants(7, 50)), list(mutants(7, 50))
    assert first == again
    assert len(set(first)) > 40


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_only_evl_errors_escape_and_format_keeps_meaning(seed: int) -> None:
    escapes = []
    for i, data in enumerate(mutants(seed, 100)):
        with hang_guard(HANG_LIMIT_S):
            problem = check_input(data)
        if problem is not None:
            escapes.append(f"seed {seed} input {i}: {data[:300]!r}\n{problem}")
    assert not escapes, "\n\n".join(escapes[:3])


def test_the_check_catches_an_escape(monkeypatch: pytest.MonkeyPatch) -> None:
    import _mutate

    def broken(text: str, filename: str = "<string>") -> object:
        raise KeyError("boom")

    monkeypatch.setattr(_mutate, "parse", broken)
    assert "KeyError" in (check_input(b'case "c"\n') or "")


def test_the_check_catches_a_format_that_changes_meaning(monkeypatch: pytest.MonkeyPatch) -> None:
    import _mutate

    monkeypatch.setattr(_mutate, "format", lambda text, filename="": 'case "other"\n')
    assert check_input(b'case "c"\n  prompt "p"\n') == "format changed the AST"

"""Golden errors of files compiled under a root (`check --root`): `errors/rooted/x.evl` -> `x.err`.

The root is the `rooted` folder itself, so a path that leaves it (a `world`
file beside the other goldens, say) is E230 at its line. Kept apart from
`test_parse_golden.py`, which compiles its files with no root.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evaldsl import EvlError, compile

HERE = Path(__file__).parent
ROOTED = HERE / "errors" / "rooted"
CASES = sorted(ROOTED.glob("*.evl"))


@pytest.mark.parametrize("source", CASES, ids=lambda p: p.name)
def test_rooted_error_golden(source: Path, update_goldens: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(HERE)
    with pytest.raises(EvlError) as info:
        compile(source.read_text(encoding="utf-8"), f"errors/rooted/{source.name}", root=ROOTED)
    actual = info.value.render() + "\n\n--- short ---\n" + info.value.render(style="short") + "\n"
    actual = actual.replace(str(HERE.resolve()), "<golden>")  # E230 names resolved paths: no machine's own
    path = source.with_suffix(".err")
    if update_goldens or not path.exists():
        path.write_text(actual, encoding="utf-8")
        if not update_goldens:
            pytest.fail(f"{path.name} did not exist; written now, review it and run again")
        return
    assert actual == path.read_text(encoding="utf-8")


def test_there_are_rooted_goldens() -> None:
    assert CASES

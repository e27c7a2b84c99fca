"""`evaldsl check` and worlds: no Python is run unless `--import-worlds` asks for it (LANGUAGE.md 14)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaldsl.cli import main

WORLD = '''\
from pathlib import Path

Path(__file__).with_name("imported.marker").write_text("imported")


class Shop:
    def refund_order(self, id: int) -> str:
        """Refund one order."""
        return "refunded"
'''

SUITE = '''\
world "shop_world.py:Shop"

case "refund"
  prompt "refund 42"
  given refund_ordr fails "down"
  expect called refund_order
'''


def _suite(tmp_path: Path) -> Path:
    (tmp_path / "shop_world.py").write_text(WORLD, encoding="utf-8")
    path = tmp_path / "shop.evl"
    path.write_text(SUITE, encoding="utf-8")
    return path


def test_check_without_the_flag_runs_no_python_and_says_what_it_left_unchecked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _suite(tmp_path)
    assert main(["check", str(path)]) == 0
    assert not (tmp_path / "imported.marker").exists()
    err = capsys.readouterr().err
    assert "the world's file was not imported, so tool names and argument keys were not checked" in err
    assert "--import-worlds" in err


def test_check_with_the_flag_knows_the_worlds_tools(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _suite(tmp_path)
    assert main(["check", "--import-worlds", str(path)]) == 1
    assert (tmp_path / "imported.marker").exists()
    out = capsys.readouterr()
    assert "error[E242]: `given` answers no declared tool: `refund_ordr`" in out.out
    assert "did you mean `refund_order`?" in out.out
    assert "not imported" not in out.err


def test_check_without_the_flag_still_applies_the_root_rule(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    inner = tmp_path / "suites"
    inner.mkdir()
    (tmp_path / "shop_world.py").write_text(WORLD, encoding="utf-8")
    (inner / "s.evl").write_text(SUITE.replace("shop_world.py", "../shop_world.py"), encoding="utf-8")
    assert main(["check", "--root", str(inner), str(inner / "s.evl")]) == 1
    assert "error[E230]: world file" in capsys.readouterr().out
    assert not (tmp_path / "imported.marker").exists()


def test_the_language_server_never_imports_a_world(tmp_path: Path) -> None:
    pytest.importorskip("pygls")
    from evaldsl.lsp._server import check_diagnostics

    path = _suite(tmp_path)
    diagnostics = check_diagnostics(path.read_text(encoding="utf-8"), str(path))
    assert diagnostics == []  # the tool names are unknown, so the typo is not flagged ...
    assert not (tmp_path / "imported.marker").exists()  # ... and nothing ran
    outside = check_diagnostics(path.read_text(encoding="utf-8"), str(path), root=tmp_path / "elsewhere")
    assert [d.code for d in outside] == ["E230"]


CONVERSATION = '''\
world "shop_world.py:Shop"

case "refund"
  setup <orders: [42]>
  expect called refund_order once
  user "Refund order 42"
    expect world <orders: []>
  user "Thanks"
  simulated user """
    You are Mia.
    You say thanks.
    """
  given refund_order returns "busy" then fails "down"
'''


def test_compile_shows_the_world_turns_simulated_user_and_given_lines(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "shop_world.py").write_text(WORLD, encoding="utf-8")
    path = tmp_path / "conv.evl"
    path.write_text(CONVERSATION, encoding="utf-8")
    assert main(["compile", str(path)]) == 0
    out = capsys.readouterr().out
    assert '  world "shop_world.py:Shop": refund_order\n' in out
    assert ('    expect called refund_order once    [line 5]\n'
            '    user "Refund order 42"    [line 6]\n'
            '      expect world <orders: []>    [line 7]\n'
            '    user "Thanks"    [line 8]\n'
            '    simulated user "You are Mia." ... (user turns 10)\n'
            '    given refund_order ... returns "busy" then fails "down"    [line 13]\n') in out


def test_compile_json_holds_the_v2_parts_and_leaves_v1_cases_as_they_were(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    (tmp_path / "shop_world.py").write_text(WORLD, encoding="utf-8")
    path = tmp_path / "conv.evl"
    path.write_text(CONVERSATION + 'case "plain"\n  prompt "p"\n  expect no error\n', encoding="utf-8")
    assert main(["compile", "--json", str(path)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["world"] == {"spec": "shop_world.py:Shop", "file": str((tmp_path / "shop_world.py").resolve()),
                             "class": "Shop", "imported": True}
    conv, plain = data["cases"]
    assert conv["turns"] == [
        {"message": "Refund order 42", "line": 6, "expectations": [{"label": "world <orders: []>", "line": 7}]},
        {"message": "Thanks", "line": 8, "expectations": []}]
    assert conv["simulated_user"] == {"instructions": "You are Mia.\nYou say thanks.", "user_turns": 10}
    assert conv["given"] == [{"tool": "refund_order", "line": 13,
                              "answers": [{"ok": True, "text": "busy"}, {"ok": False, "text": "down"}]}]
    assert not {"turns", "simulated_user", "given"} & set(plain)

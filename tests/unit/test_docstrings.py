"""`_docstrings.field_docstrings`: the docstrings under fields, read from source as pydantic would."""

from __future__ import annotations

from pathlib import Path

from evaldsl._docstrings import field_docstrings

SOURCE = '''
class Base:
    a: int
    """The a.

        Indented on."""
    b: str = "x"
    c: int
    """Documented, after an undocumented field."""


class Child(Base):
    b: str = "y"
    """The child's b."""
    d = 1
    """Not a field: no annotation."""
'''


def test_fields_bases_and_cleaning(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(SOURCE, encoding="utf-8")
    found = field_docstrings(str(path))
    assert found["Base"] == {"a": "The a.\n\nIndented on.", "c": "Documented, after an undocumented field."}
    assert found["Child"] == {"a": "The a.\n\nIndented on.", "b": "The child's b.",
                              "c": "Documented, after an undocumented field."}


def test_the_same_as_pydantic_reads(tmp_path: Path, monkeypatch) -> None:
    source = ("from pydantic import BaseModel, ConfigDict\n"
              + SOURCE.replace("class Base:", "class Base(BaseModel):\n    model_config = ConfigDict("
                                             "use_attribute_docstrings=True)")
              .replace('    d = 1\n    """Not a field: no annotation."""\n', ""))
    path = tmp_path / "docstrings_probe.py"
    path.write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    module = importlib.import_module("docstrings_probe")
    ours = field_docstrings(str(path))
    for name in ("Base", "Child"):
        cls = getattr(module, name)
        theirs = {f: info.description for f, info in cls.model_fields.items() if info.description}
        assert ours[name] == theirs

"""Importers: suites written for earlier eval designs (JSON single- and multi-turn, eval-core RON) as `.evl`."""

from ._importer import ImportResult, import_file, import_text

__all__ = ["ImportResult", "import_file", "import_text"]

"""`evaldsl lsp`: start the language server on stdin/stdout (for editors)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from . import ROOT_HELP


def add_lsp_command(sub: Any) -> None:
    p = sub.add_parser("lsp", help="start the .evl language server on stdio (for editors)",
                       description="The .evl language server over stdio: diagnostics, formatting, completion, "
                                   "hover, go to definition, outline. Needs pygls: pip install 'evaldsl[lsp]'.")
    p.add_argument("--root", metavar="DIR", help=ROOT_HELP)
    p.set_defaults(func=cmd_lsp)


def cmd_lsp(args: argparse.Namespace) -> int:
    try:
        from ..lsp._server import main
    except ImportError as exc:
        print(f"evaldsl: the language server needs pygls ({exc.name} is missing): pip install 'evaldsl[lsp]'",
              file=sys.stderr)
        return 4
    main(args.root)
    return 0

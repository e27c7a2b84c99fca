"""The VS Code extension folder (editors/vscode/): its manifest, and that activating it starts `evaldsl lsp`.

node runs `editors/vscode/test/activate.js`, which loads `extension.js` with
stand-ins for the two modules that exist only inside VS Code (`vscode`, and
`vscode-languageclient/node`, whose client needs it); the stand-in client
spawns the server options the extension gave it and sends `initialize`.
The command is the manifest's default setting, `["evaldsl", "lsp"]`, found
on PATH as an editor would find it (here a shim that runs this checkout).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXTENSION = ROOT / "editors" / "vscode"
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(NODE is None, reason="needs node (apt-get install nodejs)")


def manifest() -> dict:  # type: ignore[type-arg]
    return json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))


def test_activating_the_extension_starts_evaldsl_lsp_over_stdio(tmp_path: Path) -> None:
    default = manifest()["contributes"]["configuration"]["properties"]["evaldsl.command"]["default"]
    assert default == ["evaldsl", "lsp"]
    shim = tmp_path / "bin" / "evaldsl"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m evaldsl "$@"\n')
    shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{shim.parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([NODE, str(EXTENSION / "test" / "activate.js"), json.dumps(default)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    server = out["made"]["serverOptions"]
    assert (server["command"], server["args"], server["transport"]) == ("evaldsl", ["lsp"], "stdio")
    language = manifest()["contributes"]["languages"][0]["id"]
    assert out["made"]["clientOptions"]["documentSelector"] == [{"scheme": "file", "language": language}]
    answer = out["answer"]["result"]
    assert answer["serverInfo"]["name"] == "evaldsl"
    for feature in ("completionProvider", "hoverProvider", "definitionProvider", "documentSymbolProvider",
                    "documentFormattingProvider"):
        assert answer["capabilities"][feature], feature
    assert out["exitCode"] == 0  # deactivating stops the server cleanly


def test_the_manifest_ties_evl_files_to_the_grammar_and_the_configuration() -> None:
    m = manifest()
    (language,) = m["contributes"]["languages"]
    (grammar,) = m["contributes"]["grammars"]
    assert language["extensions"] == [".evl"] and f"onLanguage:{language['id']}" in m["activationEvents"]
    assert grammar["language"] == language["id"]
    scope = json.loads((EXTENSION / grammar["path"]).read_text(encoding="utf-8"))["scopeName"]
    assert scope == grammar["scopeName"] == "source.evl"
    assert (EXTENSION / m["main"]).is_file()
    config = json.loads((EXTENSION / language["configuration"]).read_text(encoding="utf-8"))
    assert config["comments"] == {"lineComment": "#"}
    assert ["<", ">"] in config["brackets"] and ["[", "]"] in config["brackets"]
    assert "case" in config["indentationRules"]["increaseIndentPattern"]
    assert "vscode-languageclient" in m["dependencies"]

"""`evaldsl run` builds its record's models without pydantic's search for plugins, and the agent's own
models still get theirs (`plan/_plugins.py`). A real plugin, installed as pydantic finds one: a
distribution with a ``pydantic`` entry point on the path of a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PLUGIN = '''
SEEN = []

class Plugin:
    def new_schema_validator(self, schema, schema_type, schema_type_path, schema_kind, config, plugin_settings):
        SEEN.append(schema_type_path.name)
        return None, None, None

plugin = Plugin()
'''


@pytest.fixture
def plugin_path(tmp_path: Path) -> Path:
    (tmp_path / "seeing_plugin.py").write_text(PLUGIN)
    info = tmp_path / "seeing_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: seeing-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pydantic]\nseeing = seeing_plugin:plugin\n")
    return tmp_path


def _seen(plugin_path: Path, code: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    env["PYTHONPATH"] = os.pathsep.join([str(plugin_path), str(Path(__file__).resolve().parents[2])])
    tail = ("from pydantic import BaseModel\n"
            "class Mine(BaseModel):\n    x: int\n"
            "import os, json, seeing_plugin\n"
            "print(json.dumps({'seen': seeing_plugin.SEEN, 'switch': os.environ.get('PYDANTIC_DISABLE_PLUGINS')}))\n")
    done = subprocess.run([sys.executable, "-c", code + tail], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_record_models_are_built_without_plugins_and_the_agents_models_with_them(plugin_path: Path) -> None:
    seen = _seen(plugin_path, "from evaldsl.plan._plugins import record_models_built\nrecord_models_built()\n")
    assert seen == {"seen": ["Mine"], "switch": None}


def test_without_it_the_plugin_sees_the_record_models(plugin_path: Path) -> None:
    """The control: the plugin is found, and sees every model built, evaldsl's included."""
    seen = _seen(plugin_path, "import evaldsl.run._record\n")
    assert "EvalReport" in seen["seen"] and seen["seen"][-1] == "Mine"


def test_a_switch_the_user_set_is_left_as_it_is(plugin_path: Path) -> None:
    code = ("import os\nos.environ['PYDANTIC_DISABLE_PLUGINS'] = 'other'\n"
            "from evaldsl.plan._plugins import record_models_built\nrecord_models_built()\n"
            "import evaldsl.run._record\n")
    seen = _seen(plugin_path, code)
    assert seen["switch"] == "other" and "EvalReport" in seen["seen"]

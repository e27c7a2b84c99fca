"""`SharedClient.import_ahead`: a model run's plan starts aiohttp's import on a thread of its own (beside
the compile), and nothing else: not for the httpx transport, not twice, and a failing import is left to
the import that needs it. Each check in a fresh interpreter, where aiohttp is not imported yet."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys, threading
from evaldsl.models._transport import SharedClient
{setup}
started = []
start = threading.Thread.start
threading.Thread.start = lambda thread: (started.append(thread), start(thread))[1]
SharedClient({transport}).import_ahead()
for thread in started:
    thread.join()
print([thread.name for thread in started], "aiohttp" in sys.modules)
{after}"""


def probe(transport: str = "", setup: str = "", after: str = "") -> str:
    code = PROBE.format(transport=transport, setup=setup, after=after)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and not done.stderr, done.stderr
    return done.stdout.strip()


def test_aiohttp_is_imported_on_a_thread_of_its_own() -> None:
    assert probe() == "['evaldsl-import-aiohttp'] True"


def test_nothing_for_httpx_nor_when_aiohttp_is_already_there() -> None:
    assert probe("'httpx'") == "[] False"
    assert probe(setup="import aiohttp") == "[] True"


def test_a_failing_import_is_silent_on_the_thread_and_raised_where_it_is_used() -> None:
    setup = ("class Missing:\n"
             "    def find_spec(self, name, path=None, target=None):\n"
             "        if name == 'aiohttp':\n"
             "            raise ImportError('no aiohttp here')\n"
             "sys.meta_path.insert(0, Missing())\n")
    out = probe(setup=setup, after="try:\n    import aiohttp\nexcept ImportError as exc:\n    print(exc)\n")
    assert out == "['evaldsl-import-aiohttp'] False\nno aiohttp here"  # and nothing on stderr (`probe`)

"""`evaldsl ARGS...` in this process, cold, printing on stderr the CPU it had used when the suites were
compiled (all threads, `time.process_time`): bench_scale.py splits a whole `run` process's CPU by it.

    python bench/_split_run.py run --agent MOD:NAME cases.evl --json rec.json -q
"""

from __future__ import annotations

import sys
import time

import evaldsl.plan._inputs as plan_inputs
from evaldsl.cli import main

_load = plan_inputs.load_suites


def _timed_load(*args, **kwargs):  # type: ignore[no-untyped-def]
    suites = _load(*args, **kwargs)
    print(f"evaldsl-bench: compiled at {time.process_time():.6f} s CPU", file=sys.stderr)
    return suites


plan_inputs.load_suites = _timed_load
try:
    code = main(sys.argv[1:])
finally:
    print(f"evaldsl-bench: ended at {time.process_time():.6f} s CPU", file=sys.stderr)
sys.exit(code)

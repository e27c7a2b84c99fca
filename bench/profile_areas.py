"""CPU of one whole ``python -m evaldsl ...`` process, split by area, by sampling.

A CPU-time timer (``ITIMER_PROF``) interrupts the process every
``--interval`` ms of CPU; each sample is put in one area by the main
thread's stack at that moment: start-up/imports (any import frame), HTTP
(aiohttp, httpx, yarl, multidict, ssl, socket, or a frame of evaldsl's
backends), the tool loop, the judge, parse+compile (syntax/, compile/ or
lark, outside a run), the runner (run/, scoring included), record writing
(report/_json.py and its writer), the terminal, the CLI, and the event loop
itself (asyncio frames with no evaldsl or HTTP frame below them).

    python bench/profile_areas.py -- run suite.evl --model openai:x --base-url URL --no-cache -j 50 -q

Sampling overhead is small (a few percent at 1 ms); figures are shares of
the process's CPU, printed with the CPU time they stand for.
"""

from __future__ import annotations

import collections
import os
import runpy
import signal
import sys
import time

HTTP_LIBS = ("/aiohttp/", "/httpx/", "/httpx_aiohttp/", "/yarl/", "/multidict/", "/propcache/", "/ssl.py",
             "/socket.py", "/selector_events.py", "/h11/", "/httpcore/", "/anyio/")
BACKEND = ("models/_http.py", "models/_openai.py", "models/_anthropic.py", "models/_retry.py",
           "models/_transport.py", "models/_cache.py", "models/_backends.py")


def area(frame) -> str:  # type: ignore[no-untyped-def]
    files = []
    while frame is not None:
        files.append(frame.f_code.co_filename)
        frame = frame.f_back
    if any(f.startswith("<frozen importlib") for f in files):
        return "start-up/imports"
    in_run = any("evaldsl/run/" in f for f in files)
    for f in files:  # innermost first
        if any(lib in f for lib in HTTP_LIBS) or f.endswith(BACKEND):
            return "backend/HTTP"
        if f.endswith("models/_loop.py"):
            return "tool loop"
        if f.endswith("models/_judge.py"):
            return "judge"
        if "evaldsl/" in f:
            if f.endswith("run/_context.py") or "compile/_model" in f:  # _model.py and the _model_*.py it gathers
                if any(g.endswith("models/_loop.py") for g in files):
                    return "tool loop"
            if ("evaldsl/syntax/" in f or "evaldsl/compile/" in f) and not in_run:
                return "parse+compile"
            if "evaldsl/run/" in f or "evaldsl/compile/" in f:
                return "runner (scheduling, execution, scoring)"
            if "report/_json" in f or "report/_writer" in f or "report/_record" in f:
                return "record writing"
            if "report/_terminal" in f or "report/_progress" in f or "report/_live" in f:
                return "terminal"
            if "evaldsl/report/" in f:
                return "report (other)"
            if "evaldsl/cli/" in f or "evaldsl/plan/" in f:
                return "cli"  # the command and the run plan it hands on (evaldsl/plan/ since issue 28)
            return "evaldsl (other)"
        if "/lark/" in f:
            return "parse+compile"
    if any("/asyncio/" in f for f in files):
        return "event loop (asyncio)"
    return "other"


def main() -> None:
    argv = sys.argv[1:]
    interval = 0.001
    if argv[:1] == ["--interval"]:
        interval, argv = float(argv[1]) / 1000, argv[2:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    samples: collections.Counter[str] = collections.Counter()

    def on_tick(signum, frame):  # type: ignore[no-untyped-def]
        samples[area(frame)] += 1

    signal.signal(signal.SIGPROF, on_tick)
    cpu0 = time.process_time()
    signal.setitimer(signal.ITIMER_PROF, interval, interval)
    sys.argv = ["evaldsl", *argv]
    code = 0
    try:
        runpy.run_module("evaldsl", run_name="__main__")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
    cpu = time.process_time() - cpu0
    total = sum(samples.values()) or 1
    out = sys.stderr
    print(f"\nCPU {cpu:.3f} s, {total} samples; load average {os.getloadavg()[0]:.2f}", file=out)
    for name, n in samples.most_common():
        print(f"  {name:<42} {n / total * 100:5.1f}%  {cpu * n / total:6.3f} s", file=out)
    sys.exit(code)


if __name__ == "__main__":
    main()

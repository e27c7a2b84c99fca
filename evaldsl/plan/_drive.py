"""Carrying a plan out: `run_plan` runs one `RunPlan` and ends it; `run_request` plans and runs a whole
request (once, or once per ``--model`` and then the models' comparison table).

What a run prints (progress on ``err``, the report on ``out``) is the library's; what the caller gets
back is an `Outcome` to map to an exit code. Ctrl-C and an endpoint found down end the run the same
way: the finished cases are kept, the record says it is not complete, and the command that finishes it
is printed (`Outcome.INTERRUPTED`).
"""

from __future__ import annotations

import enum
import sys
import time
from dataclasses import dataclass
from typing import Any, TextIO

from ._build import build_plan
from ._collector import run_starts
from ._defaults import LAST_RECORD
from ._end import (
    FullRecord,
    finish,
    note_cache,
    print_report,
    report_writes,
    warn_unwritten,
    write_dashboard,
    write_outputs,
)
from ._models import check_model_options
from ._plan import RunPlan
from ._request import PlanUsage, RunRequest
from ._resume import EndpointDown, keeping_the_record, resume_command, resume_target


class Outcome(enum.Enum):
    """How a run ended, worst last: the CLI's exit codes 0, 1, 3 and 2 (pytest's)."""

    PASSED = "passed"
    """Every case passed (skipped, xfailed and xpassed do not fail a run), or none was this shard's."""
    FAILED = "failed"
    """A case failed or errored."""
    UNWRITTEN = "unwritten"
    """The run ended, but a record, JUnit, Markdown or dashboard file could not be written."""
    INTERRUPTED = "interrupted"
    """Ctrl-C, or the model endpoint was found down: the finished cases are kept, the rest did not run."""


@dataclass
class PlanDone:
    """What one run ended with: its outcome and (unless interrupted) the final record's meta and summary."""

    outcome: Outcome
    report: Any = None


def run_request(request: RunRequest, *, out: TextIO | None = None, err: TextIO | None = None) -> Outcome:
    """Plan and run ``request``: once, or once per ``--model`` value (one record each) followed by the
    table comparing them. An interrupted model run stops the whole request.

    Raises:
        PlanUsage, NothingSelected: as `build_plan` (also when the record cannot be written at the start).
    """
    out, err = out or sys.stdout, err or sys.stderr
    check_model_options(request)
    specs: list[str | None] = list(request.models.models or [None])
    outcomes, done = [], []
    for n, spec in enumerate(specs, 1):
        if len(specs) > 1:  # one block a model: each says whose it is
            from ..report._progress import use_colour
            from ..report._terminal import heading

            print(heading(f"model {spec} ({n} of {len(specs)})", use_colour(out)), file=out, flush=True)
        plan = build_plan(request, model=spec, out=out, err=err)
        result = run_plan(plan)
        if result.outcome is Outcome.INTERRUPTED:
            return result.outcome
        outcomes.append(result.outcome)
        done.append((spec, result.report, plan.models))
    if len(specs) > 1:
        from ..report._models_table import format_comparison

        print(format_comparison([(str(spec), report, m.cache) for spec, report, m in done]), end="", file=out)
    return Outcome.UNWRITTEN if Outcome.UNWRITTEN in outcomes else \
        Outcome.FAILED if Outcome.FAILED in outcomes else Outcome.PASSED


def run_plan(plan: RunPlan) -> PlanDone:
    """Run the plan's cases and end the run: record, last.json, lastfailed, outputs, dashboard, report.

    Raises:
        PlanUsage: the record could not be written when the run started (nothing has run).
    """
    from ..report._json import RecordWriteError
    from ..report._progress import Progress
    from ..run._api import run_async

    display = plan.request.display
    progress = Progress(len(plan.todo), stream=_Null() if display.quiet else plan.err,  # type: ignore[arg-type]
                        live=False if display.verbose else None)
    keeper, digest, ran = plan.keeper, plan.digest, plan.ran

    def on_result(result: Any) -> None:
        position = keeper.add(result)  # a line in the journal: the result is on disk before anything else
        digest.add(result, position)
        ran.add(position, result.status)
        if not display.quiet:
            progress.update(result)
        if plan.models.backends and plan.models.down() is not None and plan.stop is not None:
            plan.stop.set()  # `_drive` cancels the run: no new case starts, those in flight are cancelled

    started = time.monotonic()
    try:
        keeper.start(digest.summary())  # the record exists from the start, so --resume works at once
    except RecordWriteError as exc:  # nothing has run yet: a usage error
        raise PlanUsage(str(exc)) from None
    keeper.on_error = warn_unwritten(plan.err)
    run_starts()  # the command line paused the collector through start-up: on again, start-up frozen
    try:
        stopped = run_async(_drive(plan, on_result, progress))
    except EndpointDown as exc:
        progress.close()
        note_cache(plan)
        return PlanDone(_interrupted(plan, started, down=str(exc)))
    except KeyboardInterrupt:
        with keeping_the_record():  # a second Ctrl-C must not leave the record half written
            progress.close()
            note_cache(plan)
            return PlanDone(_interrupted(plan, started))
    progress.close()
    note_cache(plan)
    summary = finish(plan, complete=not stopped)
    notes = ["stopped after the first failure (-x)" if stopped else None, plan.models.cache_note()]
    print_report(plan, summary, started, "\n".join(n for n in notes if n) or None)
    full = FullRecord(plan, summary)
    written = [report_writes(plan), write_outputs(plan, full), write_dashboard(plan, full)]
    from ..run._record import EvalReport

    final = EvalReport(meta=keeper.meta, summary=summary)  # what the --model comparison reads
    if not all(written):  # every output attempted, whatever the first says
        return PlanDone(Outcome.UNWRITTEN, final)
    return PlanDone(Outcome.PASSED if final.ok else Outcome.FAILED, final)


def _interrupted(plan: RunPlan, started: float, *, down: str | None = None) -> Outcome:
    """Ctrl-C, or an endpoint found down (``down`` says why): keep and report the finished cases."""
    summary = finish(plan, complete=down is not None and plan.digest.summary().total >= plan.selected)
    target = resume_target(plan.keeper, plan.request, LAST_RECORD)
    kept = f" in {target}; finish it with: {resume_command(plan.request.argv, target)}" if target else ""
    done = f"{summary.total} of {plan.selected} cases finished and kept{kept}"
    if down is not None:
        print_report(plan, summary, started, f"stopped: the endpoint is down; {done}")
    else:
        print_report(plan, summary, started, f"interrupted: {done}")
    report_writes(plan)
    full = FullRecord(plan, summary)
    write_outputs(plan, full, upload=False)  # an interrupted run is not uploaded
    write_dashboard(plan, full)
    if down is not None:  # last, where it is seen: one message for the whole run
        print(f"evaldsl: stopped: the endpoint is down: {down}. Check --base-url (or OPENAI_BASE_URL / "
              f"ANTHROPIC_BASE_URL) and that the server is running; "
              f"{plan.selected - summary.total} case(s) were not run{kept}", file=plan.err)
    else:
        print("evaldsl: interrupted", file=plan.err)
    return Outcome.INTERRUPTED


async def _drive(plan: RunPlan, on_result: Any, progress: Any) -> bool:
    """Run the cases while refreshing the progress line; True when -x stopped the run."""
    import asyncio  # here, not at the top: `evaldsl check` never pays for it

    from ..run._api import run_cases

    request = plan.request
    plan.stop = asyncio.Event()
    stopping = asyncio.ensure_future(plan.stop.wait())
    task = asyncio.ensure_future(run_cases(
        plan.subject, plan.todo, concurrency=request.concurrency, exitfirst=request.exitfirst,
        on_result=on_result, judge=plan.models.judge, executor=plan.executor, halted=plan.stop.is_set,
        user=plan.models.user,
    ))
    try:
        while not task.done():
            await asyncio.wait({task, stopping}, timeout=0.2, return_when=asyncio.FIRST_COMPLETED)
            progress.tick()
            if plan.stop.is_set() and not task.done():  # an endpoint is down: stop as Ctrl-C stops
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
                raise EndpointDown(plan.models.down())
    except asyncio.CancelledError:  # Ctrl-C: asyncio.run turns it into KeyboardInterrupt
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        raise
    finally:
        stopping.cancel()
        await plan.models.aclose()
        await _close_bridge(plan.subject)
    if plan.stop.is_set():  # no case started after the endpoint was found down: say so, once
        raise EndpointDown(plan.models.down())
    return task.result()


async def _close_bridge(subject: Any) -> None:
    """A command or HTTP agent's servers (the recording proxy, the tool server) and processes stop with
    the run (AGENTS.md), on this loop: a user's own agent is left as it is."""
    bridge = getattr(subject.run, "__self__", None)
    close = getattr(bridge, "aclose", None)  # a framework adapter holds nothing to close
    if close is not None and type(bridge).__module__.startswith("evaldsl.agents."):
        await close()


class _Null:
    """A stream that drops everything (for --quiet)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

#!/bin/bash
# Instructions a case of `evaldsl run --json` beyond `evaldsl check` of the same file, counted by
# valgrind (cachegrind, no cache simulation): deterministic, unlike CPU time on a shared machine.
# Runs of 1,000 and 2,000 of bench_run.py's cases, so the constant (imports, start-up) drops out.
# User-space instructions of all threads; what the kernel does (thread switches) is not counted.
# --to-compiled stops each run once its suites are compiled: what a run pays before its first case,
# beyond check (the whole figure less this one is the running, scoring and recording).
# --warm fills the suite cache for both files and both commands first, so that with the cache on (the
# default) every counted process reads its suite from the cache; without it, the counted `check` and `run`
# of the 2,000-case file compile it and write their entries (their compiles differ), which the figure then
# holds too. With EVALDSL_SUITE_CACHE=off it changes nothing.
#
#     bash bench/count_instructions.sh TREE AGENT [--passing] [--to-compiled] [--warm]   # AGENT: InstantAsync or InstantSync
#     e.g. bash bench/count_instructions.sh . InstantAsync      # about 2 minutes
set -eu
tree=$(cd "$1" && pwd); agent=$2; shift 2
passing=""; to_compiled=""; warm=""
for flag in "$@"; do
  case $flag in
    --passing) passing=1 ;;
    --to-compiled) to_compiled=1 ;;
    --warm) warm=1 ;;
    *) echo "count_instructions.sh: unknown flag $flag" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export PYTHONHASHSEED=0 PYTHONPATH="$tree/bench:$tree"
unset PYTHONDONTWRITEBYTECODE  # bytecode as an installed evaldsl has it (the constant, not the figure, depends on it)
# a parser cache of its own, made by the first check below: the shared one (~/.cache/evaldsl/parsers/) keeps
# eight entries, and other checkouts' processes may evict ours between two counted runs (a rebuild is ~150M)
export XDG_CACHE_HOME="$work/cache"
python=${PYTHON:-python}
for n in 1000 2000; do
  "$python" -c "import sys; from bench_run import suite_text; open(sys.argv[1], 'w').write(suite_text($n, **({'passing': True} if sys.argv[2] else {})))" \
    "$work/c$n.evl" "$passing"
done
cat > "$work/cli.py" <<'PY'
import contextlib, io, os, sys
try:  # where the run compiles its suites (a tree before the run plan: the CLI's `_run._load`)
    import evaldsl.plan._inputs as loading; LOAD = "load_suites"
except ImportError:
    import evaldsl.cli._run as loading; LOAD = "_load"
from evaldsl.cli import main
if os.environ.get("TO_COMPILED"):  # the run ends once its suites are compiled
    _load = getattr(loading, LOAD)
    def _stop(*args, **kwargs):
        _load(*args, **kwargs)
        raise SystemExit(0)
    setattr(loading, LOAD, _stop)
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), contextlib.suppress(SystemExit):
    main(sys.argv[1:])
PY
count() { valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$python" "$work/cli.py" "$@" 2>&1 \
  | awk '/I *refs/ {gsub(",", "", $4); print $4}'; }
cd "$work"
"$python" cli.py check c1000.evl; "$python" cli.py run --agent "_instant_agents:$agent" c1000.evl --json r.json -q  # bytecode written
if [ -n "$warm" ]; then "$python" cli.py check c2000.evl; "$python" cli.py run --agent "_instant_agents:$agent" c2000.evl --json r.json -q; fi
c1=$(count check c1000.evl); c2=$(count check c2000.evl)
export TO_COMPILED=$to_compiled
r1=$(count run --agent "_instant_agents:$agent" c1000.evl --json r.json -q)
r2=$(count run --agent "_instant_agents:$agent" c2000.evl --json r.json -q)
echo "$tree $agent${passing:+ (passing)}${to_compiled:+ (to compiled)}${warm:+ (cache warmed)}: $(( ((r2 - c2) - (r1 - c1)) / 1000 ))" \
     "instructions a case beyond check (constant $(( (2 * (r1 - c1) - (r2 - c2)) / 1000000 ))M)"

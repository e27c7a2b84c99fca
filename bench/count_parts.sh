#!/bin/bash
# What each part of a run costs, in instructions a case: the run-only count (valgrind, cachegrind, no
# cache simulation) of bench_run.py's 2,000 cases less 1,000, the suite cache warm (so a run pays no
# compile), once as it is and once with each PART taken out of the process (patched before evaldsl's CLI
# is imported). A part's cost is the difference. What a part writes is lost with it (the record line,
# the summary's listings, the fingerprint): this measures, it is not a run to keep.
#
#     bash bench/count_parts.sh TREE AGENT [--passing]   # AGENT: InstantAsync or InstantSync; ~2 minutes
#
# Parts: digest (the terminal summary's `Digest.add`), line (the record's case line, pydantic-core's
# `to_json`: the journal gets `{}`), fingerprint (`suite_version`), copy (`make_safe`: the answer used
# as it is, not checked and copied).
set -eu
tree=$(cd "$1" && pwd); agent=$2; passing=""
[ "${3:-}" = "--passing" ] && passing=1
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export PYTHONHASHSEED=0 PYTHONPATH="$tree/bench:$tree"
unset PYTHONDONTWRITEBYTECODE
export XDG_CACHE_HOME="$work/cache"  # a parser cache of its own (count_instructions.sh says why)
python=${PYTHON:-python}
python=$(command -v "$python")
for n in 1000 2000; do
  "$python" -c "import sys; from bench_run import suite_text; open(sys.argv[1], 'w').write(suite_text($n, **({'passing': True} if sys.argv[2] else {})))" \
    "$work/c$n.evl" "$passing"
done
cat > "$work/cli.py" <<'PY'
import contextlib, io, os, sys
part = os.environ.get("WITHOUT", "")
if part == "digest":
    import evaldsl.report._terminal as terminal
    terminal.Digest.add = lambda *args, **kwargs: None
elif part == "line":
    import evaldsl.report._journal as journal
    journal.case_json = lambda case: b"{}"
elif part == "fingerprint":
    import evaldsl.run._shard as shard
    shard.suite_version = lambda cases, suites=None: "sha256:0"
elif part == "copy":
    import evaldsl.run._scoring as scoring
    scoring.make_safe = lambda art, duration=None: (art, ())
elif part:
    sys.exit(f"count_parts.sh: unknown part {part}")
from evaldsl.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), contextlib.suppress(SystemExit):
    main(sys.argv[1:])
PY
cd "$work"
for n in 1000 2000; do "$python" cli.py run --agent "_instant_agents:$agent" c$n.evl --json r.json -q; done  # bytecode, cache
count() { valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$python" cli.py "$@" 2>&1 \
  | awk '/I *refs/ {gsub(",", "", $4); print $4}'; }
per_case() {
  r1=$(WITHOUT=$1 count run --agent "_instant_agents:$agent" c1000.evl --json r.json -q)
  r2=$(WITHOUT=$1 count run --agent "_instant_agents:$agent" c2000.evl --json r.json -q)
  echo $(( (r2 - r1) / 1000 ))
}
whole=$(per_case "")
echo "$tree $agent${passing:+ (passing)}: a run-only case (suite cache warm) $whole instructions"
for part in digest line fingerprint copy; do
  less=$(per_case $part)
  echo "  $part: $(( whole - less ))"
done

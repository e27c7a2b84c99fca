#!/bin/bash
# Instructions a case of parsing bench_models.py's three-line single-turn cases, counted by valgrind
# (cachegrind, no cache simulation): a parse of 3,000 cases less one of 1,000, so start-up drops out.
# --lark parses the Lark way (what a file with a syntax error takes) instead of from the tables.
# The parser cache is warmed first: the first process after an edit of syntax/ builds its tables.
#
#     bash bench/count_parse_instructions.sh TREE [--lark]      # about a minute
set -eu
tree=$(cd "$1" && pwd); lark=${2:-}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export PYTHONHASHSEED=0 PYTHONPATH="$tree/bench:$tree"
python=${PYTHON:-python}
for n in 1 1000 3000; do
  "$python" -c "import sys; from bench_models import SUITE_HEAD, CASE; open(sys.argv[1], 'w').write(SUITE_HEAD + ''.join(CASE.format(i=i) for i in range(int(sys.argv[2]))))" \
    "$work/c$n.evl" "$n"
done
cat > "$work/parse.py" <<'PY'
import sys
from evaldsl.syntax import _tables
from evaldsl.syntax._parser import parse_with_diagnostics
if sys.argv[2]:
    _tables.fast_tables = lambda: None  # Lark's way
parse_with_diagnostics(open(sys.argv[1], encoding="utf-8").read())
PY
"$python" "$work/parse.py" "$work/c1.evl" "$lark"  # warms the parser cache
count() {
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$python" "$work/parse.py" "$1" "$lark" 2>&1 \
    | grep "I *refs" | tr -d ',' | awk '{print $4}'
}
a=$(count "$work/c1000.evl"); b=$(count "$work/c3000.evl")
if [ -n "$lark" ]; then way="the Lark way"; else way="from the tables"; fi
echo "instructions a case of parsing, $way: $(( (b - a) / 2000 ))"

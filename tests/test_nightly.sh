#!/usr/bin/env bash
# test_nightly.sh: the nightly benchmark's regression check. Makes a results
# JSON at test time (bench/harness.py on data/tiny.json with the hoffopt
# given, or a synthetic one when there is none), then checks that
# `bench/nightly.sh --baseline A --results B`
#   - exits 0 comparing a results file with itself, and with a rerun
#     (solve times left out: --timing off; the machine may be busy),
#   - exits 0 on a change within the threshold,
#   - exits 1 naming the job for a planted peak, makespan, solve-time,
#     failure and verification regression (--timing on),
#   - with --timing off ignores solve times; auto names them or says why
#     it did not compare them.
# Usage: tests/test_nightly.sh [path/to/hoffopt]   (ctest: bench_nightly_compare)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
hoff=${1:-}
py=${PYTHON:-python3}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-nightly.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0

harness_run() { # harness_run OUTDIR: the tiny suite's plan and sweep jobs
	"$py" "$root/bench/harness.py" all --hoffopt "$hoff" --suite tiny \
		--only '^tiny/(none|reactive|greedy)(/sweep[0-9]+)?$' \
		--work "$tmp/work" --out "$1" --no-report 2>"$1.log"
}

if [ -n "$hoff" ] && [ -x "$hoff" ]; then
	harness_run "$tmp/a"
	base=$tmp/a/results.json
	echo "fixture: bench/harness.py on data/tiny.json ($hoff)"
else
	echo "fixture: synthetic (no hoffopt given)"
	base=$tmp/base.json
	"$py" - "$base" <<'PY'
import json, sys
def entry(i, kind, policy, peak, ms, solve, budget=None):
    e = {"id": i, "graph": "tiny", "policy": policy, "kind": kind, "status": "ok",
         "valid": True, "feasible": True, "budget_bytes": budget,
         "peak_bytes": peak, "makespan_s": ms, "solve_s": solve}
    if kind == "sweep":
        e["sweep"] = {"step": int(i[-1]), "steps": 8, "floor_bytes": 8000000,
                      "top_bytes": 12000000}
    return e
es = [entry("tiny/none", "plan", "none", 12000000, 0.016, 0.0001),
      entry("tiny/reactive", "plan", "reactive", 8000000, 0.018, 0.0001),
      entry("tiny/greedy", "plan", "greedy", 11000000, 0.012, 0.0001),
      entry("tiny/greedy/sweep3", "sweep", "greedy", 8000000, 0.016, 0.0001,
            10285714)]
json.dump({"format": "hoffopt.bench", "version": 1, "commit": "fixture",
           "entries": es}, open(sys.argv[1], "w"), indent=1)
PY
fi

# plant NAME PYTHON-STATEMENT: a copy of the baseline with the statement
# applied to E, the dict of entries by id.
plant() {
	"$py" - "$base" "$tmp/$1.json" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
E = {e["id"]: e for e in d["entries"]}
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
}

# expect RC NAME FILE [PATTERN]: nightly's compare of the baseline with FILE
# exits RC and, when given, prints PATTERN.
expect() {
	local want=$1 name=$2 file=$3 pat=${4:-} rc=0
	"$root/bench/nightly.sh" --baseline "$base" --results "$file" \
		--timing "${TIMING:-on}" >"$tmp/$name.out" 2>&1 || rc=$?
	if [ "$rc" != "$want" ]; then
		echo "FAIL $name: exit $rc, expected $want"; sed 's/^/    /' "$tmp/$name.out"; fails=$((fails + 1)); return
	fi
	if [ -n "$pat" ] && ! grep -Eq -- "$pat" "$tmp/$name.out"; then
		echo "FAIL $name: output lacks /$pat/"; sed 's/^/    /' "$tmp/$name.out"; fails=$((fails + 1)); return
	fi
	echo "ok   $name (exit $rc)${pat:+, names /$pat/}"
}

expect 0 self "$base" "^compare: 0 regressions"

plant peak 'E["tiny/greedy"]["peak_bytes"] = int(E["tiny/greedy"]["peak_bytes"] * 1.10)'
expect 1 peak "$tmp/peak.json" "^REGRESSION tiny/greedy: peak_bytes"

plant makespan 'E["tiny/greedy/sweep3"]["makespan_s"] *= 1.5'
expect 1 makespan "$tmp/makespan.json" "^REGRESSION tiny/greedy/sweep3: makespan_s"

plant within 'E["tiny/greedy"]["peak_bytes"] = int(E["tiny/greedy"]["peak_bytes"] * 1.01)'
expect 0 within-threshold "$tmp/within.json" "^compare: 0 regressions"

plant better 'E["tiny/none"]["makespan_s"] *= 0.5'
expect 0 improvement "$tmp/better.json" "^improved: tiny/none: makespan_s"

plant solve 'E["tiny/reactive"]["solve_s"] = 3.0'
expect 1 solve-time "$tmp/solve.json" "^REGRESSION tiny/reactive: solve_s"

plant solvesmall 'E["tiny/reactive"]["solve_s"] = 0.4'
expect 0 solve-time-small "$tmp/solvesmall.json" "^compare: 0 regressions"

plant error 'E["tiny/none"].update(status="error", error="exit -11: boom")'
expect 1 now-fails "$tmp/error.json" "^REGRESSION tiny/none: now fails"

plant verify 'd["entries"].append(dict(id="tiny/greedy/exec-cpu", kind="exec", graph="tiny", policy="greedy", status="error", exec=dict(verified=False, faults=["w0 differs"])))'
cp "$tmp/verify.json" "$tmp/verify-new.json"
"$py" - "$tmp/verify.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
e = d["entries"][-1]
e.update(status="ok", exec=dict(verified=True))
json.dump(d, open(sys.argv[1], "w"))
PY
rc=0
"$root/bench/nightly.sh" --baseline "$tmp/verify.json" --results "$tmp/verify-new.json" --timing on >"$tmp/verify.out" 2>&1 || rc=$?
if [ "$rc" = 1 ] && grep -q "^REGRESSION tiny/greedy/exec-cpu" "$tmp/verify.out"; then
	echo "ok   executor-fails (exit 1)"
else
	echo "FAIL executor-fails: exit $rc"; sed 's/^/    /' "$tmp/verify.out"; fails=$((fails + 1))
fi

# Exact: a load-induced cut-off at the time limit is a note; more
# branch-and-bound nodes to the same optimum is a regression.
exact_entry='dict(id="tiny/exact", kind="exact", graph="tiny", policy="exact", status="ok", valid=True, feasible=True, peak_bytes=11000000, makespan_s=0.012, solve_s=%s, exact=dict(status="%s", objective=11000000, time_limit_s=60, model=dict(nodes=%d)))'
plant exact-a "d[\"entries\"].append($(printf "$exact_entry" 28.0 optimal 2000))"
plant exact-cut "d[\"entries\"].append($(printf "$exact_entry" 60.0 time_limit 3000))"
plant exact-nodes "d[\"entries\"].append($(printf "$exact_entry" 29.0 optimal 9000))"
for f in exact-cut exact-nodes; do
	rc=0
	"$root/bench/nightly.sh" --baseline "$tmp/exact-a.json" --results "$tmp/$f.json" --timing on >"$tmp/$f.out" 2>&1 || rc=$?
	want=0 pat="^note: tiny/exact: exact status optimal -> time_limit"
	[ "$f" = exact-cut ] || { want=1 pat="^REGRESSION tiny/exact: branch-and-bound nodes"; }
	if [ "$rc" = "$want" ] && grep -Eq -- "$pat" "$tmp/$f.out"; then
		echo "ok   $f (exit $rc), names /$pat/"
	else
		echo "FAIL $f: exit $rc, expected $want and /$pat/"; sed 's/^/    /' "$tmp/$f.out"; fails=$((fails + 1))
	fi
done

rc=0
"$root/bench/nightly.sh" --results "$base" >/dev/null 2>&1 || rc=$?
if [ "$rc" = 2 ]; then echo "ok   usage (exit 2)"; else echo "FAIL usage: exit $rc"; fails=$((fails + 1)); fi

# A rerun of the same binary compares clean (plans are deterministic);
# its solve times are measured on this machine, maybe loaded by other
# tests: they are left out (--timing off), the planted ones above are not.
if [ -n "$hoff" ] && [ -x "$hoff" ]; then
	harness_run "$tmp/b"
	TIMING=off expect 0 rerun "$tmp/b/results.json" "^compare: 0 regressions"
fi

# --timing auto compares solve times on an idle machine only: the planted
# solve-time regression is named, or the run says it was not compared.
rc=0
"$root/bench/nightly.sh" --baseline "$base" --results "$tmp/solve.json" \
	--timing auto >"$tmp/auto.out" 2>&1 || rc=$?
if { [ "$rc" = 1 ] && grep -q "^REGRESSION tiny/reactive: solve_s" "$tmp/auto.out"; } ||
	{ [ "$rc" = 0 ] && grep -q "^nightly: solve times not compared: load average" "$tmp/auto.out"; }; then
	echo "ok   timing-auto (exit $rc)"
else
	echo "FAIL timing-auto: exit $rc"; sed 's/^/    /' "$tmp/auto.out"; fails=$((fails + 1))
fi
rc=0
"$root/bench/nightly.sh" --baseline "$base" --results "$tmp/solve.json" \
	--timing off >"$tmp/off.out" 2>&1 || rc=$?
if [ "$rc" = 0 ] && grep -q "^nightly: solve times not compared (--timing off)" "$tmp/off.out"; then
	echo "ok   timing-off (exit 0)"
else
	echo "FAIL timing-off: exit $rc"; sed 's/^/    /' "$tmp/off.out"; fails=$((fails + 1))
fi

if [ "$fails" != 0 ]; then
	echo "test_nightly: $fails failure(s)"
	exit 1
fi
echo "test_nightly: all passed"

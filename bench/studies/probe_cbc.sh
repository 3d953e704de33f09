#!/usr/bin/env bash
# probe_cbc.sh: where the exact scheduler's peak search ends with its gap
# open (overhead mode), hand the question that would close it to CBC.
# For each graph, `hoffopt --exact --write-probe` writes the probe for the
# next possible peak under the best it found (solver/README.md, "Overhead
# mode: the peak search"); CBC then solves that MIP within -c seconds.
# "infeasible" means no schedule within the makespan bound has a lower
# peak: the best is optimal, proven by CBC, not by hoffopt's GLPK.
# Prints a markdown table. Needs cbc (Debian: coinor-cbc).
# Usage: bench/studies/probe_cbc.sh [-b hoffopt] [-t seconds] [-c cbc seconds]
#        [-- exact options] [graph.json ...]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
climit=120
. "$root/bench/lib/exact_opts.sh"
. "$root/bench/lib/small_graphs.sh"
usage() { echo "usage: $0 [-b hoffopt] [-t s] [-c s] [-- options] [graphs]" >&2; exit 2; }
own_opt() { climit=$2; } # -c
exact_opts "b:t:c:" "$@"
shift "$nopts"
# getopts consumed the "--": what is not a .json file is an option
split_args "$@"
need_hoff
command -v cbc > /dev/null || { echo "probe_cbc.sh: no cbc (apt-get install coinor-cbc)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for g in "${graphs[@]}"; do
	b=$tmp/$(basename "$g")
	"$hoff" --exact "$g" --time-limit "$limit" --quiet --json \
		--write-probe "$b.lp" ${extra[@]+"${extra[@]}"} > "$b.json" 2> "$b.err" || true
	if [ -f "$b.lp" ]; then
		start=$EPOCHREALTIME
		cbc "$b.lp" -sec "$climit" -solve -quit > "$b.cbc" 2>&1 || true
		echo "$start $EPOCHREALTIME" > "$b.cbcs"
	fi
done
python3 - "$tmp" "$limit" "$climit" "${graphs[@]}" <<'PY'
import json, os, sys
tmp, limit, climit, graphs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
print("hoffopt --exact: least peak within the overhead bound, %s s; CBC on the written probe, %s s.\n" % (limit, climit))
print("| graph | exact status | best | bound | gap | probe: peak at most | CBC | CBC s |")
print("|---|---|---|---|---|---|---|---|")
for g in graphs:
    b = os.path.join(tmp, os.path.basename(g))
    name = os.path.basename(g)
    try:
        d = json.load(open(b + ".json"))
    except Exception:
        err = open(b + ".err").read().strip().splitlines()
        print("| %s | error: %s | | | | | | |" % (name, err[-1] if err else "?"))
        continue
    row = [name, d["status"], "%.9g B" % d["objective"], "%.9g B" % d["bound"],
           "%.3f%%" % (100 * d["gap"])]
    if d.get("probe_peak") is None:
        row += ["none (%s)" % ("proven" if d["status"].startswith("optimal") else "no best"), "-", "-"]
    else:
        log = open(b + ".cbc").read()
        res = log.split("Result - ")[-1].splitlines()[0] if "Result - " in log else ""
        if "proven infeasible" in res:
            ans = "infeasible: the best is optimal"
        elif "Objective value:" in log:
            ans = "feasible: a lower peak exists"
        elif "time limit" in res:
            ans = "no answer"
        else:
            ans = "? (%s)" % (res or "cbc failed")
        row += ["%d B" % d["probe_peak"], ans, "%.1f" % (lambda a, z: z - a)(*map(float, open(b + ".cbcs").read().split()))]
    print("| " + " | ".join(row) + " |")
PY

#!/usr/bin/env bash
# exact_table.sh: the exact scheduler against greedy on the small graphs of
# data/ (at most MAXOPS ops, default 150) or on the graphs given. For each
# graph, `hoffopt compare` reports greedy's and the exact scheduler's
# simulated objective (least peak within --max-overhead of the lower
# bound, default 1%; or least total stall under --budget B), the solver's
# bound, each one's gap to it, its status and solve time. Prints a
# markdown table; exits 1 if exact is ever worse than greedy.
# Usage: bench/exact_table.sh [-b hoffopt] [-t seconds] [-- compare options]
#        [graph.json ...]
# e.g.   bench/exact_table.sh -t 60 -- --budget 90%
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/exact_opts.sh"
. "$root/bench/small_graphs.sh"
usage() { echo "usage: $0 [-b hoffopt] [-t s] [-- options] [graphs]" >&2; exit 2; }
exact_opts "b:t:" "$@"
shift "$nopts"
# getopts consumed the "--": what is not a .json file is an option
split_args "$@"
need_hoff
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for g in "${graphs[@]}"; do
	"$hoff" compare "$g" --time-limit "$limit" --quiet --json ${extra[@]+"${extra[@]}"} \
		> "$tmp/$(basename "$g").json" 2> "$tmp/$(basename "$g").err" || true
done
python3 - "$tmp" "$limit" "${extra[*]:-}" "${graphs[@]}" <<'PY'
import json, os, sys
tmp, limit, extra, graphs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
def f(v, kind):
    if v is None:
        return "-"
    return "%.6g s" % v if kind == "stall_s" else "%.6g B" % v
def pct(v):
    return "-" if v is None else "%.3f%%" % (100 * v)
print("Objective: %s; time limit %s s.\n" % (extra or "least peak within 1% of the lower bound", limit))
print("| graph | ops | candidates | status | greedy | exact | bound | greedy gap | exact gap | solve s |")
print("|---|---|---|---|---|---|---|---|---|---|")
bad = 0
for g in graphs:
    name = os.path.basename(g)
    try:
        d = json.load(open(os.path.join(tmp, name + ".json")))
    except Exception:
        err = open(os.path.join(tmp, name + ".err")).read().strip().splitlines()
        print("| %s | - | - | error: %s | | | | | | |" % (name, err[-1] if err else "?"))
        bad = 1
        continue
    k, gr, ex = d["objective_kind"], d["greedy"], d["exact"]
    worse = gr["feasible"] and (not ex["feasible"] or ex["simulated_objective"] > gr["objective"] * (1 + 1e-12))
    bad |= worse
    print("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %.1f |" % (
        name, ex["model"]["ops"], ex["model"]["candidates"], ex["status"],
        f(gr["objective"], k), f(ex["simulated_objective"], k), f(d["bound"], k),
        pct(gr["gap"]), pct(ex["gap"]), ex["solve_s"]) + (" **worse than greedy**" if worse else ""))
sys.exit(1 if bad else 0)
PY

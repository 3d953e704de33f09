#!/usr/bin/env bash
# policy_table.sh: greedy against the runtime baselines on every graph of
# data/ (and any graphs given as arguments). For each graph: the peak,
# reduction vs none, makespan and overhead of none, reactive, lookahead:1
# and greedy (default objective: smallest peak within 1% of the lower
# bound, under the device's memory), then greedy again at reactive's and
# lookahead:1's own makespan, where its peak must be no higher. Prints a
# markdown table; exits 1 if greedy is ever worse or any plan is invalid.
# Usage: bench/policy_table.sh [hoffopt] [graph.json ...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
hoff=${1:-$root/build/hoffopt}
shift || true
[ -x "$hoff" ] || { echo "policy_table.sh: no hoffopt at $hoff (build first)" >&2; exit 2; }
# every graph of data/ when none is given (bench/small_graphs.sh, no op cap)
# shellcheck source=small_graphs.sh
MAXOPS=${MAXOPS:-2000000000} . "$root/bench/small_graphs.sh"
split_args "$@"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for g in "${graphs[@]}"; do
	for p in none reactive lookahead:1 greedy; do
		"$hoff" --policy "$p" "$g" --json > "$tmp/$(basename "$g").$p.json" 2>/dev/null || true
	done
	for p in reactive lookahead:1; do
		x=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(repr(d['makespan_s']/d['lower_bound_s']-1+1e-12))" "$tmp/$(basename "$g").$p.json")
		"$hoff" --greedy "$g" --max-overhead "$x" --json > "$tmp/$(basename "$g").greedy@$p.json" 2>/dev/null || true
	done
done
python3 - "$tmp" "${graphs[@]}" <<'PY'
import json, os, sys
tmp, graphs = sys.argv[1], sys.argv[2:]
bad = 0
def load(g, p):
    f = os.path.join(tmp, os.path.basename(g) + "." + p + ".json")
    try:
        return json.load(open(f))
    except Exception:
        return None
def gib(b): return "%.2f" % (b / 2**30)
print("| graph | policy | peak GiB | reduction vs none | makespan s | overhead | fits device | plan from |")
print("|---|---|---:|---:|---:|---:|---|---|")
for g in graphs:
    name = os.path.basename(g)[:-5]
    none = load(g, "none")
    for p in ["none", "reactive", "lookahead:1", "greedy", "greedy@reactive", "greedy@lookahead:1"]:
        d = load(g, p)
        if d is None or none is None:
            print("| %s | %s | (failed) | | | | | |" % (name, p)); bad = 1; continue
        red = 1 - d["peak_bytes"] / none["peak_bytes"]
        ov = d["overhead"] if d["overhead"] is not None else 0
        fits = d["valid"] and d["peak_bytes"] <= d["device_memory_bytes"]
        print("| %s | %s | %s | %.1f%% | %.4f | %.1f%% | %s | %s |" % (
            name, p, gib(d["peak_bytes"]), 100 * red, d["makespan_s"], 100 * ov,
            "yes" if fits else "no", d["source"]))
        if not d["valid"]:
            bad = 1
        if p.startswith("greedy@"):
            base = load(g, p.split("@")[1])
            if d["makespan_s"] <= base["makespan_s"] * (1 + 1e-9) and d["peak_bytes"] > base["peak_bytes"]:
                print("greedy worse than %s on %s" % (p, name), file=sys.stderr); bad = 1
sys.exit(bad)
PY

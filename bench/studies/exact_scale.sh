#!/usr/bin/env bash
# exact_scale.sh: how the exact scheduler's solve time grows with the
# graph. Generates model-shaped graphs of growing depth (`hoffopt gen`,
# decode and train phases), solves each with `hoffopt --exact` under the
# time limit, and prints ops, candidate tensors, intervals, binaries,
# rows, status, gap and solve time as a markdown table, then the largest
# graph solved to proven optimality within the limit.
# With KEEP=DIR, the generated graphs and exact's JSON reports are kept in
# DIR (gN.json, rN.json), so greedy can be compared later with the proven
# optima without solving again.
# Usage: bench/studies/exact_scale.sh [-b hoffopt] [-t seconds] [-- exact options]
# e.g.   bench/studies/exact_scale.sh -t 60 -- --budget 90%
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/bench/lib/exact_opts.sh"
usage() { echo "usage: $0 [-b hoffopt] [-t s] [-- options]" >&2; exit 2; }
exact_opts "b:t:" "$@"
shift "$nopts"
[ "${1:-}" = "--" ] && shift
extra=("$@")
need_hoff
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# name | gen arguments (SEQ is kept short: sizes do not change the model)
cases=(
	"llama3-8b decode L1|llama3-8b --phase decode --layers 1 --seq 2048"
	"llama3-8b decode L2|llama3-8b --phase decode --layers 2 --seq 2048"
	"llama3-8b decode L4|llama3-8b --phase decode --layers 4 --seq 2048"
	"llama3-8b decode L8|llama3-8b --phase decode --layers 8 --seq 2048"
	"mixtral-8x7b decode L1|mixtral-8x7b --phase decode --layers 1 --seq 2048"
	"mixtral-8x7b decode L2|mixtral-8x7b --phase decode --layers 2 --seq 2048"
	"mixtral-8x7b decode L4|mixtral-8x7b --phase decode --layers 4 --seq 2048"
	"mixtral-8x7b decode L8|mixtral-8x7b --phase decode --layers 8 --seq 2048"
	"llama3-8b train L1|llama3-8b --phase train --layers 1 --seq 1024"
	"llama3-8b train L2|llama3-8b --phase train --layers 2 --seq 1024"
	"llama3-8b train L4|llama3-8b --phase train --layers 4 --seq 1024"
	"llama3-8b train L8|llama3-8b --phase train --layers 8 --seq 1024"
	"llama3-8b train L16|llama3-8b --phase train --layers 16 --seq 1024"
	"deepseek-v3 decode L1|deepseek-v3 --phase decode --layers 1 --seq 2048"
	"deepseek-v3 decode L2|deepseek-v3 --phase decode --layers 2 --seq 2048"
	"deepseek-v3 decode L4|deepseek-v3 --phase decode --layers 4 --seq 2048"
	"deepseek-v3 decode L8|deepseek-v3 --phase decode --layers 8 --seq 2048"
)
i=0
for c in "${cases[@]}"; do
	name=${c%%|*}
	read -r -a args <<< "${c#*|}"
	"$hoff" gen "${args[@]}" -o "$tmp/g$i.json"
	start=$(date +%s.%N)
	"$hoff" --exact "$tmp/g$i.json" --time-limit "$limit" --quiet --json ${extra[@]+"${extra[@]}"} \
		> "$tmp/r$i.json" 2> "$tmp/r$i.err" || true
	end=$(date +%s.%N)
	echo "$name|$(echo "$end - $start" | bc)" > "$tmp/n$i"
	if [ -n "${KEEP:-}" ]; then
		mkdir -p "$KEEP"
		cp "$tmp/g$i.json" "$tmp/r$i.json" "$KEEP/"
		echo "$name" > "$KEEP/n$i"
	fi
	i=$((i + 1))
done
python3 - "$tmp" "$i" "$limit" "${extra[*]:-}" <<'PY'
import json, os, sys
tmp, n, limit, extra = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
print("Objective: %s; time limit %s s.\n" % (extra or "least peak within 1% of the lower bound", limit))
print("| graph | ops | candidates | intervals | binaries | rows | status | exact | greedy | greedy vs exact | gap | solve s | wall s |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
best = None
for i in range(n):
    name, wall = open(os.path.join(tmp, "n%d" % i)).read().strip().split("|")
    try:
        d = json.load(open(os.path.join(tmp, "r%d.json" % i)))
    except Exception:
        err = open(os.path.join(tmp, "r%d.err" % i)).read().strip().splitlines()
        print("| %s | | | | | | error: %s | | | | | | %.1f |" % (name, err[-1] if err else "?", float(wall)))
        continue
    m = d["model"]
    gap = "-" if d["gap"] is None else "%.3f%%" % (100 * d["gap"])
    ex, gr = d.get("objective"), (d.get("greedy") or {}).get("objective")
    vs = "%+.3f%%" % (100 * (gr / ex - 1)) if ex and gr else "-"
    print("| %s | %d | %d | %d | %d | %d | %s | %s | %s | %s | %s | %.1f | %.1f |" % (
        name, m["ops"], m["candidates"], m["intervals"], m["binaries"], m["rows"],
        d["status"], "%.6g" % ex if ex is not None else "-", "%.6g" % gr if gr is not None else "-",
        vs, gap, d["solve_s"], float(wall)))
    if d["status"].startswith("optimal") and (best is None or (m["ops"], m["binaries"]) > (best[1]["ops"], best[1]["binaries"])):
        best = (name, m)
if best:
    print("\nLargest solved to optimality within %s s: %s (%d ops, %d candidates, %d binaries)." % (
        limit, best[0], best[1]["ops"], best[1]["candidates"], best[1]["binaries"]))
else:
    print("\nNo graph was solved to optimality within %s s." % limit)
PY

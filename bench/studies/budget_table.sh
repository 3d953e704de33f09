#!/usr/bin/env bash
# budget_table.sh: greedy's budget mode against the runtime baselines
# (reactive, lookahead:1, lookahead:2) under the same budget, at 50, 60, 75
# and 90% of each graph's all-resident (no-offload) peak, on every graph
# of data/ and of ../shared/witness/budget2/ (or the graphs given). The
# budget is passed in bytes (the percentage of `hoffopt analyze --json`'s
# no_offload.peak_bytes, rounded down). Per row: greedy's makespan and
# whether it fits, each baseline's makespan (or "over" when its peak is
# over the budget), and the verdict: ok when greedy fits wherever some
# baseline does and is no slower than any baseline that fits; every
# written schedule is checked with `hoffopt simulate --budget`. Prints a
# markdown table; exits 1 on any "WORSE" or invalid schedule.
# Usage: bench/studies/budget_table.sh [hoffopt] [graph.json ...]
# Env: PCTS (default "50 60 75 90").
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
hoff=${1:-$root/build/hoffopt}
shift || true
[ -x "$hoff" ] || { echo "budget_table.sh: no hoffopt at $hoff (build first)" >&2; exit 2; }
graphs=("$@")
if [ ${#graphs[@]} -eq 0 ]; then
	for g in "$root"/data/*.json "$root"/../shared/witness/budget2/*.graph.json; do
		case $g in *.schedule.json) continue ;; esac
		[ -f "$g" ] && graphs+=("$g")
	done
fi
pcts=${PCTS:-50 60 75 90}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
printf '| graph | budget | bytes | greedy s | reactive s | lookahead:1 s | lookahead:2 s | greedy / best baseline | verdict |\n'
printf '|---|---:|---:|---:|---:|---:|---:|---:|---|\n'
for g in "${graphs[@]}"; do
	name=$(basename "$g" .json)
	name=${name%.graph}
	peak=$("$hoff" analyze "$g" --json | python3 -c \
		'import json,sys; print(json.load(sys.stdin)["no_offload"]["peak_bytes"])')
	for pct in $pcts; do
		b=$((peak * pct / 100))
		for p in greedy reactive lookahead:1 lookahead:2; do
			# exit 1 (does not fit) still writes the report
			"$hoff" --policy "$p" "$g" --budget "$b" --json \
				-o "$tmp/s.$p.json" >"$tmp/r.$p.json" 2>/dev/null || true
			v=none
			if [ -s "$tmp/s.$p.json" ]; then
				if "$hoff" simulate "$g" "$tmp/s.$p.json" --budget "$b" \
					>/dev/null 2>&1; then v=valid; else v=invalid; fi
			fi
			echo "$v" >"$tmp/v.$p"
			rm -f "$tmp/s.$p.json"
		done
		row=$(python3 - "$tmp" "$name" "$pct" "$b" 2>"$tmp/verdict" <<'PY'
import json, os, sys
tmp, name, pct, b = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def get(p):
    try:
        r = json.load(open(os.path.join(tmp, "r." + p + ".json")))
    except Exception:
        r = None
    v = open(os.path.join(tmp, "v." + p)).read().strip()
    return r, v
g, gv = get("greedy")
fits = lambda r: r is not None and r.get("valid", True) and r["peak_bytes"] <= b
cells, best, bad = [], None, False
for p in ("reactive", "lookahead:1", "lookahead:2"):
    r, v = get(p)
    if v == "invalid":
        bad = True
    if fits(r):
        cells.append("%.6f" % r["makespan_s"])
        best = r["makespan_s"] if best is None else min(best, r["makespan_s"])
    else:
        cells.append("over")
gfit = fits(g) and gv == "valid"
gcell = ("%.6f" % g["makespan_s"]) if gfit else ("over (%d B)" % g["peak_bytes"] if g else "none")
if gv == "invalid":
    bad, verdict = True, "INVALID"
elif best is not None and (not gfit or g["makespan_s"] > best):
    bad, verdict = True, "WORSE"
else:
    verdict = "ok"
ratio = "%.3f" % (g["makespan_s"] / best) if gfit and best else "-"
print("| %s | %s%% | %d | %s | %s | %s | %s | %s | %s |" % (
    name, pct, b, gcell, cells[0], cells[1], cells[2], ratio, verdict))
print("BAD" if bad else "OK", file=sys.stderr)
PY
		)
		echo "$row"
		grep -q BAD "$tmp/verdict" && bad=1
	done
done
exit "$bad"

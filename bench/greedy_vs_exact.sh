#!/usr/bin/env bash
# greedy_vs_exact.sh: greedy's peak against exact's proven optimum, in the
# default objective (the least peak within 1% of lower_bound_s), on every
# graph where exact proves one: data/'s small graphs (solved here, at most
# 150 ops, -t seconds each) and the proven rows kept by
# `KEEP=DIR bench/exact_scale.sh` (DIR holds gN.json, rN.json, nN). Prints
# a markdown table: exact's status and peak, greedy's peak and makespan
# over the lower bound, and greedy against exact.
# Usage: bench/greedy_vs_exact.sh [-b hoffopt] [-t seconds] [-k KEEPDIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
hoff=$root/build/hoffopt
limit=60
keep=
while getopts "b:t:k:" o; do
	case $o in
	b) hoff=$OPTARG ;;
	t) limit=$OPTARG ;;
	k) keep=$OPTARG ;;
	*) echo "usage: $0 [-b hoffopt] [-t s] [-k keepdir]" >&2; exit 2 ;;
	esac
done
[ -x "$hoff" ] || { echo "greedy_vs_exact.sh: no hoffopt at $hoff (build first)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

rows=()
n=0
for g in "$root"/data/*.json; do
	read -r fmt nops < <(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get("format","-"), len(d.get("ops",[])))' "$g")
	[ "$fmt" = hoffopt.graph ] && [ "$nops" -le 150 ] || continue
	"$hoff" --exact "$g" --time-limit "$limit" --quiet --json > "$tmp/r$n.json" 2>/dev/null || true
	echo "$(basename "$g" .json)|$g|$tmp/r$n.json" >> "$tmp/list"
	n=$((n + 1))
done
if [ -n "$keep" ]; then
	for f in "$keep"/n*; do
		[ -e "$f" ] || continue
		i=${f##*/n}
		echo "$(cat "$f")|$keep/g$i.json|$keep/r$i.json" >> "$tmp/list"
	done
fi
while IFS='|' read -r name g r; do
	"$hoff" --greedy "$g" --json > "$tmp/greedy.json" 2>/dev/null || true
	echo "$name|$r|$(tr -d '\n' < "$tmp/greedy.json")" >> "$tmp/rows"
done < "$tmp/list"

python3 - "$tmp/rows" <<'PY'
import json, sys
print("| graph | exact status | exact peak B | greedy peak B | greedy over bound | greedy vs exact |")
print("|---|---|---:|---:|---:|---:|")
worst = None
for line in open(sys.argv[1]):
    name, r, gj = line.rstrip("\n").split("|", 2)
    try:
        d = json.load(open(r))
        gr = json.loads(gj)
    except Exception:
        print("| %s | error | | | | |" % name)
        continue
    if not str(d.get("status", "")).startswith("optimal"):
        continue
    ex, gp = d["objective"], gr["peak_bytes"]
    vs = gp / ex - 1
    worst = vs if worst is None else max(worst, vs)
    print("| %s | %s | %d | %d | %+.2f%% | %+.3f%% |" % (
        name, d["status"], ex, gp, 100 * gr["overhead_vs_lower_bound"], 100 * vs))
if worst is not None:
    print("\nWorst greedy vs proven optimum: %+.3f%%." % (100 * worst))
PY

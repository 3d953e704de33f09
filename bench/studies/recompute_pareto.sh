#!/usr/bin/env bash
# recompute_pareto.sh [HOFFOPT] [GRAPH.json ...]: peak against makespan
# (issue #31's Pareto study) for greedy with and without --recompute at
# --max-overhead 0, 1%, 2%, 5%, 10%, 25% and 50%, and one point each for the
# baselines none, reactive, lookahead:1, lookahead:2, checkpoint and
# checkpoint+reactive. Default graphs: data/'s training graphs as FORMAT
# v2 repeat graphs (jq '.version=2|.repeat=true') and the recompute
# witness graph of ../shared/witness/recompute/. Prints one markdown
# table per graph: planner, peak B, peak GB, makespan s, over the lower
# bound, recompute s (from --json). A plan that does not fit the
# device (exit 1) is listed with its peak. Needs jq.
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=${1:-}
[ -n "$bin" ] || { [ -x "$root/build-rel/hoffopt" ] && bin=$root/build-rel/hoffopt || bin=$root/build/hoffopt; }
shift || true
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
graphs=("$@")
if [ ${#graphs[@]} -eq 0 ]; then
	for g in llama3-8b-train-2l llama3-8b-l2-train-in-backward llama3-8b-train; do
		jq '.version=2|.repeat=true' "$root/data/$g.json" > "$tmp/$g-repeat.json"
		graphs+=("$tmp/$g-repeat.json")
	done
	graphs+=("$root/../shared/witness/recompute/llama3-8b-train-8k-repeat.graph.json")
fi
row() { # NAME ARGS...
	local name=$1
	shift
	"$bin" "$@" --json > "$tmp/o.json" 2>/dev/null
	jq -r --arg n "$name" '"| \($n) | \(.peak_bytes) | \((.peak_bytes/1e9*1000|round)/1000) | \((.makespan_s*1e6|round)/1e6) | \((.overhead_vs_lower_bound*10000|round)/100)% | \(((.recompute_s // 0)*1e6|round)/1e6) |"' "$tmp/o.json" 2>/dev/null ||
		echo "| $name | — | — | — | — | — |"
}
for g in "${graphs[@]}"; do
	echo
	echo "$(basename "$g" .json):"
	echo
	echo "| planner | peak B | peak GB | makespan s | over bound | recompute s |"
	echo "|---|---:|---:|---:|---:|---:|"
	for x in 0 0.01 0.02 0.05 0.10 0.25 0.50; do
		row "greedy at $x" --greedy "$g" --max-overhead "$x"
		row "greedy --recompute at $x" --greedy "$g" --max-overhead "$x" --recompute
	done
	for p in none reactive lookahead:1 lookahead:2 checkpoint checkpoint+reactive; do
		row "$p" --policy "$p" "$g"
	done
done

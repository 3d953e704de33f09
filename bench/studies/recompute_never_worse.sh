#!/usr/bin/env bash
# recompute_never_worse.sh [HOFFOPT] [GRAPH.json ...]: greedy --recompute
# is never worse than greedy without it, nor than policy checkpoint where
# checkpoint is within the bound (issue #31). On every data/ graph (or
# those given), each planned as written and (REPEAT=1, the default) as a
# FORMAT v2 repeat graph, at the default bound (1% over lower_bound_s):
#   hoffopt --greedy G --json                  (peak P0, makespan M0)
#   hoffopt --greedy G --recompute --json      (P1, M1)
#   hoffopt --policy checkpoint G --json       (PC, MC)
# and prints a markdown table. A row fails when P1 > P0 (same bound), when
# checkpoint is within the bound (MC <= (1.01) lower bound) and P1 > PC,
# or when M1 is over the bound while M0 is not. Exit 0 when no row fails.
# Needs jq. HOFFOPT defaults to build-rel/hoffopt, then build/hoffopt.
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=${1:-}
[ -n "$bin" ] || { [ -x "$root/build-rel/hoffopt" ] && bin=$root/build-rel/hoffopt || bin=$root/build/hoffopt; }
shift || true
graphs=("$@")
[ ${#graphs[@]} -gt 0 ] || graphs=("$root"/data/*.json)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
echo "| graph | form | greedy peak B | greedy --recompute peak B | over bound | checkpoint peak B | checkpoint over bound | winner | ok |"
echo "|---|---|---:|---:|---:|---:|---:|---|---|"
for g in "${graphs[@]}"; do
	case $g in *schedule.json) continue ;; esac
	forms="v1"
	[ "${REPEAT:-1}" = 1 ] && forms="v1 repeat"
	for f in $forms; do
		in=$g
		if [ "$f" = repeat ]; then
			jq '.version=2|.repeat=true' "$g" > "$tmp/r.json" || continue
			in=$tmp/r.json
		fi
		"$bin" --greedy "$in" --json > "$tmp/a.json" 2>/dev/null
		"$bin" --greedy "$in" --recompute --json > "$tmp/b.json" 2> "$tmp/b.err"
		"$bin" --policy checkpoint "$in" --json > "$tmp/c.json" 2>/dev/null
		p0=$(jq -r .peak_bytes "$tmp/a.json" 2>/dev/null)
		p1=$(jq -r .peak_bytes "$tmp/b.json" 2>/dev/null)
		pc=$(jq -r .peak_bytes "$tmp/c.json" 2>/dev/null)
		o0=$(jq -r .overhead_vs_lower_bound "$tmp/a.json" 2>/dev/null)
		o1=$(jq -r .overhead_vs_lower_bound "$tmp/b.json" 2>/dev/null)
		oc=$(jq -r .overhead_vs_lower_bound "$tmp/c.json" 2>/dev/null)
		src=$(jq -r .source "$tmp/b.json" 2>/dev/null)
		ok=yes
		if [ -z "$p1" ] || [ "$p1" = null ] || [ -z "$p0" ] || [ "$p0" = null ]; then
			ok=NO
		else
			[ "$p1" -le "$p0" ] || ok=NO
			if awk -v o="$oc" 'BEGIN{exit !(o <= 0.01 + 1e-12)}'; then
				[ "$p1" -le "$pc" ] || ok=NO
			fi
			if awk -v a="$o0" -v b="$o1" 'BEGIN{exit !(a <= 0.01 + 1e-12 && b > 0.01 + 1e-12)}'; then
				ok=NO
			fi
		fi
		[ "$ok" = yes ] || fail=1
		printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' \
			"$(basename "$g" .json)" "$f" "$p0" "$p1" \
			"$(awk -v o="$o1" 'BEGIN{printf "%+.2f%%", 100*o}')" "$pc" \
			"$(awk -v o="$oc" 'BEGIN{printf "%+.2f%%", 100*o}')" "$src" "$ok"
	done
done
exit $fail

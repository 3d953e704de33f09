#!/usr/bin/env bash
# repeat_valid.sh: every policy on every graph data/regen.sh writes (FORMAT
# v2: train and decode steps are "repeat" graphs, one iteration of a loop;
# tiers with their presets' duplex factors), or on the graphs given.
# Part 1, per graph and policy (none, reactive, lookahead:1, lookahead:2,
# greedy at the default 1%, and checkpoint where the graph has a layer's
# forward and backward): the plan is checked by `hoffopt simulate --json`
# (valid: rules 1-11, so on a repeat graph the state is home at the end,
# rule 9) and its peak and makespan over lower_bound_s are printed.
# Part 2, per graph and baseline: greedy asked for the baseline's own
# makespan overhead (`--max-overhead` = the baseline's makespan over
# lower_bound_s, minus 1) must return a plan simulate calls valid, no
# slower than the baseline, with a peak at most the baseline's (against
# checkpoint, which re-runs ops and greedy does not yet, a higher peak is
# shown, not failed).
# Prints two markdown tables; exits 1 on an invalid plan, a greedy plan
# slower than its baseline or above its peak, or a failed run.
# Usage: bench/studies/repeat_valid.sh [hoffopt] [graph.json ...]
#   (default: build/hoffopt; the graphs of data/ whose version is 2)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
hoff=${1:-$root/build/hoffopt}
shift || true
[ -x "$hoff" ] || { echo "repeat_valid.sh: no hoffopt at $hoff (build first)" >&2; exit 2; }
command -v jq >/dev/null || { echo "repeat_valid.sh: needs jq" >&2; exit 2; }
graphs=("$@")
if [ ${#graphs[@]} -eq 0 ]; then
	for g in "$root"/data/*.json; do
		case $g in *.schedule.json) continue ;; esac
		[ "$(jq '.version' "$g")" = 2 ] && graphs+=("$g")
	done
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
baselines=(none reactive lookahead:1 lookahead:2 checkpoint)

# plan G P OUT [ARGS...]: P's plan of G into OUT.s (its --json report in
# OUT.r, stderr in OUT.e); then simulate's --json report in OUT.v.
plan() {
	local g=$1 p=$2 out=$3
	shift 3
	"$hoff" --policy "$p" "$g" --json -o "$out.s" "$@" >"$out.r" 2>"$out.e" || return 1
	"$hoff" simulate "$g" "$out.s" --json >"$out.v" 2>/dev/null || true
}

# field FILE KEY: a key of a JSON report.
field() { jq -r ".$2" "$1"; }

# over FILE: a report's makespan over the lower bound, in percent.
over() { jq -r '(.makespan_s / .lower_bound_s - 1) * 100 | . * 1000 | round / 1000' "$1"; }

printf '| graph | repeat | policy | simulate | peak B | over bound |\n'
printf '|---|---|---|---|---:|---:|\n'
for g in "${graphs[@]}"; do
	name=$(basename "$g" .json)
	rep=$(jq -r '.repeat // false' "$g")
	for p in "${baselines[@]}" greedy; do
		o=$tmp/$name-${p/:/}
		if ! plan "$g" "$p" "$o"; then
			printf '| %s | %s | %s | FAILED (%s) | | |\n' "$name" "$rep" "$p" "$(head -1 "$o.e")"
			bad=1
			continue
		fi
		if [ "$p" = checkpoint ] && grep -q "planned as none" "$o.e"; then
			rm -f "$o.r" # checkpoint does not apply: no part 2 row
			continue
		fi
		v=$(jq -r 'if .valid then "valid" else "INVALID" end' "$o.v" 2>/dev/null || echo INVALID)
		[ "$v" = valid ] || bad=1
		printf '| %s | %s | %s | %s | %s | %s%% |\n' "$name" "$rep" "$p" "$v" \
			"$(field "$o.v" peak_bytes)" "$(over "$o.v")"
	done
done

printf '\n| graph | baseline | its peak B | its over bound | greedy peak B | greedy over bound | simulate | verdict |\n'
printf '|---|---|---:|---:|---:|---:|---|---|\n'
for g in "${graphs[@]}"; do
	name=$(basename "$g" .json)
	for p in "${baselines[@]}"; do
		o=$tmp/$name-${p/:/}
		[ -f "$o.r" ] || continue
		# the baseline's overhead as hoffopt printed it (%.17g: the
		# double itself; jq would reprint it in 16 digits, a hair
		# under, and the baseline would then miss the bound it sets)
		x=$(grep -o '"overhead_vs_lower_bound": [^,]*' "$o.r" | cut -d' ' -f2)
		bp=$(field "$o.v" peak_bytes)
		bm=$(field "$o.v" makespan_s)
		q=$tmp/$name-greedy-at-${p/:/}
		if ! plan "$g" greedy "$q" --max-overhead "$x"; then
			printf '| %s | %s | %s | %s%% | FAILED (%s) | | | WORSE |\n' "$name" "$p" "$bp" "$(over "$o.v")" "$(head -1 "$q.e")"
			bad=1
			continue
		fi
		v=$(jq -r 'if .valid then "valid" else "INVALID" end' "$q.v" 2>/dev/null || echo INVALID)
		gp=$(field "$q.v" peak_bytes)
		gm=$(field "$q.v" makespan_s)
		verdict=ok
		if [ "$v" != valid ] || [ "$(jq -n "$gm > $bm")" = true ]; then
			verdict=WORSE
			bad=1
		elif [ "$gp" -gt "$bp" ] && [ "$p" = checkpoint ]; then
			# greedy does not recompute yet (issue 31): shown, not failed
			verdict="above (checkpoint recomputes, greedy does not)"
		elif [ "$gp" -gt "$bp" ]; then
			verdict=WORSE
			bad=1
		fi
		printf '| %s | %s | %s | %s%% | %s | %s%% | %s | %s |\n' "$name" "$p" "$bp" \
			"$(over "$o.v")" "$gp" "$(over "$q.v")" "$v" "$verdict"
	done
done
exit $bad

#!/usr/bin/env bash
# same_output.sh OLD_BIN NEW_BIN [GRAPH.json ...]: shows that two hoffopt
# binaries plan alike (a refactor's proof of no behaviour change). On
# every graph of data/ (or those given), for every planner (PLANNERS,
# default: the policies none, reactive, lookahead:2 and greedy, then
# exact), in budget mode (--budget 95%) and in overhead mode (the default
# 1%), both run
#   hoffopt --policy P GRAPH --json -o S --trace T
#   hoffopt --exact GRAPH --time-limit 20 --json --quiet -o S --trace T
# one after the other (never side by side: a time limit is a clock), and
# the schedules, the traces, the exit codes and the --json reports (less
# the timing fields, every key ending in _s that is a wall-clock time:
# solve_s, build_s, prep_s, greedy_s, repair_s, read_s) are compared byte for
# byte; on each small graph (at most SMALL bytes of JSON, default 60000)
# the --write-lp model of both modes too. A pair that differs is run
# again with both: a second pair that agrees (or a second run that
# agrees with the other binary's first) is reported as the same; a
# binary that disagrees with itself as time-dependent (the solver
# stopped on the clock: on a loaded machine a time-limited search ends
# elsewhere), and only a difference both runs repeat as DIFFERENT. Prints one line per case; exit 0 when nothing differs.
# Needs jq. TIME_LIMIT (default 20) and SMALL override the defaults.
# DROP_KEYS: more report keys left out of both (a regex of whole key
# names, e.g. overhead_vs_lower_bound, a field NEW_BIN adds on purpose).
# V1=1 (FORMAT v2's proof of no change for v1): with no graph given, the
# data/ graphs in their version-1 form instead, as NEW_BIN's
# `data/regen.sh --v1` writes them (byte for byte what data/ held before
# v2), and data/tiny.json.
set -u
[ $# -ge 2 ] || {
	echo "usage: $0 OLD_BIN NEW_BIN [GRAPH.json ...]" >&2
	exit 2
}
old=$(realpath "$1")
new=$(realpath "$2")
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
limit=${TIME_LIMIT:-20}
small=${SMALL:-60000}
drop="^(solve|build|prep|greedy|repair|read)_s\$${DROP_KEYS:+|^(${DROP_KEYS})\$}"
# every graph of data/ when none is given (bench/lib/small_graphs.sh, no op cap)
# shellcheck source=lib/small_graphs.sh
MAXOPS=${MAXOPS:-2000000000} . "$root/bench/lib/small_graphs.sh"
split_args "$@"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "${V1:-0}" = 1 ] && ! printf '%s\n' "$@" | grep -q '\.json$'; then
	mkdir -p "$work/v1"
	"$root/data/regen.sh" --v1 "$work/v1" "$new" >/dev/null 2>&1 || {
		echo "$0: data/regen.sh --v1 with $new failed" >&2
		exit 2
	}
	graphs=("$root/data/tiny.json" "$work/v1"/*.json)
fi

planners=(${PLANNERS:-none reactive lookahead:2 greedy exact})

# run BIN DIR GRAPH PLANNER MODE_ARGS...: one run's outputs into DIR.
run() {
	local bin=$1 dir=$2 g=$3 planner=$4
	shift 4
	mkdir -p "$dir"
	local how=(--policy "$planner" "$g")
	if [ "$planner" = exact ]; then
		how=(--exact "$g" --time-limit "$limit" --quiet)
		[ "$(stat -c %s "$g")" -le "$small" ] &&
			how+=(--write-lp "$dir/model.lp")
	fi
	"$bin" "${how[@]}" --json \
		-o "$dir/schedule.json" --trace "$dir/trace.json" \
		"$@" >"$dir/report.raw" 2>/dev/null
	echo $? >"$dir/rc"
	# timing fields out; anything else stays, in its order
	jq -S --arg drop "$drop" 'walk(if type == "object" then
		with_entries(select(.key | test($drop) | not))
		else . end)' "$dir/report.raw" >"$dir/report.json" 2>/dev/null ||
		cp "$dir/report.raw" "$dir/report.json"
	rm -f "$dir/report.raw"
}

# same A B: the outputs of two runs are byte-identical.
same() {
	diff -r -q "$1" "$2" >/dev/null
}

# what A B: the files of two runs that differ, and for report.json the
# keys (a.b.c) whose values differ.
what() {
	local f out=""
	for f in $(cd "$1" && ls); do
		cmp -s "$1/$f" "$2/$f" && continue
		out+="$f "
	done
	if ! cmp -s "$1/report.json" "$2/report.json"; then
		local q='paths(scalars) as $p | {($p | map(tostring) | join(".")): getpath($p)}'
		out+="(keys: $(diff <(jq -c "$q" "$1/report.json" 2>/dev/null) \
			<(jq -c "$q" "$2/report.json" 2>/dev/null) |
			sed -n 's/^[<>] {"\([^"]*\)".*/\1/p' | sort -u |
			tr '\n' ' ' | sed 's/ $//'))"
	fi
	echo "$out"
}

fail=0
n=0
for g in "${graphs[@]}"; do
  for planner in "${planners[@]}"; do
	name="$(basename "$g" .json) $planner"
	for mode in budget overhead; do
		args=()
		[ $mode = budget ] && args=(--budget 95%)
		d=$work/$(basename "$g" .json)-${planner/:/}-$mode
		run "$old" "$d/old" "$g" "$planner" "${args[@]}"
		run "$new" "$d/new" "$g" "$planner" "${args[@]}"
		n=$((n + 1))
		files=$(cd "$d/old" && ls | tr '\n' ' ')
		if same "$d/old" "$d/new"; then
			echo "same       $name $mode ($files)"
			continue
		fi
		# a second run of each: a binary that disagrees with itself
		# stopped on the clock somewhere
		run "$old" "$d/old2" "$g" "$planner" "${args[@]}"
		run "$new" "$d/new2" "$g" "$planner" "${args[@]}"
		if same "$d/old2" "$d/new2" || same "$d/old" "$d/new2" ||
			same "$d/old2" "$d/new"; then
			echo "same       $name $mode (on the second run)"
			continue
		fi
		if ! same "$d/old" "$d/old2" || ! same "$d/new" "$d/new2"; then
			echo "time-dep   $name $mode (OLD_BIN's two runs differ in: $(what "$d/old" "$d/old2"); NEW_BIN's in: $(what "$d/new" "$d/new2"); OLD_BIN and NEW_BIN in: $(what "$d/old" "$d/new"))"
			continue
		fi
		echo "DIFFERENT  $name $mode: $(what "$d/old" "$d/new")"
		fail=1
	done
  done
done
echo "$n cases, $([ $fail = 0 ] && echo 'no difference' || echo 'DIFFERENCES')"
exit $fail

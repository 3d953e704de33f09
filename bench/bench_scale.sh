#!/usr/bin/env bash
# bench_scale.sh: the foundation benchmark — does hoffopt read, analyse and
# simulate million-op graphs fast and in little memory? Builds a Release
# tree in build-bench/, generates synthetic graphs with hoff-gen-synth in a
# temporary directory, times `hoffopt analyze` and `hoffopt simulate` (with
# a no-offload schedule) under GNU time, prints a markdown table and writes
# it as JSON to bench/results/. Targets: 1M ops read+analyze+simulate under
# 3 s and under 2 GiB; greedy on 1M ops under 5 s.
# Usage: bench/bench_scale.sh [N ...]   (default 10000 100000 1000000)
# Env: SHAPE (train|infer, default train), HOME_OF_WEIGHTS (device|host),
#      SEED (default 1), REPS (greedy runs per size, median reported,
#      default 3), JOBS (build parallelism).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000 1000000)
shape=${SHAPE:-train}
whome=${HOME_OF_WEIGHTS:-device}
seed=${SEED:-1}
reps=${REPS:-3}

tests/deps.sh time
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DHOFF_SANITIZE=OFF \
	-DHOFF_WERROR=OFF -DBUILD_TESTING=OFF >/dev/null
cmake --build build-bench -j "${JOBS:-$(nproc)}" --target hoffopt hoff-gen-synth >/dev/null
hoffopt=$root/build-bench/hoffopt
gen=$root/build-bench/hoff-gen-synth

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hoff-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# measure NAME CMD...: runs CMD with stdout to $tmp/NAME.out; sets
# secs and rss_mib (GNU time: elapsed, max RSS); ok=0 when CMD failed.
measure() {
	local name=$1
	shift
	ok=1
	if ! /usr/bin/time -f '%e %M' -o "$tmp/$name.time" "$@" \
		>"$tmp/$name.out" 2>"$tmp/$name.err"; then
		ok=0
		echo "bench_scale: '$*' failed:" >&2
		grep -v '^Command exited' "$tmp/$name.err" | tail -3 >&2 || true
	fi
	read -r secs kib < <(tail -1 "$tmp/$name.time")
	rss_mib=$(awk -v k="$kib" 'BEGIN { printf "%.1f", k / 1024 }')
}

json_rows=()
failed=0
target_line="target: no 1M-op run"
printf '| ops | file MB | generate s | analyze s | read+analyze+simulate s | RSS MiB | greedy solve s | greedy total s | greedy RSS MiB |\n'
printf '|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for n in "${sizes[@]}"; do
	g=$tmp/g$n.json
	s=$tmp/s$n.json
	measure gen "$gen" --ops "$n" --shape "$shape" --home "$whome" \
		--seed "$seed" -o "$g"
	[ "$ok" = 1 ] || { failed=1; continue; }
	gen_s=$secs gen_rss=$rss_mib
	mb=$(awk -v b="$(stat -c %s "$g")" 'BEGIN { printf "%.1f", b / 1e6 }')
	# The no-offload schedule (tier-homed tensors fetched before use).
	"$hoffopt" --policy none "$g" -o "$s" >/dev/null
	measure analyze "$hoffopt" analyze "$g" --json
	an_ok=$ok an_s=$secs an_rss=$rss_mib
	measure simulate "$hoffopt" simulate "$g" "$s" --json
	si_ok=$ok si_s=$secs si_rss=$rss_mib
	# Greedy: the median of $reps runs (this machine's timings wander
	# by a second on a million ops), with that run's solve time.
	runs=()
	gr_ok=1
	for ((r = 0; r < reps; r++)); do
		measure greedy "$hoffopt" --greedy "$g" --json
		[ "$ok" = 1 ] || gr_ok=0
		solve=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["solve_s"])' "$tmp/greedy.out" 2>/dev/null || echo nan)
		runs+=("$secs $solve $rss_mib")
	done
	read -r gr_s gr_solve gr_rss < <(printf '%s\n' "${runs[@]}" | sort -g |
		sed -n "$(((reps + 1) / 2))p")
	[ "$an_ok" = 1 ] && [ "$si_ok" = 1 ] && [ "$gr_ok" = 1 ] || failed=1
	max_rss=$(awk -v a="$an_rss" -v b="$si_rss" \
		'BEGIN { printf "%.1f", (a + 0 > b + 0) ? a : b }')
	printf '| %d | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$n" "$mb" \
		"$gen_s" "$an_s" "$si_s" "$max_rss" "$gr_solve" "$gr_s" "$gr_rss"
	json_rows+=("$(printf '{"ops":%d,"file_mb":%s,"generate_s":%s,"generate_rss_mib":%s,"analyze_s":%s,"analyze_ok":%s,"simulate_s":%s,"simulate_ok":%s,"max_rss_mib":%s}' \
		"$n" "$mb" "$gen_s" "$gen_rss" "$an_s" \
		"$([ "$an_ok" = 1 ] && echo true || echo false)" "$si_s" \
		"$([ "$si_ok" = 1 ] && echo true || echo false)" "$max_rss")")
	json_rows[-1]="${json_rows[-1]%\}},\"greedy_solve_s\":$gr_solve,\"greedy_s\":$gr_s,\"greedy_rss_mib\":$gr_rss}"
	if [ "$n" = 1000000 ]; then
		# `simulate` reads graph and schedule, analyses (lower bound)
		# and simulates: the whole pipeline in one process.
		verdict=$(awk -v b="$si_s" -v r="$si_rss" \
			-v ok="$si_ok" 'BEGIN {
			t = b
			pass = ok == "1" && t < 3 && r < 2048
			printf "%.2f s (< 3 s) and %.1f MiB (< 2048 MiB): %s",
				t, r, pass ? "PASS" : "FAIL" }')
		target_line="target: 1M ops read+analyze+simulate $verdict"
		gverdict=$(awk -v t="$gr_s" -v ok="$gr_ok" -v k="$reps" 'BEGIN {
			printf "%.2f s, median of %d (< 5 s): %s", t, k,
				ok == "1" && t < 5 ? "PASS" : "FAIL" }')
		target_line="$target_line; greedy on 1M ops $gverdict"
	fi
done
echo
echo "$target_line"

mkdir -p bench/results
out=bench/results/scale-$(date -u +%Y%m%dT%H%M%SZ).json
{
	printf '{"bench":"scale","shape":"%s","home":"%s","seed":%s,' \
		"$shape" "$whome" "$seed"
	printf '"commit":"%s","host":"%s","cpus":%s,' \
		"$(git rev-parse --short HEAD 2>/dev/null || echo none)" \
		"$(uname -n)" "$(nproc)"
	printf '"target":"%s","rows":[' "$target_line"
	(IFS=,; printf '%s' "${json_rows[*]}")
	printf ']}\n'
} >"$out"
echo "wrote $out"
exit "$failed"

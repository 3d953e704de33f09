#!/usr/bin/env bash
# bench_scale.sh: the foundation benchmark — does hoffopt read, analyse and
# simulate million-op graphs fast and in little memory? Builds a Release
# tree in build-bench/, generates synthetic graphs with hoff-gen-synth in a
# temporary directory, times `hoffopt analyze` and `hoffopt simulate` (with
# a no-offload schedule) under GNU time, prints a markdown table and writes
# it as JSON to bench/results/. Targets: 1M ops read+analyze+simulate under
# 3 s and under 2 GiB; greedy on 1M ops under 5 s, on that graph and on a
# second one: weights and optimizer state on the host, the device's memory
# 1/100 of the no-offload peak (nothing fits it: greedy must find that out
# cheaply, exit 1 and say why). Greedy's rows give the median of REPS runs
# and that run's user+sys CPU seconds (less sensitive to a loaded machine
# than the wall clock); the load average is printed beside them.
# Usage: bench/bench_scale.sh [N ...]   (default 10000 100000 1000000)
# Env: SHAPE (train|infer, default train), HOME_OF_WEIGHTS (device|host),
#      SEED (default 1), REPS (greedy runs per size, median reported,
#      default 3), HOST100 (0: skip the host-homed 1/100 graph; default
#      1), DEAD_END (0: skip the no-dead-end graph; default 1), JOBS
#      (build parallelism), RECOMPUTE (0: skip greedy --recompute on
#      each size's graph and on a graph where recomputation pays, one
#      training step of N/15 layers at --tokens 8192; default 1; target
#      on 1M ops, that graph: under twice greedy's own median time,
#      wall and user+sys).
# The no-dead-end graph (issue 33): weights and optimizer state on the
# host, N/10 layers (at most 65536, hoff-gen-synth's limit), the device at
# 80 GiB (85.9 GB). No plan within the overhead bound fits the device, the
# baselines do: greedy must return the fastest plan found that fits (exit
# 0, with a warning), never exit 1; target on 1M ops: under 5 s.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000 1000000)
shape=${SHAPE:-train}
whome=${HOME_OF_WEIGHTS:-device}
seed=${SEED:-1}
reps=${REPS:-3}
host100=${HOST100:-1}
dead_end=${DEAD_END:-1}
dead_rows=()
rc_rows=()

tests/deps.sh time
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DHOFF_SANITIZE=OFF \
	-DHOFF_WERROR=OFF -DBUILD_TESTING=OFF >/dev/null
cmake --build build-bench -j "${JOBS:-$(nproc)}" --target hoffopt hoff-gen-synth >/dev/null
hoffopt=$root/build-bench/hoffopt
gen=$root/build-bench/hoff-gen-synth

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hoff-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# measure NAME CMD...: runs CMD with stdout to $tmp/NAME.out; sets
# secs, cpu (user+sys s) and rss_mib (GNU time: elapsed, max RSS); ok=0
# when CMD failed (exit status other than $want_rc, default 0).
measure() {
	local name=$1 rc=0
	shift
	ok=1
	/usr/bin/time -f '%e %M %U %S' -o "$tmp/$name.time" "$@" \
		>"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
	if [ "$rc" != "${want_rc:-0}" ]; then
		ok=0
		echo "bench_scale: '$*' failed (exit $rc):" >&2
		grep -v '^Command exited' "$tmp/$name.err" | tail -3 >&2 || true
	fi
	read -r secs kib usr sys < <(tail -1 "$tmp/$name.time")
	cpu=$(awk -v u="$usr" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
	rss_mib=$(awk -v k="$kib" 'BEGIN { printf "%.1f", k / 1024 }')
}

# greedy_median GRAPH [ARGS...]: REPS runs of greedy (with ARGS); sets
# gr_s, gr_solve, gr_cpu, gr_rss (the median run's) and gr_ok.
greedy_median() {
	local runs=() r solve
	gr_ok=1
	for ((r = 0; r < reps; r++)); do
		measure greedy "$hoffopt" --greedy "$1" --json "${@:2}"
		[ "$ok" = 1 ] || gr_ok=0
		solve=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["solve_s"])' "$tmp/greedy.out" 2>/dev/null || echo nan)
		runs+=("$secs $solve $cpu $rss_mib")
	done
	read -r gr_s gr_solve gr_cpu gr_rss < <(printf '%s\n' "${runs[@]}" |
		sort -g | sed -n "$(((reps + 1) / 2))p")
}

load() { cut -d' ' -f1-3 /proc/loadavg; }

# peak_of FILE: the peak_bytes of a --json report (nan if none).
peak_of() {
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["peak_bytes"])' "$1" 2>/dev/null || echo nan
}

# greedy_verdict SECS OK CPU: a greedy row's 1M-op verdict (median of
# REPS runs under 5 s, exit 0): "S s (user+sys C s), median of K (< 5 s):
# PASS" or FAIL.
greedy_verdict() {
	awk -v t="$1" -v ok="$2" -v k="$reps" -v c="$3" 'BEGIN {
	printf "%.2f s (user+sys %.2f s), median of %d (< 5 s): %s",
		t, c, k, ok == "1" && t < 5 ? "PASS" : "FAIL" }'
}

json_rows=()
failed=0
target_line="target: no 1M-op run"
host_rows=()
printf '| ops | file MB | generate s | analyze s | read+analyze+simulate s | RSS MiB | greedy solve s | greedy total s | greedy user+sys s | greedy RSS MiB | load |\n'
printf '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n'
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
	greedy_median "$g"
	gr_load=$(load)
	[ "$an_ok" = 1 ] && [ "$si_ok" = 1 ] && [ "$gr_ok" = 1 ] || failed=1
	max_rss=$(awk -v a="$an_rss" -v b="$si_rss" \
		'BEGIN { printf "%.1f", (a + 0 > b + 0) ? a : b }')
	printf '| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' \
		"$n" "$mb" "$gen_s" "$an_s" "$si_s" "$max_rss" "$gr_solve" \
		"$gr_s" "$gr_cpu" "$gr_rss" "$gr_load"
	json_rows+=("$(printf '{"ops":%d,"file_mb":%s,"generate_s":%s,"generate_rss_mib":%s,"analyze_s":%s,"analyze_ok":%s,"simulate_s":%s,"simulate_ok":%s,"max_rss_mib":%s}' \
		"$n" "$mb" "$gen_s" "$gen_rss" "$an_s" \
		"$([ "$an_ok" = 1 ] && echo true || echo false)" "$si_s" \
		"$([ "$si_ok" = 1 ] && echo true || echo false)" "$max_rss")")
	json_rows[-1]="${json_rows[-1]%\}},\"greedy_solve_s\":$gr_solve,\"greedy_s\":$gr_s,\"greedy_cpu_s\":$gr_cpu,\"greedy_rss_mib\":$gr_rss,\"load\":\"$gr_load\"}"
	g1_s=$gr_s g1_ok=$gr_ok g1_cpu=$gr_cpu
	cp "$tmp/greedy.out" "$tmp/greedy.g1"
	if [ "${RECOMPUTE:-1}" = 1 ]; then
		# On this graph and on one where recomputation pays (one
		# training step, N/15 layers, microbatch 8192: the optimizer
		# state's trip fills the link, the compute stream idles).
		rl=$((n / 15 < 65536 ? n / 15 : 65536))
		[ "$rl" -ge 1 ] || rl=1
		rg=$tmp/r$n.json
		"$gen" --ops "$n" --shape train --seed "$seed" --layers "$rl" \
			--tokens 8192 -o "$rg"
		for which in train recompute; do
			if [ "$which" = train ]; then
				ga=$g1_s gc=$g1_cpu gp=$(peak_of "$tmp/greedy.g1")
				wg=$g
			else
				wg=$rg
				greedy_median "$wg"
				ga=$gr_s gc=$gr_cpu gp=$(peak_of "$tmp/greedy.out")
			fi
			greedy_median "$wg" --recompute
			rp=$(peak_of "$tmp/greedy.out")
			rsrc=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["source"])' "$tmp/greedy.out" 2>/dev/null || echo none)
			rc_rows+=("$(awk -v n="$n" -v w="$which" -v a="$ga" -v ac="$gc" \
				-v b="$gr_s" -v bc="$gr_cpu" -v ok="$gr_ok" -v l="$(load)" \
				-v gp="$gp" -v rp="$rp" -v src="$rsrc" \
				'BEGIN { printf "| %d | %s | %.2f | %.2f | %.2f | %.2f | %.2fx | %.2fx | %s | %s | %s | %s | %s |",
					n, w, a, ac, b, bc, b / a, bc / ac, gp, rp, src, ok == "1" ? "yes" : "NO", l }')")
			if [ "$n" = 1000000 ] && [ "$which" = recompute ]; then
				rc_target=$(awk -v a="$ga" -v ac="$gc" -v b="$gr_s" \
					-v bc="$gr_cpu" -v ok="$gr_ok" -v src="$rsrc" 'BEGIN {
					pass = ok == "1" && b < 2 * a && bc < 2 * ac
					printf "greedy --recompute on 1M ops where it pays: %.2fx wall, %.2fx user+sys of greedy, plan %s (< 2x): %s",
						b / a, bc / ac, src, pass ? "PASS" : "FAIL" }')
			fi
		done
		rm -f "$rg"
	fi
	rm -f "$g" "$s"
	if [ "$host100" = 1 ]; then
		# Weights and optimizer state on the host, the device 1/100 of
		# the no-offload peak: nothing fits (one op's operands alone
		# exceed it), so greedy exits 1 saying so; that is its answer.
		hg=$tmp/h$n.json
		"$gen" --ops "$n" --shape train --home host --seed "$seed" -o "$hg"
		peak=$("$hoffopt" analyze "$hg" --json | python3 -c \
			'import json,sys; print(json.load(sys.stdin)["no_offload"]["peak_bytes"])')
		mem=$((peak / 100))
		"$gen" --ops "$n" --shape train --home host --seed "$seed" \
			--memory "$mem" -o "$hg"
		want_rc=1 greedy_median "$hg"
		h_load=$(load)
		h_peak=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["peak_bytes"])' "$tmp/greedy.out" 2>/dev/null || echo nan)
		h_why=$(grep -o 'none can: op "[^"]*" alone needs [0-9]* B' \
			"$tmp/greedy.err" | head -1 || true)
		[ -n "$h_why" ] || gr_ok=0
		[ "$gr_ok" = 1 ] || failed=1
		host_rows+=("$(printf '| %d | %s | %s | %s | %s | %s | %s | %s | %s |' \
			"$n" "$peak" "$mem" "$gr_solve" "$gr_s" "$gr_cpu" \
			"$gr_rss" "${h_why:-FAILED}" "$h_load")")
		json_rows[-1]="${json_rows[-1]%\}},\"host100\":{\"none_peak_bytes\":$peak,\"memory_bytes\":$mem,\"greedy_solve_s\":$gr_solve,\"greedy_s\":$gr_s,\"greedy_cpu_s\":$gr_cpu,\"greedy_rss_mib\":$gr_rss,\"greedy_peak_bytes\":$h_peak,\"ok\":$([ "$gr_ok" = 1 ] && echo true || echo false),\"load\":\"$h_load\"}}"
		rm -f "$hg"
	fi
	if [ "$dead_end" = 1 ]; then
		dg=$tmp/d$n.json
		layers=$((n / 10 < 65536 ? n / 10 : 65536))
		[ "$layers" -ge 1 ] || layers=1
		"$gen" --ops "$n" --shape train --home host --seed "$seed" \
			--layers "$layers" --memory 80G -o "$dg"
		greedy_median "$dg"
		d_load=$(load)
		read -r d_peak d_valid d_mem d_src < <(python3 -c '
import json,sys
d = json.load(open(sys.argv[1]))
print(d["peak_bytes"], str(d["valid"]).lower(), d["device_memory_bytes"], d["source"])' \
			"$tmp/greedy.out" 2>/dev/null || echo "nan false 0 none")
		d_fits=false
		[ "$gr_ok" = 1 ] && [ "$d_valid" = true ] && [ "$d_peak" != nan ] &&
			[ "$d_peak" -le "$d_mem" ] && d_fits=true
		[ "$d_fits" = true ] || failed=1
		dead_rows+=("$(printf '| %d | %d | %s | %s | %s | %s | %s | %s | %s |' \
			"$n" "$layers" "$d_peak" "$d_fits" "$d_src" "$gr_solve" \
			"$gr_s" "$gr_cpu" "$d_load")")
		json_rows[-1]="${json_rows[-1]%\}},\"dead_end\":{\"layers\":$layers,\"memory_bytes\":85899345920,\"greedy_peak_bytes\":$d_peak,\"fits\":$d_fits,\"source\":\"$d_src\",\"greedy_solve_s\":$gr_solve,\"greedy_s\":$gr_s,\"greedy_cpu_s\":$gr_cpu,\"load\":\"$d_load\"}}"
		d1_s=$gr_s d1_cpu=$gr_cpu d1_fits=$d_fits
		rm -f "$dg"
	fi
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
		gverdict=$(greedy_verdict "$g1_s" "$g1_ok" "$g1_cpu")
		target_line="$target_line; greedy on 1M ops $gverdict"
		if [ "$host100" = 1 ]; then
			hverdict=$(greedy_verdict "$gr_s" "$gr_ok" "$gr_cpu")
			target_line="$target_line; greedy on 1M ops host-homed at 1/100: $hverdict"
		fi
		if [ "$dead_end" = 1 ]; then
			dverdict=$(awk -v t="$d1_s" -v f="$d1_fits" -v k="$reps" \
				-v c="$d1_cpu" 'BEGIN {
				printf "%.2f s (user+sys %.2f s), median of %d, fits: %s (< 5 s and fits): %s",
					t, c, k, f, f == "true" && t < 5 ? "PASS" : "FAIL" }')
			target_line="$target_line; no dead end on 1M ops host-homed at 80 GiB: $dverdict"
		fi
	fi
done
if [ ${#host_rows[@]} -gt 0 ]; then
	echo
	echo "Weights and optimizer state on the host, device memory 1/100 of the no-offload peak (greedy exits 1: nothing fits):"
	echo
	printf '| ops | no-offload peak B | device B | greedy solve s | greedy total s | greedy user+sys s | greedy RSS MiB | why nothing fits | load |\n'
	printf '|---:|---:|---:|---:|---:|---:|---:|---|---|\n'
	printf '%s\n' "${host_rows[@]}"
fi
if [ ${#rc_rows[@]} -gt 0 ]; then
	echo
	echo "greedy --recompute (issue 31; target on 1M ops, the recompute graph: under 2x greedy's own time), on the training graph above and on the recompute graph (--layers N/15 --tokens 8192: one training step whose optimizer state fills the link); plan: the --recompute run's winner:"
	echo
	printf '| ops | graph | greedy s | greedy user+sys s | --recompute s | --recompute user+sys s | wall ratio | user+sys ratio | greedy peak B | --recompute peak B | plan | exit 0 | load |\n'
	printf '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|\n'
	printf '%s\n' "${rc_rows[@]}"
fi
if [ ${#dead_rows[@]} -gt 0 ]; then
	echo
	echo "No dead end: weights and optimizer state on the host, N/10 layers (at most 65536), the device at 80 GiB (no plan within the bound fits; greedy returns the fastest that does):"
	echo
	printf '| ops | layers | greedy peak B | fits | source | greedy solve s | greedy total s | greedy user+sys s | load |\n'
	printf '|---:|---:|---:|---|---|---:|---:|---:|---|\n'
	printf '%s\n' "${dead_rows[@]}"
fi
[ -z "${rc_target:-}" ] || target_line="$target_line; $rc_target"
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

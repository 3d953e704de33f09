#!/usr/bin/env bash
# exec_drops.sh: how many races made by dropping one wait --verify catches
# on the CPU backend. For every graph and policy: plan; count the plan's
# waits (`run --check-plan --no-run`); for a sample of them (all when
# there are at most SAMPLE, else SAMPLE evenly spaced), ask the checker
# whether dropping it makes a race; for each race, run
# `run --verify --drop-wait N` (graph scaled: sizes to at most MAX_BYTES,
# times so the mean op lasts at least MIN_OP_S). A race --verify misses is
# run again with the racing transfer 4x slower (--slow-step): caught then,
# the run's timing had ordered the pair (the dropped wait never bound on
# the plan's own durations); still missed, its measured trace says whether
# the two racing commands overlapped at all (apart: timing ordered them,
# the gap is printed; overlapped: a real miss of --verify).
# Prints a markdown table and the totals.
# Usage: bench/studies/exec_drops.sh [GRAPH ...]  (default: the small data/ graphs)
# Env: POLICIES (default "reactive lookahead:1 greedy"), SAMPLE (default
#      12), MAX_BYTES (default 67108864), MIN_OP_S (default 0.0005),
#      HOFFOPT (default build-exec/hoffopt, built if absent).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
policies=(${POLICIES:-reactive lookahead:1 greedy})
sample=${SAMPLE:-12}
max_bytes=${MAX_BYTES:-67108864}
min_op_s=${MIN_OP_S:-0.0005}

tests/deps.sh jq
hoffopt=${HOFFOPT:-$root/build-exec/hoffopt}
if [ ! -x "$hoffopt" ]; then
	cmake -S . -B build-exec -DCMAKE_BUILD_TYPE=Release -DHOFF_SANITIZE=OFF \
		-DHOFF_WERROR=OFF -DBUILD_TESTING=OFF >/dev/null
	cmake --build build-exec -j "${JOBS:-2}" --target hoffopt >/dev/null
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hoff-drops.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

graphs=("$@")
[ ${#graphs[@]} -gt 0 ] || graphs=(data/tiny.json data/llama3-8b-decode-2l.json
	data/llama3-8b-prefill-2l.json data/llama3-8b-train-2l.json
	data/mixtral-8x7b-decode-2l.json data/deepseek-v3-decode-4l.json)

# The racing pair's steps from the checker's message; their measured
# intervals from a trace: "apart G s" or "overlapped".
pair_gap() { # race-message trace
	/usr/bin/python3 - "$1" "$2" <<'EOF'
import json, re, sys
steps = [int(x) for x in re.findall(r"steps\[(\d+)\]", open(sys.argv[1]).read())[:2]]
t = json.load(open(sys.argv[2]))
ev = t["traceEvents"] if isinstance(t, dict) else t
iv = {}
for e in ev:
    st = e.get("args", {}).get("step")
    if e.get("ph") == "X" and e.get("cat") != "stall" and st in steps:
        iv[st] = (e["ts"], e["ts"] + e["dur"])
if len(iv) < 2:
    print("unknown")
else:
    (a0, a1), (b0, b1) = sorted(iv.values())
    print("overlapped" if b0 < a1 else "apart %.3g s" % ((b0 - a1) * 1e-6))
EOF
}

tot_s=0 tot_r=0 tot_c=0 tot_t=0 tot_m=0 tot_a=0
echo "| graph | policy | waits | sampled | races | caught by --verify | caught once slowed | missed |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for g in "${graphs[@]}"; do
	name=$(basename "$g" .json)
	read -r total mean_op < <("$hoffopt" analyze "$g" --json |
		jq -r '"\([.bytes_by_kind[]] | add) \(if .ops > 0 then .compute_s / .ops else 0 end)"')
	sk=$(jq -n --argjson b "$max_bytes" --argjson n "$total" \
		'if $n > $b then $b / $n else 1 end')
	tk=$(jq -n --argjson m "$min_op_s" --argjson o "$mean_op" \
		'if $o > 0 and $o < $m then $m / $o else 1 end')
	scale=(--time-scale "$tk" --size-scale "$sk")
	for p in "${policies[@]}"; do
		s=$tmp/s.json
		"$hoffopt" --policy "$p" "$g" -o "$s" >/dev/null 2>&1 || continue
		nw=$("$hoffopt" run "$g" "$s" "${scale[@]}" --check-plan --no-run |
			sed -n 's/.*, \([0-9]*\) waits.*/\1/p')
		[ -n "$nw" ] || continue
		ns=0 nr=0 nc=0 nt=0 nm=0
		step=1
		[ "$nw" -gt "$sample" ] && step=$(((nw + sample - 1) / sample))
		for ((w = 0; w < nw; w += step)); do
			ns=$((ns + 1))
			"$hoffopt" run "$g" "$s" "${scale[@]}" --check-plan --no-run \
				--drop-wait $w >/dev/null 2>"$tmp/race"
			[ $? -eq 1 ] || continue
			nr=$((nr + 1))
			if ! "$hoffopt" run "$g" "$s" "${scale[@]}" --verify \
				--drop-wait $w >/dev/null 2>&1; then
				nc=$((nc + 1))
				continue
			fi
			# The racing transfer: the first "steps[N] prefetch|store".
			xs=$(grep -o 'steps\[[0-9]*\] \(prefetch\|store\)' "$tmp/race" |
				head -1 | sed 's/steps\[\([0-9]*\)\].*/\1/')
			if [ -n "$xs" ] && ! "$hoffopt" run "$g" "$s" "${scale[@]}" \
				--verify --drop-wait $w --slow-step "$xs" >/dev/null 2>&1; then
				nt=$((nt + 1))
			else
				nm=$((nm + 1))
				"$hoffopt" run "$g" "$s" "${scale[@]}" --verify \
					--drop-wait $w --trace "$tmp/trace.json" \
					>/dev/null 2>&1
				gap=$(pair_gap "$tmp/race" "$tmp/trace.json")
				case $gap in apart*) tot_a=$((tot_a + 1)) ;; esac
				echo "  missed ($gap): $name $p wait $w: $(sed 's/^[^:]*: race: //' "$tmp/race")" >&2
			fi
		done
		echo "| $name | $p | $nw | $ns | $nr | $nc | $nt | $nm |"
		tot_s=$((tot_s + ns)) tot_r=$((tot_r + nr)) tot_c=$((tot_c + nc))
		tot_t=$((tot_t + nt)) tot_m=$((tot_m + nm))
	done
done
echo
echo "sampled $tot_s dropped waits: $tot_r make a race; --verify catches $tot_c;" \
	"$tot_t more once the racing transfer runs 4x slower (the plan's timing" \
	"had ordered them); $tot_m missed, $tot_a of them with the racing" \
	"commands apart in the measured run (timing ordered them)"

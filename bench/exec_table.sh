#!/usr/bin/env bash
# exec_table.sh: the CPU executor against the simulator, for the README.
# For every graph and policy: plan, then `hoffopt run --backend cpu` with
# the graph scaled to this machine (sizes so that arena and host copies
# stay under MAX_BYTES; times so that the predicted makespan is about
# TARGET_S, but never shorter than at real size, and with ops of MIN_OP_S
# on average at least: the emulator keeps time only while commands outlast
# its threads' wake-ups, ~0.1 ms). Prints a
# markdown table: predicted and measured makespan (the median of REPEAT
# runs), the error, the simulator's peak, the measured peak (bytes live at
# once on the measured timeline) and the arena (the real footprint,
# fragmentation included; offsets are planned, so measured and planned are
# one number). Each schedule also runs once with --verify (its checks cost
# the threads time, so it is not timed). Target: every error within 10%,
# every schedule verified.
# Usage: bench/exec_table.sh [GRAPH ...]
#        (default: the graphs in data/, else a generated set)
# Env: POLICIES (default "greedy reactive lookahead:1"), MAX_BYTES
#      (default 268435456), TARGET_S (default 0.25), MIN_OP_S (default
#      0.0002), REPEAT (default 3),
#      HOFFOPT (a built binary; default: a Release build in build-exec/),
#      JOBS. Writes the rows as JSON to bench/results/exec-<time>.json.
# Exits 1 when a run fails, does not verify, or misses the target.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
policies=(${POLICIES:-greedy reactive lookahead:1})
max_bytes=${MAX_BYTES:-268435456}
target_s=${TARGET_S:-0.25}
repeat=${REPEAT:-3}
min_op_s=${MIN_OP_S:-0.0002}

tests/deps.sh jq
if [ -n "${HOFFOPT:-}" ]; then
	hoffopt=$HOFFOPT
else
	cmake -S . -B build-exec -DCMAKE_BUILD_TYPE=Release -DHOFF_SANITIZE=OFF \
		-DHOFF_WERROR=OFF -DBUILD_TESTING=OFF >/dev/null
	cmake --build build-exec -j "${JOBS:-$(nproc)}" --target hoffopt >/dev/null
	hoffopt=$root/build-exec/hoffopt
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hoff-exec.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

graphs=("$@")
if [ ${#graphs[@]} -eq 0 ]; then
	shopt -s nullglob
	for f in data/*.json; do # graphs only, not schedules beside them
		[ "$(jq -r .format "$f" 2>/dev/null)" = hoffopt.graph ] &&
			graphs+=("$f")
	done
	shopt -u nullglob
fi
if [ ${#graphs[@]} -eq 0 ]; then
	# No data/ graphs: two-layer model graphs whose weights live on the
	# host (decode, prefill) and a training step (weights on the device,
	# optimizer state and activations moved by the policies).
	for spec in "llama3-8b decode host" "llama3-8b prefill host" \
		"mixtral-8x7b decode host" "llama3-8b train auto"; do
		set -- $spec
		g=$tmp/$1-$2.json
		"$hoffopt" gen "$1" --phase "$2" --layers 2 --seq 1024 \
			--weights "$3" -o "$g"
		graphs+=("$g")
	done
fi

rows=()
failed=0 nrows=0 nclose=0 npeak=0 nver=0
printf '| graph | policy | time x | size x | predicted makespan s | measured s | error %% | predicted peak B | measured peak B | arena B | verified |\n'
printf '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n'
for g in "${graphs[@]}"; do
	name=$(jq -r '.name // empty' "$g")
	[ -n "$name" ] || name=$(basename "$g" .json)
	read -r total mean_op < <("$hoffopt" analyze "$g" --json |
		jq -r '"\([.bytes_by_kind[]] | add) \(if .ops > 0 then .compute_s / .ops else 0 end)"')
	for p in "${policies[@]}"; do
		s=$tmp/s.json
		if ! "$hoffopt" --policy "$p" "$g" -o "$s" --json >"$tmp/plan.json" \
			2>"$tmp/plan.err"; then
			echo "exec_table: $name $p: planning failed: $(tail -1 "$tmp/plan.err")" >&2
			continue
		fi
		read -r span peak < <(jq -r '"\(.makespan_s) \(.peak_bytes)"' \
			"$tmp/plan.json")
		# Host copies are at most the graph's bytes; the arena about
		# the peak (fragmentation aside).
		read -r tk sk < <(awk -v t="$target_s" -v m="$span" \
			-v b="$max_bytes" -v n="$total" -v pk="$peak" \
			-v op="$mean_op" -v mo="$min_op_s" 'BEGIN {
			tk = m > 0 ? t / m : 1; if (tk < 1) tk = 1
			if (op > 0 && tk * op < mo) tk = mo / op
			sk = b / (n + pk); if (sk > 1) sk = 1
			printf "%.3g %.3g\n", tk, sk }')
		# Timing: the median of REPEAT runs by makespan; integrity: one
		# more run with --verify (its checks cost the threads time).
		ok=1
		: >"$tmp/runs.json"
		for ((i = 0; i < repeat; i++)); do
			if ! "$hoffopt" run "$g" "$s" --backend cpu --json \
				--time-scale "$tk" --size-scale "$sk" \
				>>"$tmp/runs.json" 2>"$tmp/run.err"; then
				echo "exec_table: $name $p: run failed: $(tail -1 "$tmp/run.err")" >&2
				ok=0
				break
			fi
		done
		verified=false
		if [ "$ok" = 1 ] && "$hoffopt" run "$g" "$s" --backend cpu --json \
			--verify --time-scale "$tk" --size-scale "$sk" \
			>"$tmp/verify.json" 2>"$tmp/run.err"; then
			verified=$(jq .verified "$tmp/verify.json")
		elif [ "$ok" = 1 ]; then
			echo "exec_table: $name $p: --verify: $(tail -1 "$tmp/run.err")" >&2
		fi
		if [ "$ok" = 0 ]; then
			failed=1
			continue
		fi
		row=$(jq -s -c --arg g "$name" --arg p "$p" \
			--argjson v "$verified" --argjson n "$repeat" '
			sort_by(.measured.makespan_s) | .[length / 2 | floor] |
			{graph: $g, policy: $p, time_scale, size_scale,
			runs: $n, verified: $v,
			predicted_makespan_s: .predicted.makespan_s,
			measured_makespan_s: .measured.makespan_s, error_pct,
			predicted_peak_bytes: .predicted.peak_bytes,
			measured_peak_bytes: .measured.peak_bytes,
			planned_peak_bytes, arena_bytes, lag_max_s, overruns}' \
			"$tmp/runs.json")
		rows+=("$row")
		jq -r '"| \(.graph) | \(.policy) | \(.time_scale) | \(.size_scale) | \(.predicted_makespan_s * 1e6 | round / 1e6) | \(.measured_makespan_s * 1e6 | round / 1e6) | \(.error_pct * 100 | round / 100) | \(.predicted_peak_bytes) | \(.measured_peak_bytes) | \(.arena_bytes) | \(.verified) |"' <<<"$row"
		nrows=$((nrows + 1))
		jq -e '(.error_pct | fabs) <= 10' <<<"$row" >/dev/null &&
			nclose=$((nclose + 1))
		jq -e '.measured_peak_bytes == .planned_peak_bytes' \
			<<<"$row" >/dev/null && npeak=$((npeak + 1))
		if jq -e '.verified == true' <<<"$row" >/dev/null; then
			nver=$((nver + 1))
		else
			failed=1
		fi
	done
done
[ "$nclose" = "$nrows" ] || failed=1
echo
echo "within 10% of the prediction: $nclose of $nrows; verified: $nver of" \
	"$nrows; measured peak = planned peak: $npeak of $nrows"
echo "target (every run within 10% and verified): $([ "$failed" = 0 ] && echo PASS || echo FAIL)"

mkdir -p bench/results
out=bench/results/exec-$(date -u +%Y%m%dT%H%M%SZ).json
{
	printf '{"bench":"exec","backend":"cpu","commit":"%s","host":"%s","cpus":%s,"rows":[' \
		"$(git rev-parse --short HEAD 2>/dev/null || echo none)" \
		"$(uname -n)" "$(nproc)"
	(IFS=,; printf '%s' "${rows[*]}")
	printf ']}\n'
} >"$out"
echo "wrote $out"
exit "$failed"

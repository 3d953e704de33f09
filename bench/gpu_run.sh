#!/usr/bin/env bash
# gpu_run.sh: the CUDA executor on a real GPU. Builds hoffopt with CUDA,
# calibrates the GPU (`hoffopt calibrate --backend cuda`), puts the measured
# host link (h2d, d2h, latency) into each graph's "host" tier and caps
# device memory at the GPU's, plans each graph with each policy, runs it
# with `hoffopt run --backend cuda --verify`, and prints a markdown table:
# predicted and measured makespan, the error, the simulator's peak, the
# arena (the real device footprint) and the achieved h2d rate. Op compute
# is emulated by spin kernels at the graph's op times; transfers are real.
# Without a GPU (or without nvcc) it says so and exits 0, measuring
# nothing.
# Usage: bench/gpu_run.sh [GRAPH ...]
#        (default: the graphs in data/ that fit, else a generated set)
# Env: POLICIES (default "greedy reactive lookahead:1"), HOST_MAX (bytes of
#      pinned host memory a graph may need, default 17179869184), HOFFOPT
#      (a built binary with CUDA), JOBS.
# Writes the rows as JSON to bench/results/gpu-<time>.json. Exits 1 when a
# run fails or does not verify.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
policies=(${POLICIES:-greedy reactive lookahead:1})
host_max=${HOST_MAX:-17179869184}

tests/deps.sh jq
if [ -n "${HOFFOPT:-}" ]; then
	hoffopt=$HOFFOPT
else
	if ! command -v nvcc >/dev/null 2>&1 &&
		[ ! -x /usr/local/cuda/bin/nvcc ]; then
		echo "gpu_run: no CUDA compiler (nvcc) found: no GPU run possible; nothing measured"
		exit 0
	fi
	PATH=$PATH:/usr/local/cuda/bin
	cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DHOFF_CUDA=ON \
		-DHOFF_SANITIZE=OFF -DHOFF_WERROR=OFF -DBUILD_TESTING=OFF >/dev/null
	cmake --build build-gpu -j "${JOBS:-$(nproc)}" --target hoffopt >/dev/null
	hoffopt=$root/build-gpu/hoffopt
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hoff-gpu.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

machine=$tmp/machine.json
if ! "$hoffopt" calibrate --backend cuda -o "$machine" >"$tmp/cal.out" \
	2>"$tmp/cal.err"; then
	echo "gpu_run: no GPU available ($(tail -1 "$tmp/cal.err" | sed 's/^hoffopt: calibrate: //')); nothing measured"
	exit 0
fi
cat "$tmp/cal.out"
gpu_mem=$(jq .device.memory_bytes "$machine")

graphs=("$@")
if [ ${#graphs[@]} -eq 0 ]; then
	shopt -s nullglob
	for f in data/*.json; do
		[ "$(jq -r .format "$f" 2>/dev/null)" = hoffopt.graph ] &&
			graphs+=("$f")
	done
	shopt -u nullglob
	if [ ${#graphs[@]} -eq 0 ]; then
		for spec in "llama3-8b decode host" "llama3-8b prefill host" \
			"mixtral-8x7b decode host" "llama3-8b train auto"; do
			set -- $spec
			g=$tmp/$1-$2.json
			"$hoffopt" gen "$1" --phase "$2" --layers 4 --seq 2048 \
				--weights "$3" -o "$g"
			graphs+=("$g")
		done
	fi
fi

rows=()
failed=0
printf '| graph | policy | predicted makespan s | measured s | error %% | predicted peak B | arena B | achieved h2d B/s | verified |\n'
printf '|---|---|---:|---:|---:|---:|---:|---:|---|\n'
for g0 in "${graphs[@]}"; do
	name=$(jq -r '.name // empty' "$g0")
	[ -n "$name" ] || name=$(basename "$g0" .json)
	total=$("$hoffopt" analyze "$g0" --json | jq '[.bytes_by_kind[]] | add')
	if [ "$total" -gt "$host_max" ]; then
		echo "gpu_run: $name: $total bytes exceed HOST_MAX; skipped" >&2
		continue
	fi
	# The measured link, and no more device memory than the GPU has.
	g=$tmp/g.json
	jq --slurpfile m "$machine" --argjson mem "$gpu_mem" '
		.machine.tiers |= map(if .name == "host" then . + {
			h2d_Bps: $m[0].tiers[0].h2d_Bps,
			d2h_Bps: $m[0].tiers[0].d2h_Bps,
			latency_s: $m[0].tiers[0].latency_s} else . end) |
		.machine.device.memory_bytes |=
			(if . > ($mem * 0.9 | floor) then ($mem * 0.9 | floor)
			 else . end)' "$g0" >"$g"
	for p in "${policies[@]}"; do
		s=$tmp/s.json
		if ! "$hoffopt" --policy "$p" "$g" -o "$s" --json \
			>"$tmp/plan.json" 2>"$tmp/plan.err"; then
			echo "gpu_run: $name $p: planning failed: $(tail -1 "$tmp/plan.err")" >&2
			continue
		fi
		rc=0
		"$hoffopt" run "$g" "$s" --backend cuda --verify --json \
			>"$tmp/run.json" 2>"$tmp/run.err" || rc=$?
		if ! jq -e . "$tmp/run.json" >/dev/null 2>&1; then
			echo "gpu_run: $name $p: run failed (exit $rc): $(tail -1 "$tmp/run.err")" >&2
			failed=1
			continue
		fi
		row=$(jq -c --arg g "$name" --arg p "$p" '{graph: $g, policy: $p,
			device, verified,
			predicted_makespan_s: .predicted.makespan_s,
			measured_makespan_s: .measured.makespan_s, error_pct,
			predicted_peak_bytes: .predicted.peak_bytes, arena_bytes,
			h2d_achieved_Bps: ([.channels[] | select(.dir == "h2d")
				| .achieved_Bps] | max)}' "$tmp/run.json")
		rows+=("$row")
		jq -r '"| \(.graph) | \(.policy) | \(.predicted_makespan_s * 1e6 | round / 1e6) | \(.measured_makespan_s * 1e6 | round / 1e6) | \(.error_pct * 100 | round / 100) | \(.predicted_peak_bytes) | \(.arena_bytes) | \(.h2d_achieved_Bps // "-") | \(.verified) |"' <<<"$row"
		jq -e '.verified == true' <<<"$row" >/dev/null || failed=1
	done
done

mkdir -p bench/results
out=bench/results/gpu-$(date -u +%Y%m%dT%H%M%SZ).json
{
	printf '{"bench":"gpu","backend":"cuda","commit":"%s","host":"%s","machine":%s,"rows":[' \
		"$(git rev-parse --short HEAD 2>/dev/null || echo none)" \
		"$(uname -n)" "$(jq -c . "$machine")"
	(IFS=,; printf '%s' "${rows[*]}")
	printf ']}\n'
} >"$out"
echo "wrote $out"
exit "$failed"

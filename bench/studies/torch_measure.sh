#!/usr/bin/env bash
# torch_measure.sh: `export --measure` against the replay, on this machine's
# CPU (formats/torch/README.md, "Op times"). Each round, in separate
# processes: export resnet18 (train, batch 8, 64 px) with --measure (op
# times taken inside the replay: 2 warm-up runs, then MEASURE, the median
# an op), plan `none`, simulate it; then `run --runs RUNS --no-check` of
# that plan: the planned makespan against the median replay wall time.
# Prints a markdown table, one row a round, with the load average before
# and after. Usage: bench/studies/torch_measure.sh [ROUNDS]  (default 3)
# Env: HOFFOPT (default build-rel/ or build/), MEASURE (default 7),
#      RUNS (default 7), MODEL (default torchvision:resnet18), BATCH (8),
#      SIZE (64), THREADS (torch's intra-op threads, OMP_NUM_THREADS;
#      default 1: on a shared machine two threads wait on each other's
#      preemption at every op, which no per-op time can predict).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
rounds=${1:-3}
hoff=${HOFFOPT:-}
for c in build-rel/hoffopt build/hoffopt; do
	[ -n "$hoff" ] || { [ -x "$c" ] && hoff=$root/$c; }
done
[ -n "$hoff" ] || { echo "torch_measure: no hoffopt (HOFFOPT)" >&2; exit 2; }
py=/usr/bin/python3
export PYTHONPATH=$root/formats/torch
cores=$(nproc)
export OMP_NUM_THREADS=${THREADS:-1}
model=${MODEL:-torchvision:resnet18}
spec=("$model" --batch "${BATCH:-8}" --image-size "${SIZE:-64}")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/torch-measure.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
load() { cut -d' ' -f1-3 /proc/loadavg; }

echo "threads $OMP_NUM_THREADS, $cores cores, $model ${spec[*]:1}"
echo
echo "| round | load before | planned makespan s | sum of op times s | replay walls s | median s | planned vs replay | load after |"
echo "|---:|---|---:|---:|---|---:|---:|---|"
for ((r = 1; r <= rounds; r++)); do
	before=$(load)
	"$py" -m hoffopt_torch "${spec[@]}" --measure "${MEASURE:-7}" \
		-o "$tmp/g.json" 2>/dev/null
	"$hoff" --policy none "$tmp/g.json" -o "$tmp/s.json" >/dev/null
	sim=$("$hoff" simulate "$tmp/g.json" "$tmp/s.json" --json)
	out=$("$py" -m hoffopt_torch run "${spec[@]}" --graph "$tmp/g.json" \
		--schedule "$tmp/s.json" --runs "${RUNS:-7}" --no-check)
	after=$(load)
	"$py" - "$sim" "$out" "$r" "$before" "$after" <<'EOF'
import json, re, sys
sim, out, r, before, after = sys.argv[1:]
s = json.loads(sim)
m = re.search(r"replay wall times: (.*) s; median ([0-9.]+) s", out)
walls, med = m.group(1), float(m.group(2))
plan = s["makespan_s"]
print("| %s | %s | %.3f | %.3f | %s | %.3f | %+.1f%% | %s |" % (
    r, before, plan, s["compute_s"], walls, med,
    100 * (plan - med) / med, after))
EOF
done

#!/usr/bin/env bash
# torch_measure.sh: `export --measure` against the replay, on this machine's
# CPU (formats/torch/README.md, "Op times"). Each round, in separate
# processes: export resnet18 (train, batch 8, 64 px) with --measure (op
# times taken inside the replay: 2 warm-up runs, then MEASURE, the median
# an op), plan `none`, simulate it; then `run --warmup WARMUP --runs RUNS
# --no-check` of that plan (WARMUP untimed runs first, default 2, as
# --measure's): the planned makespan against the median replay wall time.
# Prints a markdown table, one row a round, with the load average before
# and after. MODE=interleaved does the same in one process, measure's
# clocked runs and the replay's runs of the `none` plan taking turns (2
# warm-up pairs, then MEASURE), so that both see the same load; the plan
# replayed is simulated on the measured graph (replay.op_times, the same
# figures as --measure). Usage: bench/studies/torch_measure.sh [ROUNDS]
# (default 3)
# Env: HOFFOPT (default build-rel/ or build/), MEASURE (default 7),
#      RUNS (default 7), MODEL (default torchvision:resnet18), BATCH (8),
#      SIZE (64), THREADS (torch's intra-op threads, OMP_NUM_THREADS;
#      default 1: on a shared machine two threads wait on each other's
#      preemption at every op, which no per-op time can predict),
#      CLOCK (wall, default; or process: measure and replay both in CPU
#      seconds of their process, HOFFOPT_TORCH_CLOCK=process, which the
#      other sessions' load does not inflate), MALLOC (keep, default:
#      glibc keeps freed memory, MALLOC_MMAP_THRESHOLD_ 32 MiB and
#      MALLOC_TRIM_THRESHOLD_ 16 GiB, for measure and replay alike; or
#      default: glibc's own, which hands large blocks back to the kernel
#      at each free, so that every run faults its memory in again, at a
#      cost in this VM that swings with the allocator's state from run to
#      run as much as the ops themselves).
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
clock=${CLOCK:-wall}
[ "$clock" = process ] && export HOFFOPT_TORCH_CLOCK=process
malloc=${MALLOC:-keep}
if [ "$malloc" = keep ]; then
	export MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-33554432}
	export MALLOC_TRIM_THRESHOLD_=${MALLOC_TRIM_THRESHOLD_:-17179869184}
fi
model=${MODEL:-torchvision:resnet18}
spec=("$model" --batch "${BATCH:-8}" --image-size "${SIZE:-64}")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/torch-measure.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
load() { cut -d' ' -f1-3 /proc/loadavg; }

echo "mode ${MODE:-cli}, threads $OMP_NUM_THREADS, $cores cores, clock $clock, malloc $malloc, $model ${spec[*]:1}"
echo
echo "| round | load before | planned makespan s | sum of op times s | replay walls s | median s | planned vs replay | load after |"
echo "|---:|---|---:|---:|---|---:|---:|---|"
if [ "${MODE:-cli}" = interleaved ]; then
	for ((r = 1; r <= rounds; r++)); do
		before=$(load)
		"$py" - "$hoff" "$tmp" "${MEASURE:-7}" "$r" "$before" "${spec[@]}" <<'EOF'
import json, statistics, subprocess, sys
hoff, tmp, reps, r, before, model, _, batch, _, size = sys.argv[1:]
from hoffopt_torch import export, write, replay
from hoffopt_torch.__main__ import _real_model
m, x, _ = _real_model(model, int(batch), int(size), 0)
g = export(m, x)
write(g, tmp + "/g0.json")
subprocess.run([hoff, "--policy", "none", tmp + "/g0.json", "-o",
                tmp + "/s0.json"], check=True, capture_output=True)
with open(tmp + "/s0.json") as f:
    sched = json.load(f)
rm = replay.prepare(m, x, g, replay._none_schedule(g))
rn = rm.again(sched)
timed, walls = [], []
for i in range(2 + int(reps)):
    st = rm.run(clock=True).step_times()
    w = rn.run().wall_s
    if i >= 2:
        timed.append(st)
        walls.append(w)
links = {}
times = replay.op_times(rm.plan, timed, links)
for o, t in zip(g["ops"], times):
    o["time_s"] = t
for t in g["machine"]["tiers"]:
    t.update(links.get(t["name"], {}))
write(g, tmp + "/g.json")
sim = json.loads(subprocess.run(
    [hoff, "simulate", tmp + "/g.json", tmp + "/s0.json", "--json"],
    check=True, capture_output=True, text=True).stdout)
with open("/proc/loadavg") as f:
    after = " ".join(f.read().split()[:3])
plan, med = sim["makespan_s"], statistics.median(walls)
print("| %s | %s | %.3f | %.3f | %s | %.3f | %+.1f%% | %s |" % (
    r, before, plan, sim["compute_s"], ", ".join("%.3f" % w for w in walls),
    med, 100 * (plan - med) / med, after), flush=True)
EOF
	done
	exit 0
fi
for ((r = 1; r <= rounds; r++)); do
	before=$(load)
	"$py" -m hoffopt_torch "${spec[@]}" --measure "${MEASURE:-7}" \
		-o "$tmp/g.json" 2>/dev/null
	"$hoff" --policy none "$tmp/g.json" -o "$tmp/s.json" >/dev/null
	sim=$("$hoff" simulate "$tmp/g.json" "$tmp/s.json" --json)
	out=$("$py" -m hoffopt_torch run "${spec[@]}" --graph "$tmp/g.json" \
		--schedule "$tmp/s.json" --warmup "${WARMUP:-2}" --runs "${RUNS:-7}" \
		--no-check)
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

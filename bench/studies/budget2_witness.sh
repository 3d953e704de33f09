#!/usr/bin/env bash
# budget2_witness.sh: greedy's budget mode against the witness schedules of
# ../shared/witness/budget2/ (a reference heuristic's plans for ten graphs
# under a budget). For each pair in its index.json: `hoffopt --greedy
# GRAPH --budget BYTES`, the schedule checked with `hoffopt simulate
# --budget BYTES`, and greedy's makespan over the witness's (simulated here
# too). Prints a markdown table; exits 1 when a schedule is invalid or over
# the budget, 0 otherwise (a ratio above 1.02 is reported, not an error).
# Usage: bench/studies/budget2_witness.sh [hoffopt] [witness dir]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
hoff=$(realpath "${1:-$root/build/hoffopt}")
dir=$(realpath "${2:-$root/../shared/witness/budget2}")
[ -x "$hoff" ] || { echo "budget2_witness.sh: no hoffopt at $hoff (build first)" >&2; exit 2; }
[ -f "$dir/index.json" ] || { echo "budget2_witness.sh: no $dir/index.json" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$hoff" "$dir" "$tmp" <<'PY'
import json, os, subprocess, sys
hoff, d, tmp = sys.argv[1:4]
idx = json.load(open(os.path.join(d, "index.json")))
bad = 0
print("| pair | budget B | greedy peak B | greedy s | witness s | greedy / witness | within 2% |")
print("|---|---:|---:|---:|---:|---:|---|")
def sim(g, s, b):
    r = subprocess.run([hoff, "simulate", g, s, "--budget", str(b), "--json"],
                       capture_output=True, text=True)
    j = json.loads(r.stdout) if r.stdout.strip() else {}
    return r.returncode, j
for name in sorted(idx):
    e = idx[name]
    g = os.path.join(d, e["graph_file"])
    b = e["budget_bytes"]
    out = os.path.join(tmp, name + ".schedule.json")
    subprocess.run([hoff, "--greedy", g, "--budget", str(b), "-o", out],
                   capture_output=True, text=True)
    wrc, wj = sim(g, os.path.join(d, e["schedule_file"]), b)
    wm = wj.get("makespan_s") if wrc == 0 else None
    if not os.path.exists(out):
        print("| %s | %d | no plan | | %s | | no |" % (name, b, wm))
        bad += 1
        continue
    rc, j = sim(g, out, b)
    s = j
    if rc != 0 or not j.get("valid"):
        print("| %s | %d | INVALID | | %s | | no |" % (name, b, wm))
        bad += 1
        continue
    r = s["makespan_s"] / wm if wm else float("nan")
    print("| %s | %d | %d | %.6f | %.6f | %.3f | %s |" % (
        name, b, s["peak_bytes"], s["makespan_s"], wm, r,
        "yes" if r <= 1.02 else "no"))
sys.exit(1 if bad else 0)
PY

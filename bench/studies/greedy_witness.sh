#!/usr/bin/env bash
# greedy_witness.sh: greedy against the witness schedules of
# ../shared/witness (WITNESS, default <repo>/../shared/witness).
# Overhead table: for each data/ graph with a witness made for it (same
# sha256 prefix), greedy's peak at --max-overhead 0.01, its makespan over
# lower_bound_s, the witness's peak (simulated here) and greedy's
# difference. Budget table: for each budget witness, greedy's makespan
# under its budget against the witness's, reactive's and lookahead:1/2's;
# then every graph at 50, 75 and 90% of its no-offload peak, greedy
# against the baselines under the same budget ("over": the plan's peak
# is past the budget).
# Every schedule is checked by `hoffopt simulate`. Prints markdown; exits
# 1 if a schedule is invalid. With no graph given: data/'s graphs in
# their version-1 form (`data/regen.sh --v1`, the bytes the witnesses were
# made for; data/ itself holds FORMAT v2 graphs, which no witness names).
# Usage: bench/studies/greedy_witness.sh [hoffopt] [graph.json ...]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
hoff=${1:-$root/build/hoffopt}
shift || true
[ -x "$hoff" ] || { echo "greedy_witness.sh: no hoffopt at $hoff (build first)" >&2; exit 2; }
wit=${WITNESS:-$root/../shared/witness}
[ -f "$wit/witness.json" ] || { echo "greedy_witness.sh: no $wit/witness.json" >&2; exit 2; }
py=/usr/bin/python3
[ -x $py ] || py=python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
graphs=("$@")
if [ ${#graphs[@]} -eq 0 ]; then
	mkdir "$tmp/v1"
	"$root/data/regen.sh" --v1 "$tmp/v1" "$hoff" 2>/dev/null
	graphs=("$tmp"/v1/*.json)
fi
$py - "$hoff" "$wit" "$tmp" "${graphs[@]}" <<'PY'
import hashlib, json, os, subprocess, sys
hoff, wit, tmp, graphs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
wj = json.load(open(os.path.join(wit, "witness.json")))
bj = json.load(open(os.path.join(wit, "budget.json")))
bad = 0

def run(args):
    p = subprocess.run([hoff] + args, capture_output=True, text=True)
    return p.returncode, p.stdout

def sim(g, s, budget=None):
    a = ["simulate", g, s, "--json"] + (["--budget", str(budget)] if budget else [])
    rc, out = run(a)
    return json.loads(out)

def plan(g, stem, extra, policy="greedy"):
    out = os.path.join(tmp, stem + "." + policy.replace(":", "") + ".json")
    rc, txt = run(["--policy", policy, g, "-o", out, "--json"] + extra)
    if not os.path.exists(out):
        return None
    d = sim(g, out, extra[1] if extra[:1] == ["--budget"] else None)
    return d

print("| graph | greedy peak B | greedy over bound | witness peak B | witness over bound | greedy − witness |")
print("|---|---:|---:|---:|---:|---:|")
for g in graphs:
    stem = os.path.basename(g)[:-5]
    w = wj.get(stem)
    sha = hashlib.sha256(open(g, "rb").read()).hexdigest()[:16]
    d = plan(g, stem, ["--max-overhead", "0.01"])
    if d is None or not d["valid"]:
        print("| %s | (failed) | | | | |" % stem); bad = 1; continue
    ov = 100 * (d["makespan_s"] / d["lower_bound_s"] - 1)
    if w is None or w["graph_sha256_prefix"] != sha:
        print("| %s | %d | %+.2f%% | — | — | — |" % (stem, d["peak_bytes"], ov))
        continue
    ws = sim(g, os.path.join(wit, stem + ".schedule.json"))
    wov = 100 * (ws["makespan_s"] / ws["lower_bound_s"] - 1)
    diff = 100 * (d["peak_bytes"] / ws["peak_bytes"] - 1)
    print("| %s | %d | %+.2f%% | %d | %+.2f%% | %+.2f%% |" % (
        stem, d["peak_bytes"], ov, ws["peak_bytes"], wov, diff))

print()
print("| graph @ budget | budget B | greedy makespan s | witness s | greedy / witness | reactive s | lookahead:1 s | lookahead:2 s |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
want = {os.path.basename(g)[:-5]: g for g in graphs}
for key, b in bj.items():
    g = want.get(b["graph"])
    if g is None:
        continue
    sha = hashlib.sha256(open(g, "rb").read()).hexdigest()[:16]
    if b["graph_sha256_prefix"] != sha:
        continue
    B = b["budget_bytes"]
    row = {}
    for p in ["greedy", "reactive", "lookahead:1", "lookahead:2"]:
        d = plan(g, b["graph"] + "." + key.split("@")[1], ["--budget", str(B)], p)
        ok = d is not None and d["valid"] and d["peak_bytes"] <= B
        if p == "greedy" and not ok:
            bad = 1
        row[p] = ("%.6f" % d["makespan_s"]) if ok else "over"
    ws = sim(g, os.path.join(wit, b["file"]), B)
    gm = float(row["greedy"]) if row["greedy"] != "over" else float("nan")
    print("| %s | %d | %s | %.6f | %.4f× | %s | %s | %s |" % (
        key, B, row["greedy"], ws["makespan_s"], gm / ws["makespan_s"],
        row["reactive"], row["lookahead:1"], row["lookahead:2"]))

print()
print("| graph @ budget | budget B | greedy makespan s | greedy peak B | reactive s | lookahead:1 s | lookahead:2 s | greedy ≤ each that fits |")
print("|---|---:|---:|---:|---:|---:|---:|---|")
for g in graphs:
    stem = os.path.basename(g)[:-5]
    rc, out = run(["analyze", g, "--json"])
    npk = json.loads(out)["no_offload"]["peak_bytes"]
    for pct in (50, 75, 90):
        B = npk * pct // 100
        row, ms = {}, {}
        for p in ["greedy", "reactive", "lookahead:1", "lookahead:2"]:
            d = plan(g, "%s.p%d" % (stem, pct), ["--budget", str(B)], p)
            ok = d is not None and d["valid"] and d["peak_bytes"] <= B
            if p == "greedy" and d is not None and not d["valid"]:
                bad = 1
            ms[p] = d["makespan_s"] if ok else None
            row[p] = ("%.6f" % d["makespan_s"]) if ok else "over"
            if p == "greedy":
                gp = str(d["peak_bytes"]) if d is not None else "none written"
                if d is None:
                    row[p] = "cannot meet"
        worse = [p for p in ms if p != "greedy" and ms[p] is not None and
                 (ms["greedy"] is None or ms["greedy"] > ms[p])]
        print("| %s@%d%% | %d | %s | %s | %s | %s | %s | %s |" % (
            stem, pct, B, row["greedy"], gp, row["reactive"],
            row["lookahead:1"], row["lookahead:2"],
            "no: " + ", ".join(worse) if worse else "yes"))
sys.exit(bad)
PY

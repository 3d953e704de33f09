#!/usr/bin/python3
"""greedy_table.py HOFFOPT DATA WITNESS TMP: the two tables of
bench/studies/greedy_table.sh (greedy against witnesses, floors and
baselines), in markdown on stdout. See greedy_table.sh for what each column
means; floors come from bench/studies/floor.py (imported from this folder)."""
import glob
import hashlib
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import floor as floormod  # noqa: E402

HOFF, DATA, WIT, TMP = sys.argv[1:5]
TIMEOUT = int(os.environ.get("GREEDY_TABLE_TIMEOUT", "600"))

# The gen shapes of table 1: (row label, gen arguments, witness peak).
# The two gh200 training peaks are witness figures given with the task
# (issue 20; no schedule file; its greedy figures reproduce on these
# graphs); the output marks them "(issue 20)".
GEN = [
    ("train 16K gh200, step end",
     "llama3-8b --phase train --seq 16384 --machine gh200", 78201241604),
    ("train 16K gh200, step in-backward",
     "llama3-8b --phase train --seq 16384 --machine gh200 "
     "--optimizer-step in-backward", 16446455808),
    ("train 16K h200, step end",
     "llama3-8b --phase train --seq 16384 --machine h200", None),
    ("train 16K h200, step in-backward",
     "llama3-8b --phase train --seq 16384 --machine h200 "
     "--optimizer-step in-backward", None),
    ("train 16K supernode, step end",
     "llama3-8b --phase train --seq 16384 --machine supernode", None),
    ("train 16K supernode, step in-backward",
     "llama3-8b --phase train --seq 16384 --machine supernode "
     "--optimizer-step in-backward", None),
    ("llama3-8b decode 4K, KV and weights on the host",
     "llama3-8b --phase decode --seq 4096 --kv host --weights host", None),
    ("llama3-70b decode 32K x 8, KV and weights on the host",
     "llama3-70b --phase decode --seq 32768 --batch 8 --kv host", None),
]


def run_json(args):
    """hoffopt's --json object (also when it exits 1: budget not met)."""
    try:
        p = subprocess.run([HOFF] + args, capture_output=True, text=True,
                           timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return None
    try:
        return json.loads(p.stdout)
    except ValueError:
        return None


def sha16(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()[:16]


def by_prefix(entries):
    out = {}
    for key, w in entries.items():
        out.setdefault(w["graph_sha256_prefix"], []).append((key, w))
    return out


def gb(b):
    return "—" if b is None else f"{b} ({b / 2**30:.2f} GiB)"


def pct(x):
    return "—" if x is None else f"{100 * x:+.2f}%"


def peak_row(label, path, witness, wnote=""):
    an = run_json(["analyze", path, "--json"])
    gr = run_json(["--greedy", path, "--json"])
    if not an or not gr:
        return f"| {label} | failed | | | | | |"
    fl = floormod.floor(json.load(open(path)), an["lower_bound_s"], 0.01)
    peak = gr["peak_bytes"]
    kv = fl["layer_kv_bytes"] > 0 and "kv-host" in (an.get("graph") or "")
    fcell = f"{gb(fl['floor_bytes'])}: {fl['floor_set_by']}"
    if fl["floor_op"]:
        fcell += f" at `{fl['floor_op']}`"
    if kv:
        fcell += (f"; target {gb(fl['kv_target_bytes'])} "
                  f"(greedy {'meets' if peak <= fl['kv_target_bytes'] else 'misses'} it)")
    wcell = gb(witness)
    if witness is not None:
        wcell += f"{wnote}, greedy {peak / witness - 1:+.2%}"
        if witness < fl["floor_bytes"]:
            wcell += " BELOW THE FLOOR"
    return (f"| {label} | {gb(peak)} | {pct(gr['overhead_vs_lower_bound'])} "
            f"| {gb(gr.get('none_peak_bytes'))} | {wcell} | {fcell} "
            f"| {peak / fl['floor_bytes']:.3f} |")


def makespan(path, policy, budget):
    args = (["--greedy", path] if policy == "greedy"
            else ["--policy", policy, path])
    r = run_json(args + ["--budget", str(budget), "--json"])
    if not r:
        return None, "failed"
    if not r.get("feasible", False) or r["peak_bytes"] > budget:
        return None, f"over ({r['peak_bytes']} B)"
    return r["makespan_s"], f"{r['makespan_s']:.6f}"


def budget_row(label, path, budget, witness_s, least):
    """least: no schedule's peak is below it (floor.py, any makespan)."""
    if budget < least:
        return (f"| {label} | {budget} | — | — | — | — | no schedule fits: "
                f"the floor is {least} B |")
    g, gcell = makespan(path, "greedy", budget)
    r, rcell = makespan(path, "reactive", budget)
    l1, lcell = makespan(path, "lookahead:1", budget)
    base = [x for x in (r, l1) if x is not None]
    verdict = "—"
    if g is not None and base:
        verdict = "no" if g <= min(base) * (1 + 1e-12) else \
            f"YES ({g / min(base):.3f}x)"
    elif g is None and base:
        verdict = "YES (greedy over the budget)"
    wcell = "—"
    if witness_s is not None:
        wcell = f"{witness_s:.6f}"
        if g is not None:
            wcell += f" ({g / witness_s:.3f}x)"
    return (f"| {label} | {budget} | {gcell} | {rcell} | {lcell} | {wcell} "
            f"| {verdict} |")


def main():
    wit = by_prefix(json.load(open(os.path.join(WIT, "witness.json"))))
    bud = by_prefix(json.load(open(os.path.join(WIT, "budget.json"))))
    data = sorted(p for p in glob.glob(os.path.join(DATA, "*.json"))
                  if not p.endswith(".schedule.json"))
    sha = {p: sha16(p) for p in data}

    print("## Peak at most 1% over lower_bound_s (greedy's default)\n")
    print("| graph | greedy peak B | greedy over bound | none's peak B "
          "| witness peak B | floor B | greedy / floor |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for p in data:
        w = wit.get(sha[p], [(None, {})])[0][1].get("peak_bytes")
        print(peak_row(f"data/{os.path.basename(p)}", p, w), flush=True)
    for i, (label, args, issue_peak) in enumerate(GEN):
        path = os.path.join(TMP, f"gen{i}.json")
        subprocess.run([HOFF, "gen"] + args.split() + ["-o", path],
                       check=True, capture_output=True)
        print(peak_row(f"`gen {args}`", path, issue_peak, " (issue 20)"),
              flush=True)

    print("\n## Makespan under a budget (s; \"over\": the plan's peak "
          "exceeds the budget)\n")
    print("| graph @ budget | budget B | greedy | reactive | lookahead:1 "
          "| witness (greedy / witness) | greedy slower than a baseline? |")
    print("|---|---:|---:|---:|---:|---:|---|")
    least = {}
    for p in data:
        an = run_json(["analyze", p, "--json"])
        if not an:
            continue
        fl = floormod.floor(json.load(open(p)), an["lower_bound_s"], 0.01)
        least[p] = (an, max(fl["time0_bytes"], fl["footprint_floor_bytes"]))
    for p in data:
        for key, w in bud.get(sha[p], []):
            if p in least:
                print(budget_row(f"{key} (witness)", p, w["budget_bytes"],
                                 w["makespan_s"], least[p][1]), flush=True)
    for p in data:
        if p not in least:
            continue
        peak = least[p][0]["no_offload"]["peak_bytes"]
        for pc in (50, 75, 90):
            print(budget_row(f"{os.path.basename(p)} @{pc}%", p,
                             peak * pc // 100, None, least[p][1]),
                  flush=True)


main()

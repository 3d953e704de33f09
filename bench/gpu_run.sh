#!/usr/bin/env bash
# gpu_run.sh: the CUDA executor on a real GPU, everything in one command,
# for a machine lent for minutes: each step has a timeout, a failing step
# is reported and the rest go on, and the whole run keeps to DEADLINE_S.
#
# Binaries: .gpu/ from bench/gpu_bundle.sh (built on another machine with
# GLPK, cJSON and cmocka; their libraries travel in .gpu/lib), else
# HOFFOPT and TEST_EXEC_CUDA. Needs python3 (no jq). Steps:
#   env         nvidia-smi, nvcc, the bundle's manifest and libraries
#   test        test_exec_cuda: --verify against the CPU reference, the
#               same faults, CUDA-graph capture, a dropped wait caught,
#               --pace
#   calibrate   `hoffopt calibrate --backend cuda` (h2d and d2h alone
#               and at once, latency, FMA rate, spin fixed cost)
#   copies      `calibrate --sweep`: pinned copies 4 KiB .. 1 GiB, h2d
#               alone, d2h alone, both at once
#   microops    compute-only chains of 5 us .. 1 ms ops, streamed and as
#               one CUDA graph: how well an op lasts its time
#   plans       data/ graphs (the measured link as their "host" tier,
#               device memory capped at 90% of the GPU's) x POLICIES,
#               timed WITHOUT --verify, streamed and (greedy) as a CUDA
#               graph; then each schedule once with --verify, apart
#   drops       a sample of waits whose drop the checker calls a race,
#               run with --verify --drop-wait on the GPU
#   big         a 50k-command schedule (25k ops of 20 us, 25k prefetches
#               of 64 KiB), streamed and as a CUDA graph
#   sanitizer   compute-sanitizer (memcheck) on test_exec_cuda
# Prints markdown tables (the plans table has the CPU table's columns,
# then the mode, the achieved h2d rate and the host's enqueue lag) and a
# per-step status table; with OUT set also writes OUT/gpu_table.md,
# OUT/gpu_log.txt (every command and its output) and OUT/gpu_rows.json.
# Without a GPU it says so, measures nothing and exits 0.
# Usage: bench/gpu_run.sh [GRAPH ...]   (default: data/ graphs that fit)
# Env: POLICIES (default "reactive lookahead:1 greedy"), BACKEND (cuda;
#      cpu runs the same steps on the CPU backend, to try the script on a
#      machine without a GPU: the figures then mean nothing), DEADLINE_S
#      (default 330), HOST_MAX (bytes of pinned host memory a graph may
#      need, default 17179869184), HOFFOPT, TEST_EXEC_CUDA, SANITIZER
#      (default compute-sanitizer).
# Exits 1 when a step failed, 0 otherwise.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
args=("$@")
t_start=$(date +%s)
deadline=$((t_start + ${DEADLINE_S:-330}))
policies=(${POLICIES:-reactive lookahead:1 greedy})
backend=${BACKEND:-cuda} # cpu: tries this script's plumbing without a GPU
host_max=${HOST_MAX:-17179869184}
PATH=$PATH:/usr/local/cuda/bin
py=$(command -v python3 || echo /usr/bin/python3)
export CMOCKA_MESSAGE_OUTPUT=stdout

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hoff-gpu.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
out_dir=${OUT:-}
log=$tmp/log.txt
md=$tmp/table.md
rows=$tmp/rows.json
: >"$log"
: >"$md"
: >"$rows"
steps_md=$tmp/steps.md
: >"$steps_md"
failed=0

say() { printf '%s\n' "$*" | tee -a "$md"; }
logf() { printf '%s\n' "$*" >>"$log"; }
# The files under OUT, refreshed after each step (a killed run keeps them).
publish() {
	[ -n "$out_dir" ] || return 0
	mkdir -p "$out_dir"
	{
		cat "$md"
		echo
		echo "| step | status | seconds | note |"
		echo "|---|---|---:|---|"
		cat "$steps_md"
	} >"$out_dir/gpu_table.md"
	cp "$log" "$out_dir/gpu_log.txt"
	cp "$rows" "$out_dir/gpu_rows.json"
	[ -f "$tmp/machine.json" ] && cp "$tmp/machine.json" "$out_dir/"
	return 0
}
step_row() { # name status seconds note
	printf '| %s | %s | %s | %s |\n' "$1" "$2" "$3" "$4" >>"$steps_md"
	[ "$2" = ok ] || [ "$2" = skipped ] || failed=1
	publish
}
step_done() { # name rc note: the row of a step begun at t0, ok when rc is 0
	step_row "$1" "$([ "$2" = 0 ] && echo ok || echo failed)" \
		$(($(date +%s) - t0)) "$3"
}
section() { # title [header separator]: a step's clock (t0), its heading
	# in the report and, given, its table's first two rows
	t0=$(date +%s)
	say "## $1"
	say ""
	[ $# -lt 3 ] || { say "$2"; say "$3"; }
}
# Runs a command with a timeout no later than the deadline less `reserve`
# seconds; output to the log and to $tmp/last.out. Returns its status
# (124: timed out, 125: no time left).
run_t() { # timeout reserve cmd...
	local limit=$1 reserve=$2
	shift 2
	local left=$((deadline - reserve - $(date +%s)))
	[ "$left" -lt "$limit" ] && limit=$left
	if [ "$limit" -lt 3 ]; then
		logf "SKIPPED (no time left): $*"
		echo "skipped: no time left before DEADLINE_S" >"$tmp/last.err"
		: >"$tmp/last.out"
		return 125
	fi
	logf "\$ $* (timeout ${limit}s)"
	timeout -k 5 "$limit" "$@" >"$tmp/last.out" 2>"$tmp/last.err"
	local rc=$?
	cat "$tmp/last.out" "$tmp/last.err" | head -c 200000 >>"$log"
	logf "(exit $rc)"
	return $rc
}
run_mode() { # mode timeout reserve graph schedule: hoffopt run on the
	# backend, streamed or captured into a CUDA graph (mode "graph")
	local flag=()
	[ "$1" = graph ] && flag=(--cuda-graph)
	run_t "$2" "$3" "$hoffopt" run "$4" "$5" --backend "$backend" --json \
		"${flag[@]}"
}
why() { # a short reason from the last command
	tail -n 3 "$tmp/last.err" "$tmp/last.out" 2>/dev/null |
		grep -v '^==>' | grep -v '^$' | tail -1 | tr '|' '/' | cut -c1-160
}
status_of() { # rc -> word
	case $1 in 0) echo ok ;; 124 | 137) echo timeout ;; 125) echo skipped ;;
	*) echo "failed ($1)" ;; esac
}

# ---- the tool: JSON work in python3 ----
cat >"$tmp/tool.py" <<'EOF'
import json, sys

def load(p):
    with open(p) as f:
        return json.load(f)

def dump(o, p):
    with open(p, "w") as f:
        json.dump(o, f)

def patch(args):
    """graph machine out: the measured link as the host tier (its duplex
    factors too, making the graph version 2), device memory capped at 90%
    of the GPU's."""
    g, m = load(args[0]), load(args[1])
    t = m["tiers"][0]
    for tier in g["machine"]["tiers"]:
        if tier["name"] == "host":
            for k in ("h2d_Bps", "d2h_Bps", "latency_s"):
                tier[k] = t[k]
    duplex = {k: t[k] for k in ("h2d_duplex_factor", "d2h_duplex_factor")
              if k in t}
    if duplex:   # version-2 fields: the graph becomes version 2
        g["version"] = 2
        for tier in g["machine"]["tiers"]:
            if tier["name"] == "host":
                tier.update(duplex)
    cap = int(m["device"]["memory_bytes"] * 0.9)
    d = g["machine"]["device"]
    d["memory_bytes"] = min(d["memory_bytes"], cap)
    dump(g, args[2])

def total(args):
    g = load(args[0])
    print(sum(t["bytes"] for t in g["tensors"]), g.get("name", ""))

def machine_graph(name, tiers, ops, tensors, mem=10**10):
    v2 = any(k.endswith("_duplex_factor") for t in tiers for k in t)
    return {"format": "hoffopt.graph", "version": 2 if v2 else 1,
            "name": name,
            "machine": {"device": {"memory_bytes": mem}, "tiers": tiers},
            "tensors": tensors, "ops": ops}

def micro(args):
    """graph sched n op_s machine: a chain of n ops of op_s each."""
    n, op_s, m = int(args[2]), float(args[3]), load(args[4])
    tensors = [{"id": "x", "bytes": 256, "kind": "input"}]
    ops, steps = [], []
    for i in range(n):
        out = "a%d" % i
        tensors.append({"id": out, "bytes": 256,
                        "kind": "output" if i == n - 1 else "activation"})
        ops.append({"id": "op%d" % i, "inputs": ["x" if i == 0 else "a%d" % (i - 1)],
                    "outputs": [out], "time_s": op_s})
        steps.append({"op": "op%d" % i})
    t = dict(m["tiers"][0])
    dump(machine_graph("micro-%g" % op_s, [t], ops, tensors), args[0])
    dump({"format": "hoffopt.schedule", "version": 1, "steps": steps}, args[1])

def big(args):
    """graph sched n machine: n ops of 20 us, each reading a 64 KiB
    weight prefetched one op ahead and detached after: 2n commands."""
    n, m = int(args[2]), load(args[3])
    tensors = [{"id": "x", "bytes": 4096, "kind": "input"}]
    ops = []
    for i in range(n):
        tensors.append({"id": "w%d" % i, "bytes": 65536, "kind": "weight",
                        "home": "host"})
        tensors.append({"id": "a%d" % i, "bytes": 4096,
                        "kind": "output" if i == n - 1 else "activation"})
        ops.append({"id": "op%d" % i,
                    "inputs": ["x" if i == 0 else "a%d" % (i - 1), "w%d" % i],
                    "outputs": ["a%d" % i], "time_s": 2e-5})
    steps = [{"prefetch": "w0", "from": "host"}]
    for i in range(n):
        if i + 1 < n:
            steps.append({"prefetch": "w%d" % (i + 1), "from": "host"})
        steps.append({"op": "op%d" % i})
        steps.append({"detach": "w%d" % i})
    t = dict(m["tiers"][0])
    dump(machine_graph("big-%d" % (2 * n), [t], ops, tensors), args[0])
    dump({"format": "hoffopt.schedule", "version": 1, "steps": steps}, args[1])

def num(v, d=6):
    if v is None:
        return "-"
    if isinstance(v, float):
        return "%.*g" % (d, v)
    return str(v)

def row(args):
    """run.json verify.json|- graph policy mode rows.json: one markdown
    row of the plans table; the row appended to rows.json."""
    r = load(args[0])
    v = load(args[1]) if args[1] != "-" else None
    verified = v.get("verified") if v else None
    h2d = [c.get("achieved_Bps") for c in r.get("channels", [])
           if c.get("dir") == "h2d" and c.get("achieved_Bps")]
    o = {"graph": args[2], "policy": args[3], "mode": args[4],
         "device": r.get("device"), "time_scale": r.get("time_scale"),
         "size_scale": r.get("size_scale"),
         "predicted_makespan_s": r["predicted"]["makespan_s"],
         "measured_makespan_s": r["measured"]["makespan_s"],
         "error_pct": r.get("error_pct"),
         "predicted_peak_bytes": r["predicted"]["peak_bytes"],
         "measured_peak_bytes": r["measured"]["peak_bytes"],
         "arena_bytes": r.get("arena_bytes"), "verified": verified,
         "verify_faults": v.get("faults_total") if v else None,
         "h2d_achieved_Bps": max(h2d) if h2d else None,
         "lag_max_s": r.get("lag_max_s")}
    with open(args[5], "a") as f:
        f.write(json.dumps(o) + "\n")
    ver = "-" if verified is None else ("true" if verified else "FALSE")
    print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        o["graph"], o["policy"], num(o["time_scale"]), num(o["size_scale"]),
        num(o["predicted_makespan_s"]), num(o["measured_makespan_s"]),
        num(o["error_pct"], 4), o["predicted_peak_bytes"],
        o["measured_peak_bytes"], o["arena_bytes"], ver, o["mode"],
        num(o["h2d_achieved_Bps"], 4), num(o["lag_max_s"], 3)))

def microrow(args):
    """run.json op_s n mode rows.json"""
    r = load(args[0])
    ops = r.get("ops", [])
    d = [o["end_s"] - o["start_s"] for o in ops]
    gaps = [ops[i]["start_s"] - ops[i - 1]["end_s"] for i in range(1, len(ops))]
    o = {"bench": "microops", "op_s": float(args[1]), "ops": int(args[2]),
         "mode": args[3], "predicted_makespan_s": r["predicted"]["makespan_s"],
         "measured_makespan_s": r["measured"]["makespan_s"],
         "error_pct": r.get("error_pct"),
         "mean_op_s": sum(d) / len(d) if d else None,
         "max_op_s": max(d) if d else None,
         "mean_gap_s": sum(gaps) / len(gaps) if gaps else None,
         "lag_max_s": r.get("lag_max_s")}
    with open(args[4], "a") as f:
        f.write(json.dumps(o) + "\n")
    print("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        num(o["op_s"]), o["ops"], o["mode"], num(o["predicted_makespan_s"]),
        num(o["measured_makespan_s"]), num(o["error_pct"], 4),
        num(o["mean_op_s"], 4), num(o["max_op_s"], 4),
        num(o["mean_gap_s"], 3), num(o["lag_max_s"], 3)))

def field(args):
    v = load(args[0])
    for k in args[1].split("."):
        v = v[k]
    print(v)

def faults(args):
    """verify.json: verified and the first fault."""
    v = load(args[0])
    f = v.get("faults") or ["-"]
    print("%s | %s | %s" % (v.get("verified"), v.get("faults_total"),
                            f[0].replace("|", "/")[:150]))

{"patch": patch, "total": total, "micro": micro, "big": big, "row": row,
 "microrow": microrow, "field": field, "faults": faults}[sys.argv[1]](sys.argv[2:])
EOF
tool() { "$py" "$tmp/tool.py" "$@"; }

# ---- binaries ----
# The bundle's, through wrappers that give them (and only them) the
# bundle's libraries; the compiler's runtimes only where the machine has
# none.
libs=
if [ -x .gpu/bin/hoffopt ]; then
	libs=$root/.gpu/lib
	if LD_LIBRARY_PATH=$libs ldd .gpu/bin/hoffopt .gpu/bin/test_exec_cuda \
		2>/dev/null | grep -q 'not found'; then
		libs=$libs:$root/.gpu/lib/sys
	fi
	mkdir -p "$tmp/bin"
	for b in hoffopt test_exec_cuda; do
		printf '#!/bin/sh\nLD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec %s "$@"\n' \
			"$libs" "$root/.gpu/bin/$b" >"$tmp/bin/$b"
		chmod +x "$tmp/bin/$b"
	done
fi
hoffopt=${HOFFOPT:-$tmp/bin/hoffopt}
test_cuda=${TEST_EXEC_CUDA:-$tmp/bin/test_exec_cuda}
sanitizer=${SANITIZER:-compute-sanitizer}
command -v "$sanitizer" >/dev/null 2>&1 ||
	{ [ -x /usr/local/cuda/bin/compute-sanitizer ] &&
		sanitizer=/usr/local/cuda/bin/compute-sanitizer; }

# ---- env ----
t0=$(date +%s)
{
	echo "== env"
	date -u
	uname -a
	nvidia-smi 2>&1 | head -15
	nvcc --version 2>&1 | tail -2
	"$py" --version 2>&1
	cat .gpu/MANIFEST 2>&1 | head -3
	echo "bundle libraries: ${libs:-none}"
	LD_LIBRARY_PATH=$libs ldd .gpu/bin/hoffopt .gpu/bin/test_exec_cuda 2>&1
} >>"$log" 2>&1
say "# hoffopt on a GPU ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(cat .gpu/MANIFEST 2>/dev/null | head -1 || echo 'no bundle'))"
say ""
if [ ! -x "$hoffopt" ]; then
	say "gpu_run: no hoffopt binary (.gpu/bin/hoffopt: run bench/gpu_bundle.sh where GLPK, cJSON and cmocka are, then carry .gpu); nothing measured"
	step_row env "failed (no binary)" $(($(date +%s) - t0)) "no .gpu/bin/hoffopt"
	exit 0
fi
if [ -n "$libs" ] && LD_LIBRARY_PATH=$libs ldd .gpu/bin/hoffopt 2>&1 |
	grep -q 'not found'; then
	say "gpu_run: hoffopt misses libraries: $(LD_LIBRARY_PATH=$libs ldd .gpu/bin/hoffopt | grep 'not found' | tr -s ' \t' ' ' | tr '\n' ';')"
	step_row env "failed (libraries)" $(($(date +%s) - t0)) "see gpu_log.txt"
	exit 1
fi
step_row env ok $(($(date +%s) - t0)) "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 | tr ',' ';')"

# ---- calibrate (also: is there a GPU at all) ----
t0=$(date +%s)
machine=$tmp/machine.json
run_t 60 150 "$hoffopt" calibrate --backend "$backend" -o "$machine"
rc=$?
if [ $rc -ne 0 ]; then
	say "gpu_run: no GPU available ($(why)); nothing measured"
	step_row calibrate "$(status_of $rc)" $(($(date +%s) - t0)) "$(why)"
	[ $rc -eq 2 ] && exit 0 # no device: not a failure of the code
	exit 1
fi
cat "$tmp/last.out" | tee -a "$md"
say ""
step_row calibrate ok $(($(date +%s) - t0)) "$(tool field "$machine" device.name)"

# ---- test_exec_cuda ----
t0=$(date +%s)
run_t 150 150 "$test_cuda"
rc=$?
st=$(status_of $rc)
step_row test "$st" $(($(date +%s) - t0)) "$(grep -E 'PASSED|FAILED|SKIPPED' "$tmp/last.out" | tr '\n' ' ' | tr '|' '/' | cut -c1-150)"

# ---- copies ----
section "Pinned copies, alone and both directions at once"
run_t 90 150 "$hoffopt" calibrate --backend "$backend" --sweep 1073741824
rc=$?
cat "$tmp/last.out" | tee -a "$md"
say ""
step_row copies "$(status_of $rc)" $(($(date +%s) - t0)) "$( [ $rc -eq 0 ] || why)"

# ---- micro-ops ----
section "Compute-only ops (spin kernels on %globaltimer)" \
	"| op s | ops | mode | predicted makespan s | measured s | error % | mean op s | max op s | mean gap s | enqueue lag s |" \
	"|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|"
mrc=0
for spec in "5e-6 2000" "1e-5 2000" "5e-5 1000" "1e-3 100"; do
	read -r op_s nops <<<"$spec"
	tool micro "$tmp/m.json" "$tmp/ms.json" "$nops" "$op_s" "$machine" || mrc=1
	for mode in streamed graph; do
		if run_mode $mode 30 150 "$tmp/m.json" "$tmp/ms.json"; then
			tool microrow "$tmp/last.out" "$op_s" "$nops" "$mode" "$rows" | tee -a "$md"
		else
			mrc=1
			say "| $op_s | $nops | $mode | run failed: $(why) |"
		fi
	done
done
say ""
step_done microops $mrc ""

# ---- plans ----
t0=$(date +%s)
graphs=("${args[@]}")
if [ ${#graphs[@]} -eq 0 ]; then
	for f in data/tiny.json data/llama3-8b-decode-2l.json \
		data/llama3-8b-prefill-2l.json data/llama3-8b-train-2l.json \
		data/mixtral-8x7b-decode-2l.json data/deepseek-v3-decode-4l.json; do
		[ -f "$f" ] && graphs+=("$f")
	done
fi
say "## Schedules on the GPU: timed without --verify, verified apart"
say ""
say "| graph | policy | time x | size x | predicted makespan s | measured s | error % | predicted peak B | measured peak B | arena B | verified | mode | achieved h2d B/s | enqueue lag s |"
say "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|"
prc=0
nplan=0
declare -a verify_list=()
for g0 in "${graphs[@]}"; do
	read -r total name < <(tool total "$g0")
	[ -n "$name" ] || name=$(basename "$g0" .json)
	if [ "$total" -gt "$host_max" ]; then
		say "| $name | - | skipped: $total bytes exceed HOST_MAX |"
		continue
	fi
	g=$tmp/g-$name.json
	tool patch "$g0" "$machine" "$g" || { prc=1; continue; }
	for p in "${policies[@]}"; do
		s=$tmp/s-$name-${p//:/_}.json
		if ! run_t 60 150 "$hoffopt" --policy "$p" "$g" -o "$s"; then
			say "| $name | $p | planning failed: $(why) |"
			continue
		fi
		modes=(streamed)
		[ "$p" = greedy ] && modes+=(graph)
		for mode in "${modes[@]}"; do
			if run_mode $mode 60 150 "$g" "$s"; then
				cp "$tmp/last.out" "$tmp/run-$name-${p//:/_}-$mode.json"
				nplan=$((nplan + 1))
			else
				prc=1
				say "| $name | $p | run ($mode) failed: $(why) |"
			fi
		done
		verify_list+=("$name|$p|$g|$s")
	done
done
# --verify, apart (its kernels run inside the timed intervals).
vrc=0
for item in "${verify_list[@]}"; do
	IFS='|' read -r name p g s <<<"$item"
	vj=-
	if run_t 60 150 "$hoffopt" run "$g" "$s" --backend "$backend" --json --verify; then
		vj=$tmp/verify-$name-${p//:/_}.json
		cp "$tmp/last.out" "$vj"
	elif [ -s "$tmp/last.out" ] && grep -q '"verified"' "$tmp/last.out"; then
		vj=$tmp/verify-$name-${p//:/_}.json # ran, did not verify
		cp "$tmp/last.out" "$vj"
		vrc=1
	else
		vrc=1
	fi
	for mode in streamed graph; do
		f=$tmp/run-$name-${p//:/_}-$mode.json
		[ -f "$f" ] && tool row "$f" "$vj" "$name" "$p" "$mode" "$rows" | tee -a "$md"
	done
done
say ""
step_done plans $prc "$nplan timed runs"
step_row verify "$([ $vrc = 0 ] && echo ok || echo failed)" 0 "${#verify_list[@]} schedules (time counted in plans)"

# ---- drops ----
section "Dropped waits on the GPU (--verify --drop-wait N, N a wait whose drop the checker calls a race)" \
	"| graph | policy | wait | checker | verified | faults | first fault |" \
	"|---|---|---:|---|---|---:|---|"
drc=0
# llama3-8b-decode-2l's reactive schedule, else the first reactive one.
dn=llama3-8b-decode-2l
[ -f "$tmp/s-$dn-reactive.json" ] ||
	dn=$(ls "$tmp" | sed -n 's/^s-\(.*\)-reactive\.json$/\1/p' | head -1)
dg=$tmp/g-$dn.json
ds=$tmp/s-$dn-reactive.json
if [ -n "$dn" ] && [ -f "$dg" ] && [ -f "$ds" ] &&
	run_t 20 150 "$hoffopt" run "$dg" "$ds" --check-plan --no-run; then
	nw=$(sed -n 's/.*, \([0-9]*\) waits.*/\1/p' "$tmp/last.out")
	found=0
	for ((w = 0; w < ${nw:-0} && found < 6; w++)); do
		run_t 10 150 "$hoffopt" run "$dg" "$ds" --check-plan --no-run \
			--drop-wait $w
		[ $? -eq 1 ] || continue
		found=$((found + 1))
		run_t 30 150 "$hoffopt" run "$dg" "$ds" --backend "$backend" --json \
			--verify --drop-wait $w
		rc=$?
		if grep -q '"verified"' "$tmp/last.out"; then
			say "| $dn | reactive | $w | race | $(tool faults "$tmp/last.out") |"
		else
			drc=1
			say "| $dn | reactive | $w | race | run failed ($rc): $(why) | | |"
		fi
	done
else
	drc=1
	say "| (no reactive schedule to sample) |"
fi
say ""
step_done drops $drc ""

# ---- a 50k-command schedule ----
section "A 50k-command schedule (25k ops of 20 us, 25k prefetches of 64 KiB)" \
	"| graph | policy | time x | size x | predicted makespan s | measured s | error % | predicted peak B | measured peak B | arena B | verified | mode | achieved h2d B/s | enqueue lag s |" \
	"|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|"
brc=0
if tool big "$tmp/big.json" "$tmp/bigs.json" 25000 "$machine"; then
	for mode in streamed graph; do
		if run_mode $mode 90 150 "$tmp/big.json" "$tmp/bigs.json"; then
			tool row "$tmp/last.out" - big-50k hand "$mode" "$rows" | tee -a "$md"
		else
			brc=1
			say "| big-50k | hand | run ($mode) failed: $(why) |"
		fi
	done
else
	brc=1
fi
say ""
step_done big $brc ""

# ---- compute-sanitizer ----
t0=$(date +%s)
if command -v "$sanitizer" >/dev/null 2>&1; then
	# Timing is not asserted under the sanitizer (HOFF_SANITIZED).
	export HOFF_SANITIZED=1
	run_t 200 0 "$sanitizer" --tool memcheck --leak-check full \
		--target-processes all \
		--error-exitcode 9 "$test_cuda"
	rc=$?
	st=$(status_of $rc)
	[ $rc -eq 9 ] && st="failed (memcheck errors)"
	step_row sanitizer "$st" $(($(date +%s) - t0)) "$(grep -E 'ERROR SUMMARY|PASSED|FAILED' "$tmp/last.out" "$tmp/last.err" | sed 's/^[^:]*://' | tr '\n' ' ' | tr '|' '/' | cut -c1-150)"
else
	step_row sanitizer skipped 0 "no compute-sanitizer"
fi

say "total $(($(date +%s) - t_start)) s; every step: $([ $failed = 0 ] && echo ok || echo 'NOT ok (see gpu_log.txt)')"
echo
echo "| step | status | seconds | note |"
echo "|---|---|---:|---|"
cat "$steps_md"
publish
exit $failed

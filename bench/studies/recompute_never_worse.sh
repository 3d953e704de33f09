#!/usr/bin/env bash
# recompute_never_worse.sh [HOFFOPT] [GRAPH.json ...]: greedy --recompute
# is never worse than greedy without it, nor than policy checkpoint
# (issue #31), at the bound and under budgets, on bench's graph sets:
#   data      every data/ graph, as written and (REPEAT=1, the default)
#             as a FORMAT v2 repeat graph (jq '.version=2|.repeat=true')
#   generated bench/harness.py's GENERATED graphs (hoffopt gen ...)
#   budget2   ../shared/witness/budget2/'s graphs (their own budget)
#   scale     bench/bench_scale.sh's synthetic graphs at SCALE_OPS ops
#             (default "10000 100000"): the training graph, the host-homed
#             one at 1/100 of its no-offload peak, the no-dead-end one
#             (host, N/10 layers, 80 GiB) and the recompute one (N/15
#             layers, --tokens 8192)
# (SETS, default "data generated budget2 scale"; graphs given on the
# command line replace the sets and are planned as written.) Per graph:
#   hoffopt --greedy G [--budget B] --json           (peak P0, makespan M0)
#   hoffopt --greedy G --recompute [--budget B] --json  (P1, M1)
#   hoffopt --policy checkpoint G --json             (PC, MC)
# at the default bound (1% over lower_bound_s) and under each budget B:
# PCTS (default "60 75") percent of the no-offload peak, in bytes, and
# for budget2 the pair's budget_bytes. A bound row fails when greedy is
# within the bound and --recompute is not or peaks higher, when greedy
# is over the bound and --recompute is slower (both then return their
# fastest plan), or when checkpoint is within the bound and --recompute
# peaks higher. A budget row fails when greedy fits the budget and
# --recompute does not or is slower, or when checkpoint's peak fits the
# budget and --recompute does not or is slower than checkpoint. Every
# --recompute plan must be valid (its report's `valid`). Prints a
# markdown table; exit 0 when no row fails, 1 otherwise.
# Needs jq and python3. HOFFOPT defaults to build-rel/hoffopt, then
# build/hoffopt; hoff-gen-synth is taken from HOFFOPT's folder.
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=${1:-}
[ -n "$bin" ] || { [ -x "$root/build-rel/hoffopt" ] && bin=$root/build-rel/hoffopt || bin=$root/build/hoffopt; }
bin=$(realpath "$bin")
shift || true
synth=$(dirname "$bin")/hoff-gen-synth
pcts=${PCTS:-60 75}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# rows NAME FILE FORM BUDGETS...: the bound row and one row per budget
# (bytes) of FILE.
rows() {
	local name=$1 in=$2 form=$3 b ok
	shift 3
	"$bin" --policy checkpoint "$in" --json >"$tmp/c.json" 2>/dev/null
	for b in bound "$@"; do
		local opt=()
		[ "$b" = bound ] || opt=(--budget "$b")
		"$bin" --greedy "$in" "${opt[@]}" --json >"$tmp/a.json" 2>/dev/null
		echo $? >"$tmp/a.rc"
		"$bin" --greedy "$in" --recompute "${opt[@]}" --json \
			>"$tmp/b.json" 2>/dev/null
		echo $? >"$tmp/b.rc"
		row "$name" "$form" "$b" || fail=1
	done
}

# row NAME FORM BUDGET: judges $tmp/{a,b,c}.json (greedy, --recompute,
# checkpoint) and a.rc, b.rc; prints the row; false when it fails.
row() {
	python3 - "$tmp" "$@" <<'PY'
import json, os, sys
tmp, name, form, budget = sys.argv[1:5]
def load(k):
    try:
        return json.load(open(os.path.join(tmp, k + ".json")))
    except Exception:
        return None
a, b, c = load("a"), load("b"), load("c")
X = 0.01 + 1e-12  # the default bound, as reported (FORMAT.md readings)
ok = a is not None and b is not None and b.get("valid") is True
def within(r):
    return r is not None and r.get("overhead_vs_lower_bound", 1e9) <= X
if ok and budget == "bound":
    if within(a):
        ok = within(b) and b["peak_bytes"] <= a["peak_bytes"]
    else:
        ok = b["makespan_s"] <= a["makespan_s"]
    if within(c):
        ok = ok and b["peak_bytes"] <= c["peak_bytes"]
elif ok:
    B = int(budget)
    def fits(r, rc=None):
        return (r is not None and r.get("valid") is True and
                r["peak_bytes"] <= B and (rc is None or rc == 0))
    rc = {k: int(open(os.path.join(tmp, k + ".rc")).read())
          for k in ("a", "b")}
    for r, rrc in ((a, rc["a"]), (c, None)):
        if fits(r, rrc):
            ok = ok and fits(b, rc["b"]) and b["makespan_s"] <= r["makespan_s"]
def f(r, k):
    return "-" if r is None or r.get(k) is None else str(r[k])
print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
    name, form, budget, f(a, "peak_bytes"), f(a, "makespan_s"),
    f(b, "peak_bytes"), f(b, "makespan_s"), f(c, "peak_bytes"),
    f(c, "makespan_s"), f(b, "source"), "yes" if ok else "NO"))
sys.exit(0 if ok else 1)
PY
}

# pct_budgets FILE: PCTS percent of FILE's no-offload peak, in bytes.
pct_budgets() {
	local peak p
	peak=$("$bin" analyze "$1" --json | jq -r .no_offload.peak_bytes)
	for p in $pcts; do echo $((peak * p / 100)); done
}

echo "| graph | form | budget B | greedy peak B | greedy s | --recompute peak B | --recompute s | checkpoint peak B | checkpoint s | winner | ok |"
echo "|---|---|---|---:|---:|---:|---:|---:|---:|---|---|"
if [ $# -gt 0 ]; then
	for g in "$@"; do
		mapfile -t bs < <(pct_budgets "$g")
		rows "$(basename "$g" .json)" "$g" as-written "${bs[@]}"
	done
	exit $fail
fi
for set in ${SETS:-data generated budget2 scale}; do
	case $set in
	data)
		for g in "$root"/data/*.json; do
			case $g in *schedule.json) continue ;; esac
			forms="as-written"
			[ "${REPEAT:-1}" = 1 ] && forms="as-written repeat"
			for f in $forms; do
				in=$g
				if [ "$f" = repeat ]; then
					jq '.version=2|.repeat=true' "$g" >"$tmp/r.json" || continue
					in=$tmp/r.json
				fi
				mapfile -t bs < <(pct_budgets "$in")
				rows "$(basename "$g" .json)" "$in" "$f" "${bs[@]}"
			done
		done
		;;
	generated)
		# bench/harness.py's GENERATED list, read without importing it
		python3 - "$root/bench/harness.py" >"$tmp/gen.txt" <<'PY'
import ast, sys
tree = ast.parse(open(sys.argv[1]).read())
for node in tree.body:
    if isinstance(node, ast.Assign) and any(
            getattr(t, "id", None) == "GENERATED" for t in node.targets):
        for name, args in ast.literal_eval(node.value):
            print(name + "\t" + "\t".join(args))
PY
		while IFS=$'\t' read -r -u 3 name args; do
			IFS=$'\t' read -r -a argv <<<"$args"
			"$bin" gen "${argv[@]}" -o "$tmp/g.json" >/dev/null || { fail=1; continue; }
			mapfile -t bs < <(pct_budgets "$tmp/g.json")
			rows "$name" "$tmp/g.json" "gen ${argv[*]}" "${bs[@]}"
		done 3<"$tmp/gen.txt"
		;;
	budget2)
		w=$root/../shared/witness/budget2
		while IFS=$'\t' read -r -u 3 name file b; do
			rows "$name" "$w/$file" "budget2" "$b"
		done 3< <(jq -r 'to_entries[] |
			[.key, .value.graph_file, .value.budget_bytes] | @tsv' \
			"$w/index.json")
		;;
	scale)
		for n in ${SCALE_OPS:-10000 100000}; do
			s=(--ops "$n" --shape train --seed 1)
			"$synth" "${s[@]}" -o "$tmp/g.json" || { fail=1; continue; }
			mapfile -t bs < <(pct_budgets "$tmp/g.json")
			rows "synth-train-$n" "$tmp/g.json" "${s[*]}" "${bs[@]}"
			h=("${s[@]}" --home host)
			"$synth" "${h[@]}" -o "$tmp/g.json"
			mem=$(($("$bin" analyze "$tmp/g.json" --json | jq -r .no_offload.peak_bytes) / 100))
			"$synth" "${h[@]}" --memory "$mem" -o "$tmp/g.json"
			rows "synth-host100-$n" "$tmp/g.json" "${h[*]} --memory $mem"
			l=$((n / 10 < 65536 ? n / 10 : 65536))
			d=("${h[@]}" --layers "$l" --memory 80G)
			"$synth" "${d[@]}" -o "$tmp/g.json"
			rows "synth-dead-end-$n" "$tmp/g.json" "${d[*]}"
			l=$((n / 15 < 65536 ? n / 15 : 65536))
			r=("${s[@]}" --layers "$l" --tokens 8192)
			"$synth" "${r[@]}" -o "$tmp/g.json"
			mapfile -t bs < <(pct_budgets "$tmp/g.json")
			rows "synth-recompute-$n" "$tmp/g.json" "${r[*]}" "${bs[@]}"
		done
		;;
	*)
		echo "recompute_never_worse.sh: unknown set '$set'" >&2
		exit 2
		;;
	esac
done
exit $fail

#!/usr/bin/env bash
# greedy_exact.sh: greedy's peak (overhead 1%) against exact's proven
# optimum on bench/studies/exact_scale.sh's generated graphs and the small
# graphs of data/ (bench/lib/small_graphs.sh). One `hoffopt --exact` run
# per graph gives both (exact starts from greedy); on rows where exact
# ends "optimal" the last column says whether greedy is within 2% of the
# proven optimum. Note: exact's bound is over its candidates (small
# tensors left out), so greedy can be below it.
# Usage: bench/studies/greedy_exact.sh [-b hoffopt] [-t s] [-l] [graph.json ...]
#   -l: the data/ graphs only (no generated ones)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
gen=1
. "$root/bench/lib/exact_opts.sh"
usage() { echo "usage: $0 [-b hoffopt] [-t s] [-l] [graph.json ...]" >&2; exit 2; }
own_opt() { gen=0; } # -l
exact_opts "b:t:l" "$@"
shift "$nopts"
need_hoff
# shellcheck source=../lib/small_graphs.sh
. "$root/bench/lib/small_graphs.sh"
split_args "$@"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
names=()
for g in "${graphs[@]}"; do
	names+=("$(basename "$g" .json)|$g")
done
if [ "$gen" = 1 ]; then
	i=0
	while IFS='|' read -r name args; do
		read -r -a a <<< "$args"
		"$hoff" gen "${a[@]}" -o "$tmp/gen$i.json"
		names+=("$name|$tmp/gen$i.json")
		i=$((i + 1))
	done < <(sed -n 's/^\t"\(.*|.*\)"$/\1/p' "$root/bench/studies/exact_scale.sh")
fi
i=0
for n in "${names[@]}"; do
	"$hoff" --exact "${n#*|}" --time-limit "$limit" --quiet --json \
		> "$tmp/r$i.json" 2> /dev/null || true
	echo "${n%%|*}" > "$tmp/n$i"
	i=$((i + 1))
done
python3 - "$tmp" "$i" <<'PY'
import json, os, sys
tmp, n = sys.argv[1], int(sys.argv[2])
print("| graph | exact status | exact peak B | exact bound B | greedy peak B | greedy vs exact's best | greedy within 2% of the proven optimum |")
print("|---|---|---:|---:|---:|---:|---|")
for i in range(n):
    name = open(os.path.join(tmp, "n%d" % i)).read().strip()
    try:
        d = json.load(open(os.path.join(tmp, "r%d.json" % i)))
    except Exception:
        print("| %s | (failed) | | | | | |" % name)
        continue
    gp = d["greedy"]["peak_bytes"]
    ep = d["peak_bytes"]
    opt = d["status"] == "optimal"
    bound = d["bound"]
    print("| %s | %s | %d | %s | %d | %+.3f%% | %s |" % (
        name, d["status"], ep, "%.6g" % bound if bound is not None else "-",
        gp, 100 * (gp / ep - 1),
        ("yes" if gp <= 1.02 * min(ep, bound) else "NO") if opt else "-"))
PY

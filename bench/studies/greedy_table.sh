#!/usr/bin/env bash
# greedy_table.sh: greedy against the witness schedules, a lower bound on
# the peak (floor.py) and the baselines, as two markdown tables on stdout.
# Usage: bench/studies/greedy_table.sh   (HOFFOPT=path/to/hoffopt, default
#        build/hoffopt; GREEDY_TABLE_TIMEOUT seconds a run, default 600)
#
# Table 1, for every data/ graph and eight `gen` shapes (16K-token
# llama3-8b training on gh200, h200 and supernode with the optimizer step
# at the end and in the backward; decode with the KV cache and the
# weights on the host for llama3-8b and llama3-70b): greedy's peak and its
# makespan over lower_bound_s (greedy aims at <= 1%), the `none` policy's
# peak, the witness's peak when ../shared/witness/witness.json has one for
# the graph (matched by the sha256 prefix of the file, as
# shared/hooks/before-stop does; the two gh200 training rows show the
# witness peaks given with the task that asked for this table, marked
# "issue 20" in the output), and the floor: bench/studies/floor.py's lower
# bound on the peak of any schedule within 1% of lower_bound_s, the
# largest of
#   - time 0: the device-homed inputs, resident at the start;
#   - at the start of each op k: its inputs, updates, outputs and
#     workspace, plus the bytes later ops need that exist before k and
#     that the host links cannot bring in between the earliest start of k
#     (the compute before it) and the latest start of the op that needs
#     them (T minus the compute from it on, T = 1.01 x lower_bound_s).
# With the optimizer step at the end, that is the Adam state, weights and
# gradients the update ops need, less what the link can stream while they
# run ("link" at the first backward or update op); in the backward, the
# weights resident at time 0. For host-KV decode rows the cell adds the
# host-KV target: the largest single op's footprint plus two layers'
# weights plus one layer's KV.
#
# Table 2: for each budget witness (../shared/witness/budget.json, matched
# by sha256) and for 50/75/90% of each data/ graph's no-offload peak, the
# makespan of greedy --budget, reactive and lookahead:1 under that budget.
#
# "data/ graph" above: data/'s graphs in their version-1 form
# (`data/regen.sh --v1`, the bytes the witnesses were made for); DATA=DIR
# takes another folder's graphs instead (DATA=data: the FORMAT v2 ones,
# which no witness names).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
hoff=${HOFFOPT:-$top/build/hoffopt}
[ -x "$hoff" ] || { echo "greedy_table.sh: no hoffopt at $hoff (build first or set HOFFOPT)" >&2; exit 2; }
py=/usr/bin/python3
[ -x "$py" ] || py=python3
wit=$top/../shared/witness
[ -f "$wit/witness.json" ] || { echo "greedy_table.sh: no $wit/witness.json" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
data=${DATA:-}
if [ -z "$data" ]; then
	data=$tmp/data-v1
	mkdir "$data"
	"$top/data/regen.sh" --v1 "$data" "$hoff" 2>/dev/null
fi
echo "hoffopt: $hoff ($("$hoff" --version)), $(date -u +%Y-%m-%dT%H:%MZ)"
echo
"$py" "$here/greedy_table.py" "$hoff" "$data" "$wit" "$tmp"

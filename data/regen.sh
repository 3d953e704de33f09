#!/usr/bin/env bash
# Regenerates the graphs of data/ with `hoffopt gen` (model-shaped graphs
# at real dimensions, op times by the roofline of the machine preset):
# FORMAT v2, train and decode graphs one step of a loop ("repeat"), tiers
# with their presets' duplex factors. With --v1 DIR, writes the same
# graphs in their version-1 form (gen --v1, the graphs data/ held before
# v2) into DIR instead: bench/same_output.sh's proof of no change for v1.
# Usage: data/regen.sh [--v1 DIR] [path/to/hoffopt]   (default: build/hoffopt)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$here v1=()
if [ "${1:-}" = --v1 ]; then
	[ $# -ge 2 ] || { echo "regen.sh: --v1 needs a folder" >&2; exit 2; }
	out=$2 v1=(--v1)
	shift 2
fi
hoff=${1:-$here/../build/hoffopt}
[ -x "$hoff" ] || { echo "regen.sh: no hoffopt at $hoff (build first)" >&2; exit 2; }
gen() { local f=$1; shift; "$hoff" gen "$@" "${v1[@]}" -o "$out/$f"; }  # says what it wrote
# Small graphs (at most ~150 ops): the exact solver proves optimality.
gen llama3-8b-decode-2l.json   llama3-8b    --phase decode  --layers 2 --seq 8192
gen llama3-8b-prefill-2l.json  llama3-8b    --phase prefill --layers 2 --seq 4096
gen llama3-8b-train-2l.json    llama3-8b    --phase train   --layers 2 --seq 4096
gen mixtral-8x7b-decode-2l.json mixtral-8x7b --phase decode --layers 2 --seq 8192
gen deepseek-v3-decode-4l.json deepseek-v3  --phase decode  --layers 4 --seq 8192 --machine h200
# Full-depth graphs: greedy, the baselines and the executors.
gen llama3-8b-train.json       llama3-8b    --phase train   --seq 4096
gen llama3-8b-prefill.json     llama3-8b    --phase prefill --seq 32768
gen llama3-70b-decode.json     llama3-70b   --phase decode  --seq 32768 --batch 8
gen mixtral-8x7b-decode.json   mixtral-8x7b --phase decode  --seq 32768 --batch 8
# Shape options (issue 20); the file is named after the graph.
gen llama3-8b-l2-train-in-backward.json llama3-8b --phase train --layers 2 --seq 4096 --optimizer-step in-backward
gen llama3-8b-l2-decode-kv-host.json llama3-8b --phase decode --layers 2 --seq 8192 --kv host --weights host
gen llama3-8b-decode-kv-host.json   llama3-8b   --phase decode  --seq 8192 --kv host --weights host

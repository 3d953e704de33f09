#!/usr/bin/env bash
# torch_export.sh: how long the PyTorch front end takes, and how much memory,
# to trace real models on the meta device: a Llama-3-8B-shaped decoder
# (4096 hidden, 32 layers, 8.03B parameters; tests/torch/models.py) for one
# training step (seq 4096, Adam) and one prefill (seq 4096, KV cache), and
# torchvision's resnet50 training step at batch 64. Each export runs alone
# under GNU time (wall seconds, peak RSS of the whole Python process,
# torch's import included) and the CLI's own figure (from the model's
# building on meta to the graph written: no interpreter start, no import),
# then `hoffopt analyze` reads the graph.
# Prints a markdown table; writes it to bench/results/torch_export.md.
# Usage: bench/studies/torch_export.sh [HOFFOPT]   (default: build/hoffopt, built
#        in Release when missing). Needs /usr/bin/python3 with
#        python3-torch and python3-torchvision (tests/deps.sh installs them).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
tests/deps.sh time python3-torch python3-torchvision
hoffopt=${1:-$root/build/hoffopt}
if [ ! -x "$hoffopt" ]; then
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build build -j "$(nproc)" --target hoffopt >/dev/null
fi
py=/usr/bin/python3
export PYTHONPATH=$root/formats/torch
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hoff-torch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p bench/results
out=bench/results/torch_export.md

row() { # NAME ARGS...: export, time it, analyze it
	local name=$1
	shift
	/usr/bin/time -f '%e %M' -o "$tmp/$name.time" \
		"$py" -m hoffopt_torch "$@" -o "$tmp/$name.json" 2>"$tmp/$name.err" ||
		{ cat "$tmp/$name.err" >&2; exit 1; }
	read -r secs rss_kib <"$tmp/$name.time"
	"$hoffopt" analyze "$tmp/$name.json" --json >"$tmp/$name.a.json"
	"$py" - "$name" "$tmp/$name.json" "$tmp/$name.a.json" "$secs" "$rss_kib" \
		"$tmp/$name.err" <<'PY'
import json, re, sys
name, g, a, secs, rss, err = sys.argv[1:]
g, a = json.load(open(g)), json.load(open(a))
trace = re.search(r"written in ([0-9.]+) s", open(err).read()).group(1)
print("| %s | %s | %d | %d | %s | %.2f | %.0f | %.2f | %.2f |" % (
    name, "{:,}".format(g["meta"]["params"]), a["ops"], a["tensors"], trace,
    float(secs), int(rss) / 1024, a["bytes_by_kind"]["weight"] / 2**30,
    a["no_offload"]["peak_bytes"] / 2**30))
PY
}

{
	printf '%s\n' "| export | parameters | ops | tensors | build+trace+write s |"\
" process s | peak RSS MiB | weights GiB | no-offload peak GiB |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
	row llama3-8b-train tests/torch/models.py:llama3_8b_train --mode train \
		--bf16 --loss "tests/torch/models.py:next_token_loss"
	row llama3-8b-prefill tests/torch/models.py:llama3_8b_prefill \
		--mode infer --bf16
	row resnet50-train-b64 torchvision:resnet50 --batch 64 --mode train
} | tee "$out"

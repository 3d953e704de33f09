#!/usr/bin/env bash
# torch_gen_compare.sh: `hoffopt gen llama3-8b` against a traced decoder of
# the same shape (tests/torch/models.py: hidden 4096, 32 layers, 32 heads,
# 8 KV heads, FFN 14336, vocab 128256, untied; bf16 weights and
# activations, fp32 Adam moments), full depth: parameter bytes and
# `hoffopt analyze`'s no-offload peak, prefill (KV cache written in place,
# logits of the last token) and a training step (Adam), at seq 512 and 4096.
# The traced model's attention is eager PyTorch 1.13 (no fused attention
# kernel): it materialises batch x heads x seq x seq score tensors, which
# gen's attention core does not; the table lists those bytes at the peak.
# Prints a markdown table; writes it to bench/results/torch_gen_compare.md.
# Usage: bench/studies/torch_gen_compare.sh [HOFFOPT]   (default build/hoffopt)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
tests/deps.sh python3-torch python3-torchvision
hoffopt=${1:-$root/build/hoffopt}
if [ ! -x "$hoffopt" ]; then
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build build -j "$(nproc)" --target hoffopt >/dev/null
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hoff-torch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p bench/results

PYTHONPATH=$root/formats/torch:$root/tests/torch /usr/bin/python3 - \
	"$hoffopt" "$tmp" <<'PY' | tee bench/results/torch_gen_compare.md
import json, subprocess, sys
import hoffopt_torch, models

hoffopt, tmp = sys.argv[1:]
GiB = 2**30


def analyze(path):
    r = subprocess.run([hoffopt, "analyze", path, "--json", "--top",
                        "100000"], check=True, capture_output=True, text=True)
    return json.loads(r.stdout)


print("| phase | seq | gen weights B | traced weights B | gen peak GiB "
      "| traced peak GiB | traced - gen | S^2 scores at the traced peak GiB "
      "| traced - scores - gen |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for phase, seq in (("prefill", 512), ("prefill", 4096), ("train", 512),
                   ("train", 4096)):
    gp = "%s/gen-%s-%d.json" % (tmp, phase, seq)
    subprocess.run([hoffopt, "gen", "llama3-8b", "--phase", phase, "--seq",
                    str(seq), "-o", gp], check=True)
    tp = "%s/torch-%s-%d.json" % (tmp, phase, seq)
    if phase == "train":
        hoffopt_torch.export(lambda: models.llama3_8b(seq), None, path=tp,
                             mode="train", bf16=True,
                             loss=models.next_token_loss)
    else:
        blocks = -(-seq // 2048) * 2048  # gen's KV blocks of 2048 tokens
        hoffopt_torch.export(
            lambda: models.llama3_8b(seq, last_only=True, cache=(1, blocks)),
            None, path=tp, mode="infer", bf16=True)
    g, t = analyze(gp), analyze(tp)
    score = 32 * seq * seq * 2  # batch 1 x heads x seq x seq, bf16
    at_peak = sum(x["bytes"] for x in t["no_offload"]["top"]
                  if x["bytes"] == score and x["kind"] == "activation")
    gpk, tpk = g["no_offload"]["peak_bytes"], t["no_offload"]["peak_bytes"]
    print("| %s | %d | %d | %d | %.2f | %.2f | %+.1f%% | %.2f | %+.1f%% |" % (
        phase, seq, g["bytes_by_kind"]["weight"], t["bytes_by_kind"]["weight"],
        gpk / GiB, tpk / GiB, 100.0 * (tpk - gpk) / gpk, at_peak / GiB,
        100.0 * (tpk - at_peak - gpk) / gpk))
PY

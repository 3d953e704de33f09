#!/usr/bin/env bash
# gpu_torch.sh: the PyTorch front end (formats/torch) on a GPU machine lent
# for minutes, in one command from the repository root: each model in its
# own python3 process under a timeout, the whole run within DEADLINE_S, a
# failing step logged and the rest going on.
#   versions   python3, torch, torchvision, CUDA, the GPU, hoffopt
#   MODEL      bench/gpu_torch.py MODEL for resnet18 (train, batch 8,
#              64 px), gpt (tests/torch/models.py, train) and vit
#              (vit_b_16, infer, image 32, weights on host): export, the
#              four plans and their simulated peaks, the CPU replay
#              (bit-equal), the CUDA replay (bit-equal to eager CUDA,
#              max_memory_allocated), a Kineto profile -> --times-from ->
#              planned makespan against the CUDA replay's wall time,
#              resnet18's --emit-python script on CUDA (see gpu_torch.py)
# hoffopt: HOFFOPT, else .gpu/bin/hoffopt from bench/gpu_bundle.sh (with
# its libraries, as bench/gpu_run.sh runs it), else build-rel/ or build/.
# Without a GPU the CUDA steps say so and are skipped (exit 0 if the rest
# is ok). Writes, under OUT (default: a temporary folder, printed):
#   torch.log   every step's output, tracebacks included
#   torch.json  {"versions": ..., "models": {MODEL: results}, "total_s"}
#   torch.md    one table: model, step, status, seconds, note
# Usage: bench/gpu_torch.sh [MODEL ...]   (default: resnet18 gpt vit)
# Env: OUT, DEADLINE_S (default 320), HOFFOPT, PYTHON (default python3,
#      else /usr/bin/python3).
# Exits 1 when a step failed or timed out, 0 otherwise.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
t_start=$(date +%s)
deadline=$((t_start + ${DEADLINE_S:-320}))
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(resnet18 gpt vit)
py=${PYTHON:-$(command -v python3 || echo /usr/bin/python3)}
# Debian's python3 has torch where the first python3 on PATH may not
"$py" -c 'import torch' 2>/dev/null || py=/usr/bin/python3
export PYTHONUNBUFFERED=1
# cuBLAS: one workspace configuration, deterministic results
export CUBLAS_WORKSPACE_CONFIG=${CUBLAS_WORKSPACE_CONFIG:-:4096:8}

out=${OUT:-}
if [ -z "$out" ]; then
	out=$(mktemp -d "${TMPDIR:-/tmp}/gpu-torch-out.XXXXXX")
	echo "gpu_torch: writing to $out"
fi
mkdir -p "$out"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpu-torch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
log=$out/torch.log
: >"$log"
logf() { printf '%s\n' "$*" | tee -a "$log"; }

# ---- hoffopt: the bundle's through a wrapper with its libraries ----
if [ -z "${HOFFOPT:-}" ] && [ -x .gpu/bin/hoffopt ]; then
	libs=$root/.gpu/lib
	if LD_LIBRARY_PATH=$libs ldd .gpu/bin/hoffopt 2>/dev/null |
		grep -q 'not found'; then
		libs=$libs:$root/.gpu/lib/sys
	fi
	mkdir -p "$tmp/bin"
	printf '#!/bin/sh\nLD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec %s "$@"\n' \
		"$libs" "$root/.gpu/bin/hoffopt" >"$tmp/bin/hoffopt"
	chmod +x "$tmp/bin/hoffopt"
	HOFFOPT=$tmp/bin/hoffopt
fi
if [ -z "${HOFFOPT:-}" ]; then
	for c in build-rel/hoffopt build/hoffopt; do
		[ -x "$c" ] && HOFFOPT=$root/$c && break
	done
fi
export HOFFOPT=${HOFFOPT:-hoffopt}

# ---- versions ----
logf "== gpu_torch $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git rev-parse --short HEAD 2>/dev/null || echo '?'), python $py, hoffopt $HOFFOPT"
{
	uname -a
	nvidia-smi 2>&1 | head -15
	cat .gpu/MANIFEST 2>/dev/null | head -3
	"$HOFFOPT" --version 2>&1 | head -2
} >>"$log" 2>&1
timeout -k 5 60 "$py" - >"$tmp/versions.json" 2>>"$log" <<'EOF'
import json, platform, sys
v = {"python": platform.python_version()}
try:
    import torch
    v["torch"] = torch.__version__
    v["cuda_available"] = torch.cuda.is_available()
    v["cuda"] = torch.version.cuda
    v["cudnn"] = torch.backends.cudnn.version() if \
        torch.backends.cudnn.is_available() else None
    if v["cuda_available"]:
        v["device"] = torch.cuda.get_device_name(0)
        v["capability"] = list(torch.cuda.get_device_capability(0))
        v["memory_bytes"] = torch.cuda.get_device_properties(0).total_memory
    import torchvision
    v["torchvision"] = torchvision.__version__
except Exception as e:
    v["error"] = "%s: %s" % (type(e).__name__, e)
print(json.dumps(v))
EOF
cat "$tmp/versions.json" | tee -a "$log"
if ! grep -q '"cuda_available": true' "$tmp/versions.json"; then
	logf "gpu_torch: no CUDA device (torch.cuda.is_available() is not true): the CUDA steps (cuda, profile, emit) are skipped; the CPU steps run"
fi

# ---- the models: each its own process and share of the time ----
declare -A want=([resnet18]=120 [gpt]=75 [vit]=100 [resnet18-big]=120)
failed=0
n=${#models[@]}
for i in "${!models[@]}"; do
	m=${models[$i]}
	left=$((deadline - $(date +%s) - 5))
	# keep 40 s for each model still to come
	rest=$(((n - i - 1) * 40))
	limit=${want[$m]:-100}
	[ $((left - rest)) -lt "$limit" ] && limit=$((left - rest))
	if [ "$limit" -lt 20 ]; then
		logf "== $m: skipped (no time left before DEADLINE_S)"
		failed=1
		continue
	fi
	logf "== $m (limit ${limit}s)"
	timeout -k 5 $((limit + 10)) "$py" -u bench/gpu_torch.py "$m" \
		--json "$tmp/$m.json" --tmp "$tmp/work" --limit "$limit" \
		>>"$log" 2>&1
	rc=$?
	logf "== $m: exit $rc"
	[ $rc -eq 0 ] || failed=1
	[ -f "$tmp/$m.json" ] || echo "{\"model\": \"$m\", \"exit\": $rc}" >"$tmp/$m.json"
done

# ---- torch.json, torch.md ----
total=$(($(date +%s) - t_start))
"$py" - "$tmp" "$out" "$total" "${models[@]}" <<'EOF' 2>>"$log"
import json, os, sys
tmp, out, total, models = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
    sys.argv[4:]
def load(p):
    try:
        with open(p) as f:
            return json.load(f)
    except Exception as e:
        return {"error": str(e)}
res = {"versions": load(os.path.join(tmp, "versions.json")),
       "models": {m: load(os.path.join(tmp, m + ".json")) for m in models},
       "total_s": total}
with open(os.path.join(out, "torch.json"), "w") as f:
    json.dump(res, f, indent=1)
rows = ["| model | step | status | seconds | note |", "|---|---|---|---:|---|"]
for m in models:
    for s, st in res["models"][m].get("steps", {}).items():
        rows.append("| %s | %s | %s | %s | %s |" % (
            m, s, st.get("status"), st.get("seconds", ""),
            str(st.get("note", "")).replace("|", "/")[:200]))
    if not res["models"][m].get("steps"):
        rows.append("| %s | - | no result | | exit %s |" % (
            m, res["models"][m].get("exit")))
with open(os.path.join(out, "torch.md"), "w") as f:
    f.write("\n".join(rows) + "\n")
print("\n".join(rows))
EOF
logf "gpu_torch: total ${total} s; $([ $failed = 0 ] && echo 'every step ok or skipped' || echo 'NOT every step ok (see torch.log)')"
cat "$out/torch.md" >>"$log" 2>/dev/null
exit $failed

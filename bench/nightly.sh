#!/usr/bin/env bash
# nightly.sh: the nightly benchmark — build hoffopt (Release, CUDA when nvcc
# is there), run the whole suite with bench/harness.py (every policy, the
# budget sweeps, exact on small graphs, the CPU executor, and the CUDA
# executor when a GPU is present), then compare with a stored previous
# results JSON and exit non-zero on a regression, printing what regressed.
#
# A regression: on the same job (graph/policy/budget) the peak or the
# makespan worse by more than --threshold; a job that now fails or no
# longer meets its budget; the executor's verification failing; solve time
# more than --solve-factor times the baseline's and above --solve-min s.
#
# Solve times are compared only on an idle machine: --timing auto (the
# default) compares them when the 1-minute load average is under a quarter
# of the cores, and says so when it does not (peaks and makespans, which
# the simulator computes, are always compared).
#
# Usage: bench/nightly.sh [--baseline PREV.json] [--threshold 0.05]
#                         [--solve-factor 2] [--solve-min 0.5]
#                         [--timing auto|on|off]
#                         [--out DIR] [--jobs N] [--hoffopt PATH]
#                         [--update-baseline] [--results NEW.json]
#   --baseline F       results to compare with (default
#                      bench/results/nightly/baseline.json when it exists;
#                      the first run without one becomes it)
#   --threshold X      relative slack on peak and makespan (default 0.05)
#   --solve-factor F   solve time regression factor (default 2)
#   --solve-min S      ...and only above S seconds (default 0.5)
#   --timing W         compare solve times: on, off, or auto (default:
#                      when the load average is under cores / 4)
#   --out DIR          where the run's results, table and plots go
#                      (default bench/results/nightly/run-UTCSTAMP)
#   --jobs N           parallel jobs (default: harness's, min(2, cores))
#   --hoffopt PATH     use this binary instead of building build-nightly/
#   --update-baseline  after the run, make its results the default baseline
#   --results F        do not run anything: compare F with the baseline
#                      (what tests/test_nightly.sh drives)
# Env: HOFF_NIGHTLY_TIMEOUT (seconds for the whole suite, default 10800).
# Exit: 0 no regression, 1 regression, 2 usage, build or harness failure.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
here=$root/bench
py=${PYTHON:-python3}
baseline= threshold=0.05 sfactor=2 smin=0.5 out= jobs= hoff= update=0 results=
timing=auto

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }
need() { [ $# -ge 2 ] || { echo "nightly.sh: $1 needs a value" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) usage; exit 0 ;;
	--baseline) need "$@"; baseline=$2; shift 2 ;;
	--threshold) need "$@"; threshold=$2; shift 2 ;;
	--solve-factor) need "$@"; sfactor=$2; shift 2 ;;
	--solve-min) need "$@"; smin=$2; shift 2 ;;
	--timing) need "$@"; timing=$2; shift 2 ;;
	--out) need "$@"; out=$2; shift 2 ;;
	--jobs | -j) need "$@"; jobs=$2; shift 2 ;;
	--hoffopt) need "$@"; hoff=$2; shift 2 ;;
	--update-baseline) update=1; shift ;;
	--results) need "$@"; results=$2; shift 2 ;;
	*) echo "nightly.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done

case $timing in
auto | on | off) ;;
*) echo "nightly.sh: --timing: '$timing' is not auto, on or off" >&2; exit 2 ;;
esac

# timing_on: whether solve times are compared now (--timing, or for auto
# an idle machine: the 1-minute load average under a quarter of the
# cores); says why not when they are not.
timing_on() {
	[ "$timing" != on ] || return 0
	if [ "$timing" = off ]; then
		echo "nightly: solve times not compared (--timing off)"
		return 1
	fi
	local load cores
	load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
	cores=$(nproc 2>/dev/null || echo 1)
	if awk -v l="$load" -v c="$cores" 'BEGIN { exit !(l < c / 4) }'; then
		return 0
	fi
	echo "nightly: solve times not compared: load average $load on" \
		"$cores cores (idle: under $cores / 4)"
	return 1
}

compare() { # compare OLD NEW: prints regressions; returns 0, 1 or 2
	local rc=0 min=$smin
	timing_on || min=1e18 # no solve time is that long
	"$py" "$here/harness.py" compare "$1" "$2" --threshold "$threshold" \
		--solve-factor "$sfactor" --solve-min "$min" || rc=$?
	return "$rc"
}

# Compare-only mode.
if [ -n "$results" ]; then
	[ -n "$baseline" ] || { echo "nightly.sh: --results needs --baseline" >&2; exit 2; }
	rc=0
	compare "$baseline" "$results" || rc=$?
	exit "$rc"
fi

nightly=$root/bench/results/nightly
default_baseline=$nightly/baseline.json
[ -n "$baseline" ] || { [ -f "$default_baseline" ] && baseline=$default_baseline; } || true
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out=${out:-$nightly/run-$stamp}
mkdir -p "$out" "$nightly"

# The GPU: the CUDA executor runs when nvidia-smi lists one.
gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && timeout 60 nvidia-smi -L 2>/dev/null | grep -q GPU; then
	gpu=1
	echo "nightly: GPU present: $(timeout 60 nvidia-smi -L | head -1); the CUDA executor runs"
elif command -v nvidia-smi >/dev/null 2>&1; then
	echo "nightly: no GPU (nvidia-smi -L lists none): skipping the CUDA executor"
else
	echo "nightly: no GPU (no nvidia-smi): skipping the CUDA executor"
fi

if [ -z "$hoff" ]; then
	"$root/tests/deps.sh" || { echo "nightly.sh: tests/deps.sh failed" >&2; exit 2; }
	"$root/tests/deps.sh" python3-matplotlib >/dev/null 2>&1 ||
		echo "nightly: could not install python3-matplotlib: plots will be skipped"
	echo "nightly: building $root/build-nightly (Release)"
	if ! timeout 1800 cmake -S "$root" -B "$root/build-nightly" -DCMAKE_BUILD_TYPE=Release \
		-DHOFF_SANITIZE=OFF -DHOFF_WERROR=OFF -DBUILD_TESTING=OFF >"$out/build.log" 2>&1 ||
		! timeout 3600 cmake --build "$root/build-nightly" -j "$(nproc)" --target hoffopt \
			>>"$out/build.log" 2>&1; then
		tail -20 "$out/build.log" >&2
		echo "nightly.sh: build failed (log: $out/build.log)" >&2
		exit 2
	fi
	hoff=$root/build-nightly/hoffopt
	if [ "$gpu" = 1 ] && [ ! -f "$root/build-nightly/runtime/libhoff_cuda.a" ]; then
		echo "nightly: warning: a GPU is present but hoffopt was built without CUDA (no nvcc?); the CUDA executor jobs will fail"
	fi
fi
[ -x "$hoff" ] || { echo "nightly.sh: no executable hoffopt at $hoff" >&2; exit 2; }

args=(all --hoffopt "$hoff" --out "$out")
[ -z "$jobs" ] || args+=(--jobs "$jobs")
echo "nightly: running the suite into $out"
hrc=0
timeout "${HOFF_NIGHTLY_TIMEOUT:-10800}" "$py" "$here/harness.py" "${args[@]}" || hrc=$?
if [ "$hrc" != 0 ] || [ ! -f "$out/results.json" ]; then
	echo "nightly.sh: the harness failed (exit $hrc)" >&2
	exit 2
fi
new=$out/results.json
if [ "$new" != "$nightly/run-$stamp/results.json" ]; then
	cp "$new" "$nightly/results-$stamp.json.tmp.$$"
	mv "$nightly/results-$stamp.json.tmp.$$" "$nightly/results-$stamp.json"
	echo "nightly: results $new (a copy in $nightly/results-$stamp.json)"
else
	echo "nightly: results $new"
fi
"$py" - "$new" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
st = {}
for e in d["entries"]:
    st[e.get("status")] = st.get(e.get("status"), 0) + 1
print("nightly: %d jobs: %s" % (len(d["entries"]),
      ", ".join("%d %s" % (v, k) for k, v in sorted(st.items()))))
for e in d["entries"]:
    if e.get("status") == "error":
        print("nightly: error: %s: %s" % (e["id"], e.get("error")))
PY

rc=0
if [ -n "$baseline" ]; then
	echo "nightly: comparing with $baseline"
	compare "$baseline" "$new" || rc=$?
else
	echo "nightly: no baseline to compare with; this run becomes $default_baseline"
	update=1
fi
if [ "$update" = 1 ]; then
	cp "$new" "$default_baseline.tmp.$$" && mv "$default_baseline.tmp.$$" "$default_baseline"
	echo "nightly: baseline is now $default_baseline"
fi
[ "$rc" -le 1 ] || rc=2
exit "$rc"

#!/usr/bin/env bash
# report.sh: regenerates the benchmark's results from scratch in one
# command — installs what is missing (tests/deps.sh, plus python3-matplotlib
# for the plots), builds a Release hoffopt in build-bench/ (the tree
# bench_scale.sh uses), then runs `bench/harness.py all`: every policy on
# every graph, the budget sweeps, exact and the executors on small graphs.
# Writes bench/results/results.json, table.md, headline.md, memory-*.png
# and pareto.png, and prints the time it took.
# Usage: bench/report.sh [harness.py all options, e.g. --jobs 4 --out DIR]
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
case ${1:-} in -h | --help)
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
	exit 0 ;;
esac
t0=$(date +%s)
"$root/tests/deps.sh"
"$root/tests/deps.sh" python3-matplotlib ||
	echo "report.sh: no python3-matplotlib: tables only, no plots" >&2
timeout 1800 cmake -S "$root" -B "$root/build-bench" -DCMAKE_BUILD_TYPE=Release \
	-DHOFF_SANITIZE=OFF -DHOFF_WERROR=OFF -DBUILD_TESTING=OFF >/dev/null
timeout 3600 cmake --build "$root/build-bench" -j "$(nproc)" --target hoffopt >/dev/null
timeout "${HOFF_REPORT_TIMEOUT:-10800}" "${PYTHON:-python3}" "$root/bench/harness.py" all \
	--hoffopt "$root/build-bench/hoffopt" "$@"
echo "report.sh: done in $(($(date +%s) - t0)) s (build included)"

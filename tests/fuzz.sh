#!/bin/sh
# fuzz.sh: coverage-guided fuzzing of the graph.json and schedule.json
# readers with libFuzzer. Builds the targets with clang (ASan + UBSan) in a
# build directory of its own, then runs each target for a bounded time,
# starting from tests/corpus/<kind> and the dictionary tests/corpus/json.dict.
# New inputs go to BUILD_DIR/corpus/<kind>, crashes to BUILD_DIR/crashes/.
#
#   tests/fuzz.sh [SECONDS_PER_TARGET] [BUILD_DIR]
#
# Defaults: 60 s per target, ${TMPDIR:-/tmp}/hoffopt-fuzz. Needs clang with
# the libFuzzer runtime (Debian: libclang-rt-14-dev). Exit status is
# libFuzzer's: non-zero when a target crashed. Reproduce a crash with
#   BUILD_DIR/tests/fuzz_graph BUILD_DIR/crashes/crash-...
# or through the plain driver: build/tests/fuzz_driver_graph DIR_WITH_IT 0
set -eu

secs=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${2:-${TMPDIR:-/tmp}/hoffopt-fuzz}
cc=${CC:-clang}
jobs=$(nproc 2>/dev/null || echo 2)

CC=$cc cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DHOFF_CUDA=OFF -DHOFF_OPENMP=OFF >/dev/null
cmake --build "$build" -j"$jobs" --target fuzz_graph fuzz_sched

mkdir -p "$build/crashes"
status=0
for kind in graph sched; do
	mkdir -p "$build/corpus/$kind"
	echo "fuzz.sh: fuzz_${kind} for ${secs} s"
	"$build/tests/fuzz_${kind}" \
		-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-max_len=16384 -print_final_stats=1 \
		-dict="$root/tests/corpus/json.dict" \
		-artifact_prefix="$build/crashes/${kind}-" \
		"$build/corpus/$kind" "$root/tests/corpus/$kind" || status=$?
done
exit $status

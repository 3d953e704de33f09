#!/usr/bin/env bash
# run.sh: the test command — dependencies, clang-format on the lines changed
# since .ci/format-base (tests/check_format.sh), a from-scratch Debug build with
# ASan/UBSan and -Werror in build-test/, then every ctest test; then a
# second configuration, ThreadSanitizer in build-tsan/ (no CUDA; no OpenMP,
# since libgomp is not instrumented, and so no -Werror: the omp pragmas
# warn), built and run for the executor tests test_exec_* only, where a
# ThreadSanitizer report or a failed assertion fails the run. Exits with the first failing
# status. Runs from any directory. HOFF_TSAN=0 skips the second part.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# CBC: test_ilp checks that it finds the optimum GLPK proved; torch and
# torchvision: the PyTorch front end's tests (tests/torch)
tests/deps.sh coinor-cbc python3-torch python3-torchvision clang-format

# clang-format on the lines changed since .ci/format-base
status=0
tests/check_format.sh || status=$?

rm -rf build-test
cmake -S . -B build-test -DHOFF_SANITIZE=ON -DHOFF_WERROR=ON \
	-DCMAKE_BUILD_TYPE=Debug
cmake --build build-test -j "$(nproc)"
(cd build-test && ctest --output-on-failure -j "$(nproc)") || status=$?

if [ "${HOFF_TSAN:-1}" != 0 ]; then
	rm -rf build-tsan
	cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DHOFF_CUDA=OFF -DHOFF_OPENMP=OFF \
		"-DCMAKE_C_FLAGS=-fsanitize=thread -fno-omit-frame-pointer" \
		-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread
	mapfile -t execs < <(cd tests && ls test_exec_*.c | sed 's/\.c$//')
	cmake --build build-tsan -j "$(nproc)" --target "${execs[@]}"
	# A data race (any ThreadSanitizer report) fails the run: exit 66.
	# HOFF_SANITIZED leaves out the checks of how long things took (a
	# 5-15x slowdown); every other assertion holds, and a failed one
	# fails the run as under ASan.
	for e in "${execs[@]}"; do
		t=$root/build-tsan/tests/$e
		rc=0
		(cd build-tsan && HOFF_SRC_DIR="$root" \
			HOFF_SHARED_DIR="$root/../shared" \
			HOFF_BIN_DIR="$root/build-tsan" HOFF_SANITIZED=1 \
			TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" \
			"$t" > "$t.log" 2>&1) || rc=$?
		if [ "$rc" = 66 ] || grep -q "WARNING: ThreadSanitizer" "$t.log"; then
			cat "$t.log"
			echo "run.sh: $e: ThreadSanitizer report" >&2
			[ "$status" != 0 ] || status=66
		elif [ "$rc" != 0 ]; then
			cat "$t.log"
			echo "run.sh: $e under TSan: exit $rc" >&2
			[ "$status" != 0 ] || status=$rc
		else
			echo "run.sh: $e under TSan: passed, no race"
		fi
	done
fi
exit "$status"

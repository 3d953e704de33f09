#!/usr/bin/env bash
# run.sh: the test command — dependencies, a from-scratch Debug build with
# ASan/UBSan and -Werror in build-test/, then every ctest test; then a
# second configuration, ThreadSanitizer in build-tsan/ (no CUDA, no
# OpenMP: libgomp is not instrumented), built and run for the executor
# tests test_exec_* only (about a minute). Exits with the first failing
# status. Runs from any directory. HOFF_TSAN=0 skips the second part.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# CBC: test_ilp checks that it finds the optimum GLPK proved
tests/deps.sh coinor-cbc

rm -rf build-test
cmake -S . -B build-test -DHOFF_SANITIZE=ON -DHOFF_WERROR=ON \
	-DCMAKE_BUILD_TYPE=Debug
cmake --build build-test -j "$(nproc)"
status=0
(cd build-test && ctest --output-on-failure -j "$(nproc)") || status=$?

if [ "${HOFF_TSAN:-1}" != 0 ]; then
	rm -rf build-tsan
	cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DHOFF_CUDA=OFF -DHOFF_OPENMP=OFF \
		"-DCMAKE_C_FLAGS=-fsanitize=thread -fno-omit-frame-pointer" \
		-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread
	cmake --build build-tsan -j "$(nproc)" --target test_exec_arena \
		test_exec_cpu test_exec_cuda
	# halt_on_error: a data race fails the test, not only a report
	(cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
		ctest --output-on-failure -j "$(nproc)" -R '^test_exec_') ||
		{ rc=$?; [ "$status" != 0 ] || status=$rc; }
fi
exit "$status"

#!/usr/bin/env bash
# run.sh: the test command — dependencies, a from-scratch Debug build with
# ASan/UBSan and -Werror in build-test/, then every ctest test. Exits with
# ctest's status. Runs from any directory.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# CBC: test_ilp checks that it finds the optimum GLPK proved; torch and
# torchvision: the PyTorch front end's tests (tests/torch)
tests/deps.sh coinor-cbc python3-torch python3-torchvision

rm -rf build-test
cmake -S . -B build-test -DHOFF_SANITIZE=ON -DHOFF_WERROR=ON \
	-DCMAKE_BUILD_TYPE=Debug
cmake --build build-test -j "$(nproc)"
cd build-test
status=0
ctest --output-on-failure -j "$(nproc)" || status=$?
exit "$status"

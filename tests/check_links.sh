#!/usr/bin/env bash
# check_links.sh BIN_DIR: the layering at link time (README "Layout") — no test
# program but test_exec_cuda links the CUDA backend or the CUDA runtime
# (the libraries never name CUDA; only the hoffopt executable hands the
# backend to `run` and `calibrate`). When the build has the backend,
# test_exec_cuda and hoffopt must show it: the check can see a link.
set -u
dir=$1
# links BIN: whether BIN carries the CUDA backend or needs libcudart
links() {
	nm "$1" 2>/dev/null | grep -q ' T hoff_backend_cuda_new$' ||
		ldd "$1" 2>/dev/null | grep -q 'libcudart'
}
fail=0
n=0
for t in "$dir"/tests/test_* "$dir"/tests/fuzz_driver_*; do
	[ -x "$t" ] && [ -f "$t" ] || continue
	case $(basename "$t") in
	test_exec_cuda) continue ;;
	esac
	n=$((n + 1))
	if links "$t"; then
		echo "check_links: $(basename "$t") links CUDA" >&2
		fail=1
	fi
done
if [ -f "$dir/runtime/libhoff_cuda.a" ]; then
	for t in "$dir/tests/test_exec_cuda" "$dir/hoffopt"; do
		if ! links "$t"; then
			echo "check_links: $t should link CUDA and does not" >&2
			fail=1
		fi
	done
fi
[ "$n" -gt 0 ] || { echo "check_links: no test programs in $dir/tests" >&2; exit 1; }
echo "check_links: $n test programs, $([ $fail = 0 ] && echo none links CUDA || echo FAIL)"
exit $fail

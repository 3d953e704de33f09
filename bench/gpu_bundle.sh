#!/usr/bin/env bash
# gpu_bundle.sh: builds, on this machine, what bench/gpu_run.sh needs on a
# bare GPU machine (CUDA toolkit, python3; no GLPK, cJSON or cmocka, no
# package manager, no network), into the ignored folder .gpu/:
#   .gpu/bin/hoffopt, .gpu/bin/test_exec_cuda   (Release, CUDA on, sm_80
#                                                and sm_90 code + PTX)
#   .gpu/lib/      the shared libraries they load that are not the C
#                  library's own (libc, libm, libpthread, libdl, librt,
#                  the loader) nor the driver's (libcuda): GLPK, cJSON,
#                  cmocka and their dependencies, the CUDA runtime
#   .gpu/lib/sys/  the compiler's runtimes (libstdc++, libgcc_s, libgomp):
#                  gpu_run.sh adds them only where the machine lacks them
#   .gpu/MANIFEST  commit, compilers, each binary's libraries
# Then, on the GPU machine, from the repository root: bench/gpu_run.sh
# (carry .gpu). Usage: bench/gpu_bundle.sh. Env: JOBS (default 2),
# CUDA_ARCHS (default "80;90").
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
PATH=$PATH:/usr/local/cuda/bin
if ! command -v nvcc >/dev/null 2>&1; then
	echo "gpu_bundle: no CUDA compiler (nvcc): cannot build the CUDA backend" >&2
	exit 2
fi

cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DHOFF_CUDA=ON \
	-DHOFF_SANITIZE=OFF -DHOFF_WERROR=ON \
	-DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-80;90}" >/dev/null
cmake --build build-gpu -j "${JOBS:-2}" --target hoffopt test_exec_cuda \
	>/dev/null

rm -rf .gpu
mkdir -p .gpu/bin .gpu/lib/sys
cp build-gpu/hoffopt build-gpu/tests/test_exec_cuda .gpu/bin/

# Libraries: every one ldd resolves, less the C library's and the
# driver's; the compiler runtimes apart.
for b in .gpu/bin/*; do
	ldd "$b" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }'
done | sort -u | while read -r name path; do
	case "$name" in
	libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | \
		ld-linux*.so.* | libcuda.so.* | linux-vdso.so.*) ;;
	libstdc++.so.* | libgcc_s.so.* | libgomp.so.*)
		cp -L "$path" ".gpu/lib/sys/$name" ;;
	*) cp -L "$path" ".gpu/lib/$name" ;;
	esac
done

{
	echo "commit $(git rev-parse HEAD 2>/dev/null || echo none)$(git diff --quiet 2>/dev/null || echo ' (modified)')"
	echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n), $(ldd --version | head -1)"
	nvcc --version | tail -1
	echo "cuda archs ${CUDA_ARCHS:-80;90}"
	for b in .gpu/bin/*; do
		echo "== $b"
		ldd "$b"
	done
} >.gpu/MANIFEST
# The data/ graphs travel with the working tree; the bundle is binaries.
du -sh .gpu | awk '{ print "gpu_bundle: .gpu is " $1 }'
ls .gpu/lib .gpu/lib/sys | sed 's/^/  /'

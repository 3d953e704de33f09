#!/usr/bin/env bash
# check_format.sh [BASE]: the C sources' lines changed since BASE (default:
# the commit in .ci/format-base, from which on every change is formatted)
# are as .clang-format wants them (git clang-format). Prints the diff
# clang-format would apply and exits 1 when there is one. A clone without
# BASE in its history (shallow) skips, saying so.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
base=${1:-${HOFF_FORMAT_BASE:-$(cat .ci/format-base)}}
if ! git rev-parse -q --verify "$base^{commit}" >/dev/null; then
	echo "check_format: $base is not in this clone's history: skipped"
	exit 0
fi
out=$(git clang-format --diff --extensions c,h "$base" 2>&1) || true
case $out in
"" | "no modified files to format" | *"did not modify any files"*)
	echo "check_format: lines changed since ${base:0:12} are formatted"
	exit 0
	;;
esac
printf '%s\n' "$out"
echo "check_format: lines changed since ${base:0:12} differ from" \
	".clang-format (fix: git clang-format $base)" >&2
exit 1

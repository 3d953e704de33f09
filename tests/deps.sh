#!/usr/bin/env bash
# deps.sh: installs what the build needs on a fresh Debian or Ubuntu machine.
# Checks each package with dpkg -s and installs only the missing ones
# (apt-get, through sudo when not root; waiting while another apt holds
# the lock, up to HOFF_APT_WAIT seconds). Quiet when all are present.
# Usage: tests/deps.sh [extra-package ...]
set -euo pipefail

pkgs=(cmake gcc make pkg-config libglpk-dev libcjson-dev libcmocka-dev "$@")
missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg -s "$p" >/dev/null 2>&1; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
	echo "deps.sh: missing ${missing[*]} and no apt-get to install them" >&2
	exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		sudo=(sudo)
	else
		echo "deps.sh: missing ${missing[*]}; run as root or install sudo" >&2
		exit 1
	fi
fi
# apt ARGS...: apt-get ARGS, again every HOFF_APT_POLL seconds (5) while
# another apt or dpkg holds its lock ("Could not get lock"), for up to
# HOFF_APT_WAIT seconds (600); then, or on any other failure, its exit code.
apt() {
	local deadline=$((SECONDS + ${HOFF_APT_WAIT:-600})) err rc
	err=$(mktemp)
	while :; do
		rc=0
		"${sudo[@]}" apt-get "$@" 2>"$err" || rc=$?
		if [ "$rc" = 0 ] || ! grep -q "Could not get lock" "$err" ||
			[ "$SECONDS" -ge "$deadline" ]; then
			cat "$err" >&2
			rm -f "$err"
			return "$rc"
		fi
		echo "deps.sh: another apt holds its lock; waiting" \
			"(up to ${HOFF_APT_WAIT:-600} s)" >&2
		sleep "${HOFF_APT_POLL:-5}"
	done
}
echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt update -qq
apt install -y -qq --no-install-recommends "${missing[@]}"

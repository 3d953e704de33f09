#!/usr/bin/env bash
# deps.sh: installs what the build needs on a fresh Debian or Ubuntu machine.
# Checks each package with dpkg -s and installs only the missing ones
# (apt-get, through sudo when not root). Quiet when all are present.
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
echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"

#!/usr/bin/env bash
# gen_same.sh OLD_BIN_DIR NEW_BIN_DIR: the graphs generators write are the
# same byte for byte with both builds. Runs `hoffopt gen` over every model
# x phase x machine x shape option (--kv, --weights, --optimizer-step,
# --optimizer-home) and over sweeps of --seq, --batch, --layers,
# --kv-block and --seed, and `hoff-gen-synth` over op counts x --shape x
# --home x --tiers x --layers x --seed, --memory and --schedule-none, plus
# rejected options of both. For each case it compares, with cmp, the files
# written (graph, schedule), stderr and the exit status.
# FULL=1 adds the two 1M-op synth graphs (about 10 s and 600 MB of /tmp
# each). V1=1 passes --v1 to the new build's `hoffopt gen` (FORMAT v2:
# the version-1 graph a build before v2 wrote, byte for byte) and leaves
# out `gen --list` (presets were added). Prints one line a difference and
# a summary; exit 1 on any.
set -u
if [ $# -ne 2 ]; then
	echo "usage: $0 OLD_BIN_DIR NEW_BIN_DIR" >&2
	exit 2
fi
old=$(cd "$1" && pwd) new=$(cd "$2" && pwd) || exit 2
for d in "$old" "$new"; do
	for b in hoffopt hoff-gen-synth; do
		[ -x "$d/$b" ] || { echo "$0: no $d/$b" >&2; exit 2; }
	done
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ncase=0 ndiff=0 nfail=0

# run DIR SIDE BIN ARGS...: files under $tmp/SIDE, stderr, status.
run() {
	local dir=$1 side=$2 bin=$3
	shift 3
	local extra=()
	if [ "${V1:-0}" = 1 ] && [ "$side" = b ] && [ "$bin" = hoffopt ]; then
		extra=(--v1)
	fi
	mkdir -p "$tmp/$side"
	(cd "$tmp/$side" && "$dir/$bin" "$@" "${extra[@]}" >out 2>err; echo $? >rc)
}

# same BIN ARGS...: one case; ARGS write their files into the current
# folder (relative names).
same() {
	local bin=$1
	shift
	rm -rf "$tmp/a" "$tmp/b"
	run "$old" a "$bin" "$@"
	run "$new" b "$bin" "$@"
	ncase=$((ncase + 1))
	[ "$(cat "$tmp/a/rc")" = 0 ] || nfail=$((nfail + 1))
	local f bad=
	for f in $(cd "$tmp/a" && ls); do
		cmp -s "$tmp/a/$f" "$tmp/b/$f" || bad="$bad $f"
	done
	[ "$(cd "$tmp/a" && ls)" = "$(cd "$tmp/b" && ls)" ] || bad="$bad (files)"
	if [ -n "$bad" ]; then
		ndiff=$((ndiff + 1))
		echo "DIFF$bad: $bin $*"
	fi
}

gen() { same hoffopt gen "$@" -o g.json; }

# opts NAME VALUE ...: sets a to the pairs whose VALUE is not "-".
opts() {
	a=()
	while [ $# -ge 2 ]; do
		[ "$2" = - ] || a+=("$1" "$2")
		shift 2
	done
}

models="llama3-8b llama3-70b mixtral-8x7b deepseek-v3"
machines="h100-pcie5 h200 gh200 supernode"

# Every model x machine x inference phase x --kv x --weights, and x train
# and its options.
for m in $models; do
	for mc in $machines; do
		for ph in prefill decode; do
			for kv in - auto device host; do
				for w in - auto device host; do
					opts --kv "$kv" --weights "$w"
					gen "$m" --phase "$ph" --machine "$mc" \
						"${a[@]}"
				done
			done
		done
		# train x --optimizer-step x --optimizer-home at full depth
		# (the default seq), and x --weights at 2 layers, seq 512.
		for st in - end in-backward; do
			for oh in - host device; do
				opts --optimizer-step "$st" --optimizer-home "$oh"
				gen "$m" --phase train --machine "$mc" "${a[@]}"
				for w in - device host; do
					opts --optimizer-step "$st" \
						--optimizer-home "$oh" --weights "$w"
					gen "$m" --phase train --machine "$mc" \
						--layers 2 --seq 512 "${a[@]}"
				done
			done
		done
	done
done

# Sweeps of the sizes, the depth and the routing seed.
for m in $models; do
	for ph in prefill decode train; do
		for seq in 1 7 2047 2048 2049 32768; do
			gen "$m" --phase "$ph" --seq "$seq" --layers 4
		done
		for b in 2 5; do
			gen "$m" --phase "$ph" --batch "$b" --seq 300
		done
		for l in 1 2 3 4 5; do
			gen "$m" --phase "$ph" --layers "$l"
		done
		for s in 0 2 7 12345 18446744073709551615; do
			gen "$m" --phase "$ph" --seed "$s" --layers 6
		done
	done
	for ph in prefill decode; do
		for kb in 1 64 100 4096 65536; do
			gen "$m" --phase "$ph" --kv-block "$kb" --seq 4000 \
				--layers 3
			gen "$m" --phase "$ph" --kv-block "$kb" --seq 4000 \
				--layers 3 --kv device --machine supernode
		done
	done
	gen "$m" --phase train --batch 4 --seq 1024 --layers 3 \
		--optimizer-step in-backward --optimizer-home device
	gen "$m" --phase decode --batch 64 --seq 32768 --kv host \
		--machine supernode
done

# Rejected options: the same message and status.
gen gpt-5
gen llama3-8b --machine tpu
gen llama3-8b --phase serve
gen llama3-8b --weights disk
gen llama3-8b --kv disk
gen llama3-8b --phase train --kv host
gen llama3-8b --phase train --optimizer-step never
gen llama3-8b --phase train --optimizer-home disk
gen llama3-8b --phase decode --optimizer-step end
gen llama3-8b --phase prefill --optimizer-home device
gen llama3-8b --layers 33
gen deepseek-v3 --layers 62
gen llama3-8b --seq 16777216 --batch 65536
gen llama3-8b --kv-block 1 --seq 16000000
gen deepseek-v3 --phase train --machine gh200
gen deepseek-v3 --phase train --machine h100-pcie5 --seq 65536
gen llama3-70b --phase decode --kv host --kv-block 64
[ "${V1:-0}" = 1 ] || same hoffopt gen --list

# hoff-gen-synth: op counts (cut points) x shape x home x tiers x layers
# x seed.
synth() { same hoff-gen-synth "$@" -o g.json; }
for n in 1 2 37 1000 10000; do
	for sh in infer train; do
		for home in device host; do
			for t in 1 2; do
				for l in 32 1 3; do
					for sd in 1 99; do
						synth --ops "$n" --shape "$sh" \
							--home "$home" --tiers "$t" \
							--layers "$l" --seed "$sd"
					done
				done
			done
		done
	done
done
for sh in infer train; do
	for home in device host; do
		for t in 1 2; do
			synth --ops 100000 --shape "$sh" --home "$home" \
				--tiers "$t" --schedule-none s.json
		done
	done
	for mem in 1000M 64G 3T 123456789; do
		synth --ops 10000 --shape "$sh" --memory "$mem"
	done
	synth --ops 20000 --shape "$sh" --layers 61 --seed 7 \
		--schedule-none s.json
	synth --ops 50000 --shape "$sh" --layers 200 --memory 80G
	if [ "${FULL:-0}" = 1 ]; then
		synth --ops 1000000 --shape "$sh"
	fi
done
synth --ops 0
synth --ops 10000001
synth --ops 10 --layers 0
synth --ops 10 --tiers 3
synth --ops 10 --shape decode
synth --ops 10 --home disk
synth --ops 10 --memory 0
synth --ops 10 --seed -1

echo "gen_same: $ncase cases ($nfail rejected or failed alike), $((ncase - ndiff)) identical, $ndiff differ"
[ "$ndiff" = 0 ]

# exact_opts.sh: sourced (not run) by bench/studies/exact_scale.sh,
# probe_cbc.sh and greedy_exact.sh, after they set root: their defaults
# (hoff, the hoffopt binary: build/hoffopt; limit, exact's time limit:
# 60 s) and the options they share.
# - exact_opts SPEC "$@": getopts with SPEC, which has b: (hoff) and t:
#   (limit); any other letter of SPEC goes to the caller's own_opt LETTER
#   ARG, a bad option to its usage. nopts is then the count to shift.
# - need_hoff: exits 2 with a message unless hoff is an executable.
hoff=$root/build/hoffopt
limit=60
exact_opts() {
	local spec=$1 o
	shift
	OPTIND=1
	while getopts "$spec" o; do
		case $o in
		b) hoff=$OPTARG ;;
		t) limit=$OPTARG ;;
		\?) usage ;;
		*) own_opt "$o" "${OPTARG:-}" ;;
		esac
	done
	nopts=$((OPTIND - 1))
}
need_hoff() {
	[ -x "$hoff" ] || {
		echo "$(basename "$0"): no hoffopt at $hoff (build first)" >&2
		exit 2
	}
}

# small_graphs.sh: sourced (not run) by bench/studies/probe_cbc.sh and
# greedy_exact.sh, and by bench/same_output.sh (with no op cap). After
# getopts, split_args "$@" puts the .json arguments in graphs and the
# rest (the hoffopt options after "--") in extra; with no graph given,
# the hoffopt graphs of data/ with at most $maxops ops (MAXOPS, default
# 150) are taken.
maxops=${MAXOPS:-150}
split_args() {
	extra=()
	graphs=()
	local a g n
	for a in "$@"; do
		case $a in
		--) ;;
		*.json) graphs+=("$a") ;;
		*) extra+=("$a") ;;
		esac
	done
	[ ${#graphs[@]} -gt 0 ] && return 0
	for g in "$root"/data/*.json; do
		case $g in *.schedule.json) continue ;; esac
		n=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(len(d['ops']) if d.get('format')=='hoffopt.graph' else 0)" "$g")
		[ "$n" -gt 0 ] && [ "$n" -le "$maxops" ] && graphs+=("$g")
	done
	return 0
}

#!/bin/bash
# gccwork.sh counts what gcc spends on a unit's woven text against the same
# unit unwoven: instructions (callgrind) of cc1 and as, and cc1's main
# phases, for `gcc -c` on each preprocessed text. Slow (callgrind runs
# about 30M instructions a second): run it by hand.
#
#   scripts/gccwork.sh FILE.c [cc flags]   e.g. lapi.c -std=gnu99 -O2 -DLUA_USE_LINUX
#
# The weave is $WEAVE, or built from this tree; the compiler $CC (default
# gcc, the only one whose phases are named). Instruction counts, unlike
# times, do not move with the machine's load.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 FILE.c [cc flags]" >&2; exit 2; }
src=$1
shift
repo=$(cd "$(dirname "$0")/.." && pwd)
cc=${CC:-gcc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
weave=${WEAVE:-}
if [ -z "$weave" ]; then
	(cd "$repo" && go build -o "$tmp/weave" ./cmd/weave)
	weave=$tmp/weave
fi
"$cc" "$@" -E "$src" -o "$tmp/plain.i"
WEAVE_CC=$cc "$weave" -o "$tmp/woven.i" "$src" "$@"

# total DIR PROG: the instructions of the process whose command is PROG.
total() {
	local f
	for f in "$1"/cg.*; do
		if head -20 "$f" | grep -Eq "^cmd: +([^ ]*/)?$2 "; then
			grep '^summary:' "$f" | awk '{print $2}'
			return
		fi
	done
	echo 0
}
# phase DIR FUNCTION: cc1's inclusive instructions in FUNCTION.
phase() {
	local f
	for f in "$1"/cg.*; do
		if head -20 "$f" | grep -Eq '^cmd: +([^ ]*/)?cc1 '; then
			callgrind_annotate --inclusive=yes --threshold=100 "$f" 2>/dev/null |
				grep -F -- "$2" | head -1 | awk '{gsub(",", "", $1); print $1}'
			return
		fi
	done
}
for kind in plain woven; do
	mkdir "$tmp/$kind"
	valgrind --tool=callgrind --trace-children=yes \
		--callgrind-out-file="$tmp/$kind/cg.%p" \
		"$cc" "$@" -c "$tmp/$kind.i" -o "$tmp/$kind.o" >/dev/null 2>&1 ||
		{ echo "$0: $cc -c $kind.i failed" >&2; exit 1; }
done
row() { # row LABEL PLAIN WOVEN (instructions)
	awk -v l="$1" -v p="${2:-0}" -v w="${3:-0}" 'BEGIN {
		printf "%-44s %9.1f %9.1f %+9.1f", l, p/1e6, w/1e6, (w-p)/1e6
		if (p > 0) printf "  %.2fx", w/p
		printf "\n" }'
}
echo "$src: instructions, millions      plain     woven      diff"
row "cc1" "$(total "$tmp/plain" cc1)" "$(total "$tmp/woven" cc1)"
for p in 'c_parse_file()' 'execute_ipa_pass_list(' 'cgraph_node::expand()' \
	'ira_build()' 'ira_color()' 'ira_costs()' 'lra(' \
	'sched_rgn_compute_dependencies(' 'df_analyze()' 'final_scan_insn(' \
	'compute_may_aliases()' 'optimize_inline_calls(' 'estimate_num_insns('; do
	row "  $p" "$(phase "$tmp/plain" "$p")" "$(phase "$tmp/woven" "$p")"
done
row "as" "$(total "$tmp/plain" as)" "$(total "$tmp/woven" as)"
echo "lines of assembly: $("$cc" "$@" -S "$tmp/plain.i" -o - | wc -l) plain, $("$cc" "$@" -S "$tmp/woven.i" -o - | wc -l) woven"

#!/bin/sh
# USAGE: [FLAMEGRAPH_PL=/path/to/flamegraph.pl] [SVG_LINES=1000000] sh bench/svg.sh
#
# emit-svg against Brendan Gregg's flamegraph.pl on the same folded input: SVG_LINES lines
# (1,000,000 by default) of synthetic stacks, 4 to 40 frames deep over 3,000 user and 300
# kernel ("_[k]") function names, made with a fixed seed.  Both draw the file to an SVG;
# the script prints wall time and peak memory of each and the ratios, against the goal of
# at least 10 times faster with at most a quarter of the memory.  Without FLAMEGRAPH_PL
# pointing at a copy of flamegraph.pl it says so and measures emit-svg alone.
#
#   svg: input 1000000 lines (123456789 bytes)
#   svg: emit-svg 1.21 s, 40960 KB
#   svg: flamegraph.pl 35.10 s, 1843200 KB
#   svg: speed-up 29.008 (goal >= 10), memory ratio 0.022 (goal <= 0.25)
set -eu
. "$(dirname "$0")/common.sh"
bench_init svg
lines=${SVG_LINES:-1000000}
emit=$RP_BIN/emit-svg
[ -x "$emit" ] || die "'$emit' missing: run 'make'"
[ -x /usr/bin/time ] || die "/usr/bin/time missing: install the time package"

in=$BENCH_TMP/in.folded
awk -v n="$lines" 'BEGIN {
	srand(1)
	for (i = 0; i < n; i++) {
		d = 4 + int(rand() * 37)
		s = "app;main"
		for (j = 2; j < d; j++)
			s = s ";fn_" int(rand() * rand() * 3000)
		if (rand() < 0.2)
			for (k = 0; k < 3; k++)
				s = s ";ksym_" int(rand() * 300) "_[k]"
		print s " " 1 + int(rand() * 100)
	}
}' >"$in"
say "input $lines lines ($(wc -c <"$in") bytes)"

# measure NAME CMD...: runs CMD > svg, prints "seconds kilobytes".
measure() {
	name=$1
	shift
	/usr/bin/time -f '%e %M' -o "$BENCH_TMP/$name.time" "$@" >"$BENCH_TMP/$name.svg" \
		2>"$BENCH_TMP/$name.err" || die "$name failed: $(tail -n 1 "$BENCH_TMP/$name.err")"
	cat "$BENCH_TMP/$name.time"
}

# shellcheck disable=SC2046 # measure prints two words: seconds and KiB
set -- $(measure emit-svg "$emit" --folded "$in")
es=$1 em=$2
say "emit-svg $es s, $em KB"
if [ -z "${FLAMEGRAPH_PL:-}" ] || [ ! -f "$FLAMEGRAPH_PL" ]; then
	say "flamegraph.pl skipped: set FLAMEGRAPH_PL to a copy of FlameGraph's flamegraph.pl"
	exit 0
fi
# shellcheck disable=SC2046 # the same two words
set -- $(measure flamegraph.pl perl "$FLAMEGRAPH_PL" --countname ns "$in")
fs=$1 fm=$2
say "flamegraph.pl $fs s, $fm KB"
say "speed-up $(ratio "$fs" "$es") (goal >= 10), memory ratio $(ratio "$em" "$fm") (goal <= 0.25)"

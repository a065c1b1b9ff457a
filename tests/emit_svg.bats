#!/usr/bin/env bats
# emit-svg: a static SVG flame graph per window.  Fixture (tests/tools/streamgen.c good),
# window 0, 50 ms in pid 100 ("app"):
#   3 x 10 ms  inlined_helper (inlined into work) <- main
#   1 x 10 ms  memcpy <- inlined_helper/work <- main
#   1 x 10 ms  schedule [kernel] <- main

load helper
load derived

setup_file() {
	build_streamgen
	export GOOD="$BATS_FILE_TMPDIR/good"
	mkdir -p "$GOOD/out"
	"$STREAMGEN" good >"$GOOD/in.rps"
	"$RP_BIN/emit-svg" --output "$GOOD/out" <"$GOOD/in.rps" >"$GOOD/out.rps"
	export SVG0=$(echo "$GOOD"/out/.cpu-*-000000-*.svg.tmp-*)
	record_live
}

# svg_of MODE [N]: emit-svg on `streamgen MODE N` into a fresh dir; prints the SVG's path.
svg_of() {
	local d
	d=$(mktemp -d "$BATS_TEST_TMPDIR/s.XXXXXX")
	"$STREAMGEN" "$@" | "$RP_BIN/emit-svg" --output "$d" >/dev/null
	echo "$d"/.cpu-*-000000-*.svg.tmp-*
}

# fill TITLE-PREFIX FILE: the fill colour "r g b" of the frame whose title starts so.
fill() {
	grep -F "<g><title>$1" "$2" | head -n 1 | sed -E 's/.*fill="rgb\(([0-9]+),([0-9]+),([0-9]+)\)".*/\1 \2 \3/'
}

# title_share NAME FILE: the summed share (percent) of the frames titled NAME.
title_share() {
	grep -oE "<title>$1 \([0-9]+ ns, [0-9.]+%\)" "$2" |
		awk -F'[ ,%]+' '{ s += $(NF - 1) } END { printf "%.2f\n", s }'
}

@test "emit-svg: forwards every frame and adds an optional file frame before each window end" {
	run diff <("$STREAMGEN" dump <"$GOOD/in.rps") <("$STREAMGEN" dump <"$GOOD/out.rps" | grep -v '^file ')
	assert_success
	run grep -A1 '^file ' <<<"$("$STREAMGEN" dump <"$GOOD/out.rps")"
	assert_line -n 0 --regexp '^file 0 0 svg-cpu cpu-00c0ffee12345678-000000-1700000000000001000\.svg \.cpu-00c0ffee12345678-000000-1700000000000001000\.svg\.tmp-[A-Za-z0-9]{6}$'
	assert_line -n 1 window-end
	assert_line -n 3 --regexp '^file 1 0 svg-cpu cpu-00c0ffee12345678-000001-'
}

@test "emit-svg: well-formed XML without scripts" {
	run xmllint --noout "$SVG0"
	assert_success
	run grep -ci '<script\|onload=\|onclick=\|javascript:' "$SVG0"
	assert_output 0
}

@test "emit-svg: heading with profile kind, UTC window range and total" {
	run grep -F 'CPU flame graph' "$SVG0"
	assert_success
	run grep -F 'cpu profile, window 0: 2023-11-14 22:13:20.000 to 22:13:21.000 UTC, total 50000000 ns (0.050 s) in 5 samples' "$SVG0"
	assert_success
}

@test "emit-svg: every frame has a rect and a title with label, nanoseconds and share" {
	run grep -c '<g><title>[^<]* ([0-9]* ns, [0-9.]*%)</title><rect ' "$SVG0"
	assert_output "$(grep -c '<g>' "$SVG0")"
	run grep -o '<title>[^<]*</title>' "$SVG0"
	assert_line "<title>all (50000000 ns, 100.00%)</title>"
	assert_line "<title>app (50000000 ns, 100.00%)</title>"
	assert_line "<title>main (50000000 ns, 100.00%)</title>"
	assert_line "<title>work (40000000 ns, 80.00%)</title>"
	assert_line "<title>inlined_helper (40000000 ns, 80.00%)</title>"
	assert_line "<title>memcpy (10000000 ns, 20.00%)</title>"
	assert_line "<title>schedule [kernel] (10000000 ns, 20.00%)</title>"
}

@test "emit-svg: inlined lines are frames of their own, outermost below" {
	# y grows downwards: the caller's row is below (larger y) its callee's.
	y() { grep -F "<title>$1 " "$SVG0" | sed -E 's/.* y="([0-9.]+)".*/\1/' | head -n 1; }
	awk -v m="$(y main)" -v w="$(y work)" -v i="$(y inlined_helper)" \
		'BEGIN { exit !(m > w && w > i) }'
}

@test "emit-svg: kernel, user and unsymbolized frames have distinct colours" {
	local svg k u x
	svg=$(svg_of odd)
	k=$(fill "schedule [kernel]" "$svg")
	u=$(fill "main " "$svg")
	x=$(fill "[libc.so.6] [unsymbolized]" "$svg")
	echo "kernel $k, user $u, unsymbolized $x"
	read -r r g b <<<"$k"; [ "$b" -gt "$r" ]             # blue-green
	read -r r g b <<<"$u"	# warm
	[ "$r" -ge 205 ]
	[ "$b" -le 55 ]
	read -r r g b <<<"$x"	# grey
	[ "$r" -eq "$g" ]
	[ "$g" -eq "$b" ]
}

@test "emit-svg: names are escaped and bad bytes replaced" {
	local svg
	svg=$(svg_of odd)
	run xmllint --noout "$svg"
	assert_success
	run grep -c '<title>ns::f&lt;A&amp;B&gt;;g (60000000 ns' "$svg"
	assert_output 1
	run grep -c '<title>bad?byte (' "$svg"
	assert_output 1
}

@test "emit-svg: 200000 distinct stacks stay within the frame cap and say truncated" {
	local svg
	svg=$(svg_of distinct 200000)
	run xmllint --noout "$svg"
	assert_success
	run grep -c '<g>' "$svg"
	[ "$output" -le 100000 ]
	run grep -c '>truncated: the 100000-frame rendering cap was reached' "$svg"
	assert_output 1
	run grep -c '<title>(truncated) (' "$svg"
	[ "$output" -gt 0 ]
	# Leaves under 0.1% of the total merge into one box per parent.
	run grep -c '<title>([0-9]* frames) (' "$svg"
	[ "$output" -ge 500 ]
	run grep -c '<title>all (2000000000000 ns, 100.00%)' "$svg"
	assert_output 1
}

@test "emit-svg: --folded draws emit-collapsed output with the same frames" {
	local d="$BATS_TEST_TMPDIR/f"
	mkdir -p "$d"
	"$RP_BIN/emit-collapsed" --annotate -o "$d" <"$GOOD/in.rps" >/dev/null
	"$RP_BIN/emit-svg" --folded "$d"/.cpu-*-000000-*.collapsed.tmp-* >"$d/f.svg"
	run xmllint --noout "$d/f.svg"
	assert_success
	run diff <(grep -o '<g>.*</g>' "$SVG0") <(grep -o '<g>.*</g>' "$d/f.svg" | sed 's/ samples, / ns, /')
	assert_success
}

@test "emit-svg: same stream, byte-identical SVG" {
	local a b
	a=$(svg_of distinct 5000)
	b=$(svg_of distinct 5000)
	cmp "$a" "$b"
}

@test "emit-svg: live shares of the hot functions within 1 point of pprof" {
	require_live
	local svg pb f s p
	svg=$(live_file svg)
	pb=$(live_file pb.gz)
	run xmllint --noout "$svg"
	assert_success
	refute grep -qi '<script' "$svg"
	for f in hot_a hot_b hot_c dispatch; do
		s=$(title_share "$f" "$svg")
		p=$(HOME=$BATS_FILE_TMPDIR/home GOCACHE=$GOCACHE go tool pprof -top -cum -nodecount=1000 -sample_index=cpu "$pb" 2>/dev/null |
			awk -v f="$f" '$6 == f { sub("%", "", $5); print $5; found = 1; exit } END { if (!found) print 0 }')
		echo "$f: svg $s%, pprof $p%"
		within "$s" "$p" 1
	done
	[ "$(title_share hot_a "$svg" | cut -d. -f1)" -ge 30 ]
}

@test "emit-svg: live file is published with the window and named in diagnostics" {
	require_live
	# The CPU and the heap profile of the default profiles: one SVG each.
	run grep -c '\.svg$' "$LIVE/commit.log"
	assert_output 2
	run grep -o '"svg-cpu": *"[^"]*"' "$LIVE"/out/diagnostics-*-000000-*.json
	assert_output --partial ".svg\""
	run grep -o '"svg-heap": *"[^"]*heap-[^"]*\.svg"' "$LIVE"/out/diagnostics-*-000000-*.json
	assert_success
}

@test "emit-svg: undefined location is refused" {
	mkdir -p "$BATS_TEST_TMPDIR/out"
	"$STREAMGEN" missing-loc >"$BATS_TEST_TMPDIR/in.rps"
	run -1 --separate-stderr "$RP_BIN/emit-svg" -o "$BATS_TEST_TMPDIR/out" <"$BATS_TEST_TMPDIR/in.rps"
	assert_equal "$stderr" "emit-svg: stdin: window 0 stack references undefined location 99"
	assert_equal "$(ls -A "$BATS_TEST_TMPDIR/out")" ""
}

@test "emit-svg: truncated stream is refused" {
	mkdir "$BATS_TEST_TMPDIR/out"
	head -c 700 "$GOOD/in.rps" >"$BATS_TEST_TMPDIR/in.rps"
	run -4 --separate-stderr "$RP_BIN/emit-svg" -o "$BATS_TEST_TMPDIR/out" <"$BATS_TEST_TMPDIR/in.rps"
	assert_regex "$stderr" '^emit-svg: stdin: truncated [^
]*$'
	assert_equal "$(ls -A "$BATS_TEST_TMPDIR/out")" ""
}

@test "emit-svg: missing folded file is refused" {
	run -1 --separate-stderr "$RP_BIN/emit-svg" --folded "$BATS_TEST_TMPDIR/none"
	assert_equal "$stderr" "emit-svg: cannot open '$BATS_TEST_TMPDIR/none': No such file or directory"
}

@test "emit-svg: --help" {
	run -0 "$RP_BIN/emit-svg" --help
	assert_line -n 0 "usage: emit-svg [--output DIR] < stream > stream"
}

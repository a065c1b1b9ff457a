#!/usr/bin/env bats
# emit-collapsed: folded stacks per window ("process;...;leaf nanoseconds"), as
# flamegraph.pl reads them.  Fixture (tests/tools/streamgen.c good), window 0:
#   tid 100 "app"       3 x 10 ms  inlined_helper (inlined into work) <- main
#   tid 101 "worker-2"  1 x 10 ms  memcpy <- inlined_helper/work <- main
#   tid 102 (no name)   1 x 10 ms  schedule [kernel] <- main
# all in pid 100, whose main thread is "app".

load helper
load derived

setup_file() {
	build_streamgen
	export GOOD="$BATS_FILE_TMPDIR/good"
	mkdir -p "$GOOD/out"
	"$STREAMGEN" good >"$GOOD/in.rps"
	"$RP_BIN/emit-collapsed" --output "$GOOD/out" <"$GOOD/in.rps" >"$GOOD/out.rps"
	record_live
}

# collapsed ARGS... < stream: runs emit-collapsed into a fresh dir; prints window 0's file.
collapsed() {
	local d
	d=$(mktemp -d "$BATS_TEST_TMPDIR/c.XXXXXX")
	"$RP_BIN/emit-collapsed" --output "$d" "$@" >/dev/null
	cat "$d"/.cpu-*-000000-*.collapsed.tmp-*
}

# fails MODE MESSAGE: emit-collapsed on `streamgen MODE` exits 1 with MESSAGE, no file.
fails() {
	mkdir -p "$BATS_TEST_TMPDIR/out"
	"$STREAMGEN" "$1" >"$BATS_TEST_TMPDIR/in.rps"
	run -1 --separate-stderr "$RP_BIN/emit-collapsed" --output "$BATS_TEST_TMPDIR/out" \
		<"$BATS_TEST_TMPDIR/in.rps"
	assert_equal "$stderr" "emit-collapsed: $2"
	assert_equal "$(ls -A "$BATS_TEST_TMPDIR/out")" ""
}

@test "emit-collapsed: forwards every frame and adds an optional file frame before each window end" {
	run diff <("$STREAMGEN" dump <"$GOOD/in.rps") <("$STREAMGEN" dump <"$GOOD/out.rps" | grep -v '^file ')
	assert_success
	run grep -A1 '^file ' <<<"$("$STREAMGEN" dump <"$GOOD/out.rps")"
	assert_line -n 0 --regexp '^file 0 0 collapsed-cpu cpu-00c0ffee12345678-000000-1700000000000001000\.collapsed \.cpu-00c0ffee12345678-000000-1700000000000001000\.collapsed\.tmp-[A-Za-z0-9]{6}$'
	assert_line -n 1 window-end
}

@test "emit-collapsed: process root, inlined frames outermost first, nanoseconds, bytewise order" {
	run collapsed <"$GOOD/in.rps"
	assert_output "app;main;schedule 10000000
app;main;work;inlined_helper 30000000
app;main;work;inlined_helper;memcpy 10000000"
}

@test "emit-collapsed: --annotate marks kernel frames" {
	run collapsed --annotate <"$GOOD/in.rps"
	assert_line -n 0 "app;main;schedule_[k] 10000000"
	refute_output --partial "main_[k]"
}

@test "emit-collapsed: --samples counts samples" {
	run collapsed --samples <"$GOOD/in.rps"
	assert_line -n 1 "app;main;work;inlined_helper 3"
}

@test "emit-collapsed: identical stacks merge" {
	# streamgen big: 1000 distinct locations, one function stack; counts 1,2,3,1,2,3,...
	run collapsed < <("$STREAMGEN" big 1000)
	assert_output "app;main;work;inlined_helper;main;work 19990000000"
}

@test "emit-collapsed: ';' in a name becomes ':', unsymbolized frames name their file" {
	# The stray byte 0xff passes through as it is; shown as '#' to compare it in any locale.
	collapsed < <("$STREAMGEN" odd) | LC_ALL=C tr '\377' '#' >"$BATS_TEST_TMPDIR/odd"
	run cat "$BATS_TEST_TMPDIR/odd"
	assert_line "app;main;ns::f<A&B>:g 20000000"
	assert_line "app;main;bad#byte;[libc.so.6] 10000000"
}

@test "emit-collapsed: reads back the way flamegraph.pl does (last field is the count)" {
	collapsed < <("$STREAMGEN" odd) >"$BATS_TEST_TMPDIR/odd"
	run env LC_ALL=C grep -cv '^[^ ].* [0-9][0-9]*$' "$BATS_TEST_TMPDIR/odd"
	assert_output 0
	run env LC_ALL=C awk '{ s += $NF } END { print s }' "$BATS_TEST_TMPDIR/odd"
	assert_output 70000000
}

@test "emit-collapsed: an empty window gives an empty file" {
	run collapsed < <("$STREAMGEN" empty)
	assert_output ""
}

@test "emit-collapsed: live stacks and values equal the window's pprof" {
	require_live
	local pb col
	pb=$(live_file pb.gz)
	col=$(live_file collapsed)
	[ -s "$col" ]
	run diff <(traces_folded "$pb") \
		<(sed 's/^[^;]*;//' "$col" | awk '{ n = $NF; sub(/ [0-9]+$/, ""); s[$0] += n }
			END { for (k in s) print k " " s[k] }' | LC_ALL=C sort)
	assert_success
	# The process root is the workload's name.
	run cut -d';' -f1 "$col"
	assert_line -n 0 cpu_split
}

@test "emit-collapsed: live file is published with the window and named in diagnostics" {
	require_live
	# The CPU and the heap profile of the default profiles: one folded file each.
	run grep -c '\.collapsed$' "$LIVE/commit.log"
	assert_output 2
	run grep -o '"collapsed-cpu": *"[^"]*"' "$LIVE"/out/diagnostics-*-000000-*.json
	assert_output --partial ".collapsed\""
	run grep -o '"collapsed-heap": *"[^"]*heap-[^"]*\.collapsed"' \
		"$LIVE"/out/diagnostics-*-000000-*.json
	assert_success
}

@test "emit-collapsed: undefined location is refused" { fails missing-loc "stdin: window 0 stack references undefined location 99"; }
@test "emit-collapsed: undefined function is refused" { fails missing-func "stdin: location 7 references undefined function 99"; }

@test "emit-collapsed: truncated stream is refused" {
	mkdir "$BATS_TEST_TMPDIR/out"
	head -c 700 "$GOOD/in.rps" >"$BATS_TEST_TMPDIR/in.rps"
	run -4 --separate-stderr "$RP_BIN/emit-collapsed" -o "$BATS_TEST_TMPDIR/out" \
		<"$BATS_TEST_TMPDIR/in.rps"
	assert_regex "$stderr" '^emit-collapsed: stdin: truncated [^
]*$'
	assert_equal "$(ls -A "$BATS_TEST_TMPDIR/out")" ""
}

@test "emit-collapsed: output must be a directory" {
	run -1 --separate-stderr "$RP_BIN/emit-collapsed" -o "$GOOD/in.rps" <"$GOOD/in.rps"
	assert_equal "$stderr" "emit-collapsed: output '$GOOD/in.rps' is not a directory"
}

@test "emit-collapsed: --help" {
	run -0 "$RP_BIN/emit-collapsed" --help
	assert_line -n 0 "usage: emit-collapsed [--output DIR] [--annotate] [--samples] < stream > stream"
	assert_output --partial "CPU"
}

#!/usr/bin/env bats
# emit-pprof: one gzip CPU pprof per window, checked with `go tool pprof`.
# The input comes from tests/tools/streamgen.c, built here against librp.a, so these tests
# need no other stage.  Fixture (streamgen good), window 0, 50 ms in all:
#   tid 100 "app"       3 x 10 ms  inlined_helper (inlined into work) <- main
#   tid 101 "worker-2"  1 x 10 ms  memcpy <- inlined_helper/work <- main
#   tid 102 (no name)   1 x 10 ms  schedule [kernel] <- main
# window 1: tid 101, 5 x 10 ms in main.

bats_require_minimum_version 1.5.0

setup_file() {
	local root="$BATS_TEST_DIRNAME/.."
	export RP_BIN="${RP_BIN:-$root/.output/bin}"
	export STREAMGEN="$BATS_FILE_TMPDIR/streamgen"
	# CC/LDFLAGS come from make (check-asan links with the sanitizers).
	${CC:-cc} -std=c17 -D_GNU_SOURCE -I"$root/lib" ${LDFLAGS:-} -o "$STREAMGEN" \
		"$root/tests/tools/streamgen.c" "$RP_BIN/../lib/librp.a" -lz -lm
	# go tool pprof wants a writable home and build cache.
	export HOME="$BATS_FILE_TMPDIR/home" GOCACHE="$BATS_FILE_TMPDIR/gocache"
	mkdir -p "$HOME" "$GOCACHE"
	export GOOD="$BATS_FILE_TMPDIR/good"
	mkdir -p "$GOOD/out"
	"$STREAMGEN" good >"$GOOD/in.rps"
	"$RP_BIN/emit-pprof" --output "$GOOD/out" <"$GOOD/in.rps" >"$GOOD/out.rps"
	export W0="$GOOD/out/.cpu-00c0ffee12345678-000000-1700000000000001000.pb.gz.tmp-"
	export W1="$GOOD/out/.cpu-00c0ffee12345678-000001-1700000001000001000.pb.gz.tmp-"
}

setup() {
	bats_load_library bats-support
	bats_load_library bats-assert
}

# pprof VIEW WINDOW: runs `go tool pprof -VIEW` on the temp file of window 0 or 1.
pprof() {
	local f prefix
	[ "$2" = 1 ] && prefix=$W1 || prefix=$W0
	f=$(echo "$prefix"*)
	run go tool pprof "-$1" "$f"
	assert_success
}

# fails MODE MESSAGE: emit-pprof on `streamgen MODE` exits 1 with MESSAGE, leaving no file.
fails() {
	mkdir -p "$BATS_TEST_TMPDIR/out"
	"$STREAMGEN" "$1" >"$BATS_TEST_TMPDIR/in.rps"
	run -1 --separate-stderr "$RP_BIN/emit-pprof" --output "$BATS_TEST_TMPDIR/out" \
		<"$BATS_TEST_TMPDIR/in.rps"
	assert_equal "$stderr" "emit-pprof: $2"
	assert_equal "$(ls -A "$BATS_TEST_TMPDIR/out")" ""
}

@test "emit-pprof: forwards every frame and adds a file frame before each window end" {
	run "$STREAMGEN" dump <"$GOOD/out.rps"
	assert_success
	run diff <("$STREAMGEN" dump <"$GOOD/in.rps") <(grep -v '^file \|^modules$' <<<"$output")
	assert_success
	# Each window's module list comes right before its file frame.
	run grep -A1 '^modules$' <<<"$("$STREAMGEN" dump <"$GOOD/out.rps")"
	assert_line -n 1 --regexp '^file 0 '
	assert_line -n 4 --regexp '^file 1 '
	run grep -B1 -A1 '^file ' <<<"$("$STREAMGEN" dump <"$GOOD/out.rps" | grep -v '^modules$')"
	assert_line -n 0 window-stack
	assert_line -n 1 --regexp '^file 0 1 cpu cpu-00c0ffee12345678-000000-1700000000000001000\.pb\.gz \.cpu-00c0ffee12345678-000000-1700000000000001000\.pb\.gz\.tmp-[A-Za-z0-9]{6}$'
	assert_line -n 2 window-end
	assert_line -n 3 -- --	# grep's group separator
	assert_line -n 5 --regexp '^file 1 1 cpu cpu-00c0ffee12345678-000001-'
}

@test "emit-pprof: writes gzip temp files only, never the final names" {
	run ls -A "$GOOD/out"
	assert_equal "${#lines[@]}" 2
	refute_output --regexp '^cpu-'
	run bash -c "head -c 2 $W0* | od -An -tx1"
	assert_output " 1f 8b"
}

@test "emit-pprof: cpu time shares per function" {
	pprof top 0
	assert_output --partial "Total samples = 50ms"
	assert_output --regexp '30ms 60\.00% 60\.00% +40ms 80\.00%  inlined_helper \(inline\)'
	assert_output --regexp '10ms 20\.00% .* memcpy'
	assert_output --regexp '10ms 20\.00% .* schedule'
	assert_output --regexp '0 +0% +100% +50ms +100%  main'
	assert_output --regexp '40ms 80\.00%  work'
}

@test "emit-pprof: sample values, types, period and times" {
	pprof raw 0
	assert_line "PeriodType: cpu nanoseconds"
	assert_line "Period: 10000000"
	assert_line "Time: 2023-11-14 22:13:20.000001 +0000 UTC"
	assert_line "Duration: 1s"
	assert_line "samples/count cpu/nanoseconds[dflt]"
	assert_line --regexp '^ +3 +30000000: 1 2 $'
}

@test "emit-pprof: pid, thread id and latest thread name labels" {
	pprof raw 0
	assert_output --partial "thread.name:[app]"
	assert_output --partial "thread.name:[worker-2]"
	refute_output --partial "thread.name:[worker]"
	assert_output --partial "process.pid:[100 pid] thread.id:[101 tid]"
	# tid 102 has no FR_COMM: numeric labels only.
	run grep -B1 'thread.id:\[102 tid\]' <<<"$output"
	refute_output --partial "thread.name"
}

@test "emit-pprof: inlined frames innermost first, with lines and start lines" {
	pprof raw 0
	run grep -A1 'inlined_helper' <<<"$output"
	assert_line -n 0 --regexp '^ +1: 0x401100 M=1 inlined_helper app\.h:7 s=5$'
	assert_line -n 1 --regexp '^ +work app\.c:25 s=20$'
}

@test "emit-pprof: mappings with build ids, flags, main executable first" {
	pprof raw 0
	run sed -n '/^Mappings/,$p' <<<"$output"
	assert_line -n 1 "1: 0x400000/0x500000/0x1000 /usr/bin/app 4f1c3b [FN][FL][LN][IN]"
	assert_line -n 2 "2: 0x7f0000000000/0x7f0000100000/0x1000 /lib/libc.so.6 12abcdef [FN]"
	assert_line -n 3 --regexp '^3: 0xffffffff81000000/0xffffffff81100000/0x1000 \[kernel\.kallsyms\] +\[FN\]$'
}

@test "emit-pprof: a window holds only what its stacks use" {
	pprof raw 1
	assert_line --regexp '^ +5 +50000000: 1 $'
	assert_output --partial "main app.c:12 s=10"
	refute_output --partial "unused"
	refute_output --partial "work app.c"
	refute_output --partial "libc"
	assert_line "Time: 2023-11-14 22:13:21.000001 +0000 UTC"
}

@test "emit-pprof: an empty window still gets a valid profile" {
	mkdir "$BATS_TEST_TMPDIR/out"
	"$STREAMGEN" empty | "$RP_BIN/emit-pprof" -o "$BATS_TEST_TMPDIR/out" >/dev/null
	run go tool pprof -raw "$BATS_TEST_TMPDIR"/out/.cpu-*
	assert_success
	assert_line "samples/count cpu/nanoseconds[dflt]"
	assert_line "Duration: 1s"
	refute_output --partial "main"
}

@test "emit-pprof: 65536 stacks per window" {
	mkdir "$BATS_TEST_TMPDIR/out"
	"$STREAMGEN" big 65536 | "$RP_BIN/emit-pprof" -o "$BATS_TEST_TMPDIR/out" >/dev/null
	run go tool pprof -top "$BATS_TEST_TMPDIR"/out/.cpu-*-000001-*
	assert_success
	assert_output --partial "Total samples = 1310.71s"
}

@test "emit-pprof: undefined location is refused"   { fails missing-loc "stdin: window 0 stack references undefined location 99"; }
@test "emit-pprof: undefined function is refused"   { fails missing-func "stdin: location 7 references undefined function 99"; }
@test "emit-pprof: redefined location is refused"   { fails redefine "stdin: location 1 defined twice"; }

@test "emit-pprof: truncated stream is refused" {
	mkdir "$BATS_TEST_TMPDIR/out"
	head -c 700 "$GOOD/in.rps" >"$BATS_TEST_TMPDIR/in.rps"
	run -4 --separate-stderr "$RP_BIN/emit-pprof" -o "$BATS_TEST_TMPDIR/out" \
		<"$BATS_TEST_TMPDIR/in.rps"
	assert_regex "$stderr" '^emit-pprof: stdin: truncated [^
]*$'
	assert_equal "$(ls -A "$BATS_TEST_TMPDIR/out")" ""
}

# Found by fuzz/stage_pprof: the window's CPU profile was written, then its off-CPU one
# failed (a location naming an undefined function), and the CPU file stayed behind.
@test "emit-pprof: a window given up leaves none of its files" {
	mkdir "$BATS_TEST_TMPDIR/out"
	run -1 --separate-stderr "$RP_BIN/emit-pprof" -o "$BATS_TEST_TMPDIR/out" \
		<"$BATS_TEST_DIRNAME/../fuzz/corpus/stage_pprof/offcpu-undefined-function"
	assert_equal "$stderr" "emit-pprof: stdin: location 4 references undefined function 4"
	assert_equal "$(ls -A "$BATS_TEST_TMPDIR/out")" ""
}

@test "emit-pprof: empty input is refused" {
	run -4 --separate-stderr "$RP_BIN/emit-pprof" -o "$BATS_TEST_TMPDIR" </dev/null
	assert_equal "$stderr" "emit-pprof: stdin: empty stream"
}

@test "emit-pprof: output must be a directory" {
	run -1 --separate-stderr "$RP_BIN/emit-pprof" -o "$GOOD/in.rps" <"$GOOD/in.rps"
	assert_equal "$stderr" "emit-pprof: output '$GOOD/in.rps' is not a directory"
}

@test "emit-pprof: --help" {
	run -0 "$RP_BIN/emit-pprof" --help
	assert_line -n 0 "usage: emit-pprof [--output DIR] < stream > stream"
}

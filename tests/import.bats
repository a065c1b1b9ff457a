#!/usr/bin/env bats
# import: perf.data and simpleperf captures into the framed stream and through the pipeline.

load helper

CAPTURES=$BATS_TEST_DIRNAME/../../shared/fixtures/captures

setup() {
	open_tmpdirs
	out=$BATS_TEST_TMPDIR/out
	mkdir -p "$out"
}

need_captures() {
	[ -d "$CAPTURES" ] || skip "fixture captures not found at $CAPTURES"
}

# pipeline FILE [import options]: the capture through every stage into $out, one big window.
pipeline() {
	local f=$1
	shift
	"$RP_BIN/import" --input "$f" "$@" | "$RP_BIN/unwind" | "$RP_BIN/aggregate" --window 1000000s |
		"$RP_BIN/emit-pprof" --output "$out" | "$RP_BIN/commit" --output "$out" >/dev/null
}

samples_in() {
	jq -s 'map(.cpu.samples) | add' "$out"/diagnostics-*.json
}

# The sampling event import chooses by default, and its sample count from the README.
@test "import: every fixture capture gives the README's sample count" {
	need_captures
	while read -r name count; do
		[ -f "$CAPTURES/$name" ] || { echo "missing $name"; return 1; }
		rm -rf "$out" && mkdir -p "$out"
		pipeline "$CAPTURES/$name"
		got=$(samples_in)
		echo "$name: $got samples, README $count"
		[ "$got" = "$count" ]
	done <<-'LIST'
	x86_64-fp-systemwide-perf3.8.perf.data 1768
	x86_64-dwarf-vector-gcc-perf4.18.perf.data 45
	x86_64-dwarf-zstd-parallel-perf5.18.perf.data 233
	x86_64-newabi-sleep-perf6.16.perf.data 7
	x86_64-compressed2-pipe-sleep-perf6.16.perf.data 7
	x86_64-multievent-hw-sw-systemwide-perf3.4.perf.data 4734
	x86_64-pipe-group-perf6.8.perf.data 11
	i686-multievent-systemwide-perf3.4.perf.data 147
	x86_64-cpuclock-pie-perf5.19.perf.data 487
	aarch64-cycles-fib-perf4.0.perf.data 871
	aarch64-zstd-pipe-sleep-perf6.5.perf.data 8
	simpleperf-aarch64-android-app-cpuclock-callgraph.data 525
	simpleperf-x86_64-dwarf-small.data 10
	simpleperf-x86_64-two-events.data 2
	simpleperf-aarch64-trace-offcpu.data 2270
	simpleperf-x86_64-dumped-symbols.data 935
	LIST
}

@test "import: --event picks another event, and the diagnostics name the events" {
	need_captures
	pipeline "$CAPTURES/x86_64-multievent-hw-sw-systemwide-perf3.4.perf.data" --event cycles
	[ "$(samples_in)" = 207 ]
	run -0 jq -r '.warnings[]' "$out"/diagnostics-*.json
	assert_output --partial "sampling event cycles: 207 samples"
	assert_output --partial "cpu-clock 4734"
	rm -rf "$out" && mkdir -p "$out"
	pipeline "$CAPTURES/simpleperf-x86_64-two-events.data" --event cycles
	[ "$(samples_in)" = 8 ]
	run -1 "$RP_BIN/import" --input "$CAPTURES/x86_64-pipe-group-perf6.8.perf.data" --event nope
	assert_output --partial "no event named 'nope'"
}

@test "import: the fib capture keeps raw addresses: 0x4006c8 is the hottest leaf" {
	need_captures
	pipeline "$CAPTURES/aarch64-cycles-fib-perf4.0.perf.data"
	prof=$(outputs "$out" cpu pb.gz | tail -n 1)
	run -0 pprof -top -nodecount=3 -addresses "$out/$prof"
	assert_output --partial "4006c8"
}

@test "import: compressed2 pipe capture with trailing text imports and says so" {
	need_captures
	pipeline "$CAPTURES/x86_64-compressed2-pipe-sleep-perf6.16.perf.data"
	run -0 jq -r '.warnings[]' "$out"/diagnostics-*.json
	assert_output --partial "ignored 143 bytes of text"
}

@test "import: a pipe-mode capture is read from stdin too" {
	need_captures
	"$RP_BIN/import" --input - < "$CAPTURES/aarch64-zstd-pipe-sleep-perf6.5.perf.data" |
		"$RP_BIN/unwind" | "$RP_BIN/aggregate" --window 1000000s |
		"$RP_BIN/emit-pprof" --output "$out" | "$RP_BIN/commit" --output "$out" >/dev/null
	[ "$(samples_in)" = 8 ]
}

@test "import: truncated copies of each fixture fail with one line and publish nothing" {
	need_captures
	for f in "$CAPTURES"/*.data; do
		size=$(stat -c %s "$f")
		# The compressed2 capture ends with 143 bytes of banner text; cut before it.
		for pct in 3 30 61 95; do
			n=$((size * pct / 100))
			head -c "$n" "$f" > "$BATS_TEST_TMPDIR/cut.data"
			rm -rf "$out" && mkdir -p "$out"
			run -1 --separate-stderr "$RP_BIN/import" --input "$BATS_TEST_TMPDIR/cut.data"
			[ "${#stderr_lines[@]}" -eq 1 ] || { echo "$f at $n: $stderr"; return 1; }
			[[ $stderr == *"offset "* ]]
			run ! pipeline "$BATS_TEST_TMPDIR/cut.data"
			[ -z "$(ls "$out")" ] || { echo "$f at $n left files"; return 1; }
		done
	done
}

@test "import: options are checked" {
	run -0 "$RP_BIN/import" --help
	assert_output --partial "--format"
	run -1 "$RP_BIN/import"
	assert_output "import: --input is required"
	run -1 "$RP_BIN/import" --input /nonexistent
	assert_output --partial "cannot open '/nonexistent'"
	run -1 "$RP_BIN/import" --input /dev/null --format nope
	assert_output --partial "unknown format"
	run -1 "$RP_BIN/import" --input "$BATS_TEST_FILENAME"
	assert_output --partial "no PERFILE2 magic"
}

# perf record of a bundled workload: function names through the normal stages.
record_and_check() {
	local shares
	pipeline "$1"
	prof=$(outputs "$out" cpu pb.gz | tail -n 1)
	[ -n "$prof" ]
	a=$(cum_share hot_a "$out/$prof")
	b=$(cum_share hot_b "$out/$prof")
	c=$(cum_share hot_c "$out/$prof")
	echo "shares: hot_a=$a hot_b=$b hot_c=$c"
	within "$a" 60 8
	within "$b" 30 8
	within "$c" 10 8
}

need_perf() {
	require_root
	command -v perf >/dev/null || skip "perf is not installed"
}

@test "import: perf record -g of cpu_split names hot_a, hot_b and hot_c" {
	need_perf
	perf record -q -g -e cpu-clock -F 499 -o "$BATS_TEST_TMPDIR/p.data" \
		"$RP_WORKLOADS/cpu_split" 3 >/dev/null 2>&1 || skip "perf record failed"
	record_and_check "$BATS_TEST_TMPDIR/p.data"
}

@test "import: perf record -o - (pipe mode) imports with names" {
	need_perf
	perf record -q -g -e cpu-clock -F 499 -o - "$RP_WORKLOADS/cpu_split" 3 \
		> "$BATS_TEST_TMPDIR/p.data" 2>/dev/null || skip "perf record failed"
	record_and_check "$BATS_TEST_TMPDIR/p.data"
}

@test "import: perf record -z (zstd) imports with names" {
	need_perf
	perf record -q -z -g -e cpu-clock -F 499 -o "$BATS_TEST_TMPDIR/p.data" \
		"$RP_WORKLOADS/cpu_split" 3 >/dev/null 2>&1 || skip "this perf cannot record with -z"
	record_and_check "$BATS_TEST_TMPDIR/p.data"
}

@test "import: the driver publishes windows of a capture with every record output" {
	cap=$CAPTURES/x86_64-cpuclock-pie-perf5.19.perf.data
	[ -r "$cap" ] || skip "fixture missing"
	out=$BATS_TEST_TMPDIR/drv
	run "$RP" import --input "$cap" --format auto --window 60s --svg --collapsed \
		--firefox-profile json --output "$out"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(outputs "$out" cpu pb.gz | wc -l)" -eq 1 ]
	[ "$(outputs "$out" cpu svg | wc -l)" -eq 1 ]
	[ "$(outputs "$out" firefox json.gz | wc -l)" -eq 1 ]
	d=$out/$(outputs "$out" diagnostics json)
	run -0 jq -e '.cpu.samples == 487 and .target.kind == "import"' "$d"
}

@test "import: the driver refuses a bad format and a missing input with one line" {
	run --separate-stderr "$RP" import --input /nonexistent --output "$BATS_TEST_TMPDIR/x"
	[ "$status" -ne 0 ]
	run --separate-stderr "$RP" import --input "$CAPTURES/README.md" --format pdf \
		--output "$BATS_TEST_TMPDIR/x"
	[ "$status" -ne 0 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "${stderr_lines[0]}" == *"--format must be"* ]]
}

#!/usr/bin/env bats
# import: perf.data and simpleperf captures into the framed stream and through the pipeline.

load helper

CAPTURES=$BATS_TEST_DIRNAME/../../shared/fixtures/captures

# perfgen (tests/tools/perfgen.c) writes the captures this machine cannot record: hybrid,
# LBR, hardware events, group reads, simpleperf.
setup_file() {
	export PERFGEN="$BATS_FILE_TMPDIR/perfgen"
	${CC:-cc} -std=c17 -D_GNU_SOURCE -Wall -Wextra -Werror -o "$PERFGEN" \
		"$BATS_TEST_DIRNAME/tools/perfgen.c" -lelf
}

setup() {
	open_tmpdirs
	out=$BATS_TEST_TMPDIR/out
	mkdir -p "$out"
}

need_captures() {
	[ -d "$CAPTURES" ] || skip "fixture captures not found at $CAPTURES"
}

# pipeline FILE [import options]: the capture through every stage into $out, one big window,
# with unwind keeping the leaf of DWARF samples whose binary is not here (as the driver does).
pipeline() {
	local f=$1
	shift
	"$RP_BIN/import" --input "$f" "$@" | "$RP_BIN/unwind" --allow-partial ${UNWIND_OPTS:-} |
		"$RP_BIN/aggregate" --window 1000000s |
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

# leaf_shares PROFILE: "dso NAME PCT" and "off NAME ADDR PCT" lines from pprof -raw: the leaf of
# each sample weighted by CPU time, by mapping file and by map-relative address (address -
# start + offset, perf's "map-relative" view; kernel addresses stay as they are).
leaf_shares() {
	pprof -raw "$1" | awk '
		/^Samples:/ { part = "s"; next }
		/^Locations/ { part = "l"; next }
		/^Mappings/ { part = "m"; next }
		part == "s" && match($0, /^ +[0-9]+ +[0-9]+: [0-9]+/) {
			split(substr($0, RSTART, RLENGTH), a, /[ :]+/)
			leafv[++ns] = a[3]; leafl[ns] = a[4]; total += a[3]; next
		}
		part == "l" && $1 ~ /^[0-9]+:$/ {
			id = $1; sub(":", "", id); laddr[id] = $2; lmap[id] = substr($3, 3); next
		}
		part == "m" && $1 ~ /^[0-9]+:$/ {
			id = $1; sub(":", "", id); split($2, r, "/"); mstart[id] = r[1]; moff[id] = r[3]
			n = split($3, p, "/"); mname[id] = p[n]; next
		}
		function hex(s,   i, v) {
			v = 0; s = tolower(s); sub(/^0x/, "", s)
			for (i = 1; i <= length(s); i++)
				v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v
		}
		END {
			for (i = 1; i <= ns; i++) {
				l = leafl[i]; m = lmap[l]; dso[mname[m]] += leafv[i]
				if (mname[m] == "[kernel.kallsyms]") o = laddr[l]
				else o = sprintf("0x%x", hex(laddr[l]) - hex(mstart[m]) + hex(moff[m]))
				off[mname[m] " " o] += leafv[i]
			}
			for (k in dso) printf "dso %s %.2f\n", k, 100 * dso[k] / total
			for (k in off) printf "off %s %.2f\n", k, 100 * off[k] / total
		}'
}

# fn_share flat|cum NAME PROFILE: a function's self or inclusive share of the profile's value
# (CPU time, or the imported event's count); NAME is a prefix of the demangled name as pprof
# -top prints it.
fn_share() {
	local flag=
	[ "$1" = cum ] && flag=-cum
	pprof -top $flag -nodecount=100000 -sample_index=1 "$3" |
		awk -v f="$2" -v col="$( [ "$1" = cum ] && echo 5 || echo 2)" '
			NF >= 6 { name = $6; for (i = 7; i <= NF; i++) name = name " " $i
				  if (index(name, f) == 1) { v = $col; sub("%", "", v); print v; found = 1; exit } }
			END { if (!found) print 0 }'
}

# The README of the captures gives, for every capture, the top functions (where the capture or
# the original binary names them) or the top leaf addresses and files as perf 6.1 shows them.
# Each must agree within 2 points.  Kinds: fn (self share), cum (inclusive share), dso (leaf
# file), off (leaf address: map-relative for files, raw for the kernel, as perf prints them).
@test "import: every fixture's top entries agree with the README within 2 points" {
	need_captures
	local cur= prof= shares= bad=0
	while IFS='|' read -r name kind key want; do
		[ -n "$name" ] || continue
		if [ "$name" != "$cur" ]; then
			cur=$name
			rm -rf "$out" && mkdir -p "$out"
			pipeline "$CAPTURES/$name"
			prof=$out/$(outputs "$out" cpu pb.gz | tail -n 1)
			shares=$(leaf_shares "$prof")
		fi
		case $kind in
		fn) got=$(fn_share flat "$key" "$prof") ;;
		cum) got=$(fn_share cum "$key" "$prof") ;;
		*) got=$(printf '%s\n' "$shares" | awk -v k="$kind $key" '
			substr($0, 1, length(k) + 1) == k " " { v = $NF } END { print v + 0 }') ;;
		esac
		if within "$got" "$want" 2; then
			echo "ok   $name $kind $key: $got% (README $want%)"
		else
			echo "FAIL $name $kind $key: $got% (README $want%)"
			bad=1
		fi
	done <<-'TABLE'
	x86_64-fp-systemwide-perf3.8.perf.data|dso|chrome|61.33
	x86_64-fp-systemwide-perf3.8.perf.data|dso|[kernel.kallsyms]|31.91
	x86_64-fp-systemwide-perf3.8.perf.data|dso|libpthread-2.15.so|1.50
	x86_64-fp-systemwide-perf3.8.perf.data|off|[kernel.kallsyms] 0xffffffff9661da49|6.66
	x86_64-fp-systemwide-perf3.8.perf.data|off|libglib-2.0.so.0.3400.3 0x45c0e|1.01
	x86_64-dwarf-vector-gcc-perf4.18.perf.data|dso|vector_static_gcc_v9.1.0|84.08
	x86_64-dwarf-vector-gcc-perf4.18.perf.data|dso|[kernel.kallsyms]|15.92
	x86_64-dwarf-vector-gcc-perf4.18.perf.data|off|vector_static_gcc_v9.1.0 0x18cbd|7.31
	x86_64-dwarf-vector-gcc-perf4.18.perf.data|off|vector_static_gcc_v9.1.0 0x187cb|5.28
	x86_64-dwarf-vector-gcc-perf4.18.perf.data|off|vector_static_gcc_v9.1.0 0x18e76|5.19
	x86_64-dwarf-zstd-parallel-perf5.18.perf.data|dso|[kernel.kallsyms]|78.76
	x86_64-dwarf-zstd-parallel-perf5.18.perf.data|dso|parallel_static_gcc|21.24
	x86_64-newabi-sleep-perf6.16.perf.data|dso|ld-linux-x86-64.so.2|98.36
	x86_64-newabi-sleep-perf6.16.perf.data|off|ld-linux-x86-64.so.2 0x1570b|82.43
	x86_64-newabi-sleep-perf6.16.perf.data|off|ld-linux-x86-64.so.2 0x1d680|15.93
	x86_64-newabi-sleep-perf6.16.perf.data|off|[kernel.kallsyms] 0xffffffff88c01247|1.64
	x86_64-compressed2-pipe-sleep-perf6.16.perf.data|dso|ld-linux-x86-64.so.2|90.94
	x86_64-compressed2-pipe-sleep-perf6.16.perf.data|off|ld-linux-x86-64.so.2 0x1570b|90.94
	x86_64-compressed2-pipe-sleep-perf6.16.perf.data|dso|[kernel.kallsyms]|9.06
	x86_64-multievent-hw-sw-systemwide-perf3.4.perf.data|dso|[kernel.kallsyms]|98.92
	x86_64-multievent-hw-sw-systemwide-perf3.4.perf.data|dso|chrome|0.82
	x86_64-multievent-hw-sw-systemwide-perf3.4.perf.data|off|[kernel.kallsyms] 0xffffffff8136a45d|97.04
	x86_64-pipe-group-perf6.8.perf.data|dso|ld-linux-x86-64.so.2|99.43
	x86_64-pipe-group-perf6.8.perf.data|off|[kernel.kallsyms] 0xffffffffa04012a0|0.57
	i686-multievent-systemwide-perf3.4.perf.data|dso|[kernel.kallsyms]|89.68
	i686-multievent-systemwide-perf3.4.perf.data|dso|libc-2.15.so|7.90
	i686-multievent-systemwide-perf3.4.perf.data|dso|perf|1.81
	i686-multievent-systemwide-perf3.4.perf.data|off|[kernel.kallsyms] 0x811d3502|43.43
	x86_64-cpuclock-pie-perf5.19.perf.data|dso|segments-dyn|100
	x86_64-cpuclock-pie-perf5.19.perf.data|off|segments-dyn 0x300b|100
	aarch64-cycles-fib-perf4.0.perf.data|dso|fib|99.77
	aarch64-cycles-fib-perf4.0.perf.data|off|fib 0x6c8|22.43
	aarch64-cycles-fib-perf4.0.perf.data|off|fib 0x6cc|20.77
	aarch64-cycles-fib-perf4.0.perf.data|off|fib 0x6f4|19.20
	aarch64-cycles-fib-perf4.0.perf.data|off|fib 0x6f8|13.93
	aarch64-zstd-pipe-sleep-perf6.5.perf.data|dso|[kernel.kallsyms]|100
	aarch64-zstd-pipe-sleep-perf6.5.perf.data|off|[kernel.kallsyms] 0xffffb849d9afe594|91.25
	aarch64-zstd-pipe-sleep-perf6.5.perf.data|off|[kernel.kallsyms] 0xffffb849dabe0314|8.47
	simpleperf-aarch64-android-app-cpuclock-callgraph.data|dso|libart.so|32.95
	simpleperf-aarch64-android-app-cpuclock-callgraph.data|dso|libllvm-glnext.so|20.76
	simpleperf-aarch64-android-app-cpuclock-callgraph.data|dso|[kernel.kallsyms]|13.71
	simpleperf-aarch64-android-app-cpuclock-callgraph.data|dso|libc.so|12.19
	simpleperf-aarch64-android-app-cpuclock-callgraph.data|fn|art::mirror::Class::FindClassMethod(|2.29
	simpleperf-aarch64-android-app-cpuclock-callgraph.data|fn|void art::mirror::Object::VisitReferences<|2.10
	simpleperf-aarch64-android-app-cpuclock-callgraph.data|fn|longest_match|1.90
	simpleperf-aarch64-android-app-cpuclock-callgraph.data|fn|MterpInvokeVirtual|1.90
	simpleperf-aarch64-android-app-cpuclock-callgraph.data|fn|art::gc::MatchesClass(|1.71
	simpleperf-aarch64-android-app-cpuclock-callgraph.data|fn|try_to_wake_up|1.52
	simpleperf-aarch64-android-app-cpuclock-callgraph.data|fn|deflate_slow|1.52
	simpleperf-aarch64-android-app-cpuclock-callgraph.data|cum|__start_thread|67.24
	simpleperf-aarch64-android-app-cpuclock-callgraph.data|cum|__pthread_start(void*)|67.24
	simpleperf-aarch64-android-app-cpuclock-callgraph.data|cum|android::Thread::_threadLoop(|52.19
	simpleperf-aarch64-android-app-cpuclock-callgraph.data|cum|android::uirenderer::renderthread::RenderThread::threadLoop(|50.10
	simpleperf-aarch64-android-app-cpuclock-callgraph.data|cum|android::uirenderer::renderthread::CanvasContext::draw(|49.71
	simpleperf-x86_64-dwarf-small.data|dso|elf|100
	simpleperf-x86_64-dwarf-small.data|off|elf 0x51c|26.02
	simpleperf-x86_64-dwarf-small.data|off|elf 0x523|18.33
	simpleperf-x86_64-dwarf-small.data|off|elf 0x513|15.24
	simpleperf-x86_64-two-events.data|dso|ld-2.19.so|50
	simpleperf-x86_64-two-events.data|dso|libc-2.19.so|50
	simpleperf-aarch64-trace-offcpu.data|fn|RunFunction()|99.07
	simpleperf-aarch64-trace-offcpu.data|dso|[kernel.kallsyms]|0.80
	simpleperf-aarch64-trace-offcpu.data|cum|GlobalFunction()|99.42
	simpleperf-aarch64-trace-offcpu.data|cum|main|99.42
	simpleperf-aarch64-trace-offcpu.data|cum|__libc_init|99.42
	simpleperf-aarch64-trace-offcpu.data|cum|_start_main|99.42
	simpleperf-x86_64-dumped-symbols.data|fn|main|61.17
	simpleperf-x86_64-dumped-symbols.data|fn|func2(int, int)|38.50
	simpleperf-x86_64-dumped-symbols.data|dso|t2|99.68
	simpleperf-x86_64-dumped-symbols.data|off|t2 0x51d|24.28
	simpleperf-x86_64-dumped-symbols.data|off|t2 0x532|22.13
	TABLE
	[ "$bad" = 0 ]
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

# perf_rec [--pipe] DEST PERF-RECORD-ARGS...: perf record -q into DEST (a file, or with
# --pipe perf's pipe mode written to DEST).  perf can fail for a moment when the machine is
# busy (the mlock budget of rings of tests that just ended); it is given two more tries.
# Then perf dying of a signal (Debian's perf 6.1 aborts on an internal assertion now and
# then when it follows several processes) skips the test with perf's words: a bug of the
# peer, not ours; any other failure fails the test.
perf_rec() {
	local pipe=0 dest rc err=$BATS_TEST_TMPDIR/perf-record.err
	[ "$1" != --pipe ] || { pipe=1; shift; }
	dest=$1
	shift
	for try in 1 2 3; do
		rc=0
		if [ $pipe = 1 ]; then
			perf record -q -o - "$@" >"$dest" 2>"$err" || rc=$?
		else
			perf record -q -o "$dest" "$@" >/dev/null 2>"$err" || rc=$?
		fi
		[ $rc != 0 ] || return 0
		[ $try = 3 ] || sleep 2
	done
	local why
	why="perf record $* failed three times (status $rc): $(tail -n 3 "$err" | tr '\n' ' ')"
	[ "$rc" -lt 128 ] || skip "$why"
	echo "$why" >&2
	return 1
}

@test "import: perf record -g of cpu_split names hot_a, hot_b and hot_c" {
	need_perf
	perf_rec "$BATS_TEST_TMPDIR/p.data" -g -e cpu-clock -F 499 "$RP_WORKLOADS/cpu_split" 3
	record_and_check "$BATS_TEST_TMPDIR/p.data"
}

@test "import: perf record -o - (pipe mode) imports with names" {
	need_perf
	perf_rec --pipe "$BATS_TEST_TMPDIR/p.data" -g -e cpu-clock -F 499 "$RP_WORKLOADS/cpu_split" 3
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

# import writes its events in time order, so the driver gives aggregate no reorder window:
# nothing waits, and every window holds what it held with the 100 ms window.
@test "import: aggregate holds no event of an import, and the profiles equal a reordered run's" {
	need_perf
	perf_rec "$BATS_TEST_TMPDIR/p.data" -g -e cpu-clock -F 499 "$RP_WORKLOADS/cpu_split" 3
	a=$BATS_TEST_TMPDIR/a b=$BATS_TEST_TMPDIR/b
	run -0 "$RP" import --input "$BATS_TEST_TMPDIR/p.data" --window 1s --output "$a"
	run -0 "$RP" import --input "$BATS_TEST_TMPDIR/p.data" --window 1s \
		--event-reorder-window 100ms --output "$b"
	run -0 jq -se 'length >= 3 and all(.event_order.reorder_window_nanos == 0 and
		.event_order.peak_pending_events == 0 and .event_order.late_events == 0)' \
		"$a"/diagnostics-*.json
	run -0 jq -se 'all(.event_order.reorder_window_nanos == 100000000 and
		.event_order.peak_pending_events > 0)' "$b"/diagnostics-*.json
	mapfile -t fa < <(outputs "$a" cpu pb.gz)
	mapfile -t fb < <(outputs "$b" cpu pb.gz)
	[ "${#fa[@]}" -ge 3 ]
	[ "${#fa[@]}" -eq "${#fb[@]}" ]
	for i in "${!fa[@]}"; do
		cmp <(zcat "$a/${fa[$i]}") <(zcat "$b/${fb[$i]}")
	done
}

@test "import: the driver refuses a bad format and a missing input with one line" {
	run --separate-stderr "$RP" import --input /nonexistent --output "$BATS_TEST_TMPDIR/x"
	[ "$status" -ne 0 ]
	run --separate-stderr "$RP" import --input "$BATS_TEST_FILENAME" --format pdf \
		--output "$BATS_TEST_TMPDIR/x"
	[ "$status" -ne 0 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "${stderr_lines[0]}" == *"--format must be"* ]]
}

# ---- captures of the kinds real users bring (issue 15) ----

# gen SCENARIO [N]: perfgen's capture of cpu_split in $cap.
gen() {
	cap=$BATS_TEST_TMPDIR/$1.data
	"$PERFGEN" "$1" "$cap" "$RP_WORKLOADS/cpu_split" ${2:-}
}

# The newest CPU profile in $out.
prof() {
	echo "$out/$(outputs "$out" cpu pb.gz | tail -n 1)"
}

# value_type PROFILE: the profile's second sample type, as pprof -raw names it (cycles/count).
value_type() {
	pprof -raw "$1" | awk '/^Samples:/ { getline; sub(/\[dflt\]/, ""); print $2; exit }'
}

warnings() {
	jq -r '.warnings[]' "$out"/diagnostics-*.json
}

fresh() {
	rm -rf "$out" && mkdir -p "$out"
}

@test "import: of two events the first without samples, the default is the one with samples" {
	need_perf
	# a cpu-clock period of 1000 s takes no sample in a 1 s run
	for mode in file pipe; do
		pipe=
		[ $mode = file ] || pipe=--pipe
		perf_rec $pipe "$BATS_TEST_TMPDIR/two.$mode" -e cpu-clock/period=1000000000000/ \
			-e task-clock -F 499 "$RP_WORKLOADS/cpu_split" 1
		fresh
		pipeline "$BATS_TEST_TMPDIR/two.$mode"
		n=$(samples_in)
		echo "$mode: $n samples"
		[ "$n" -gt 100 ]
		run -0 warnings
		assert_output --partial "sampling event task-clock: $n samples; not imported: cpu-clock/period=1000000000000/ 0"
		within "$(fn_share flat hot_a "$(prof)")" 60 10
	done
}

@test "import: a hybrid capture's cpu_core and cpu_atom cycles are one event, named in the diagnostics" {
	gen hybrid 0
	pipeline "$cap"
	[ "$(samples_in)" = 9 ]
	run -0 warnings
	assert_output --partial "sampling event cycles (cpu_atom/cycles/ 0, cpu_core/cycles/ 9): 9 samples"
	[ "$(value_type "$(prof)")" = cycles/count ]
	# with samples on both PMUs, both are in the profile; --event picks the pair or one PMU
	gen hybrid 3
	for ev in "" cycles cpu_core/cycles/; do
		fresh
		pipeline "$cap" ${ev:+--event "$ev"}
		echo "event '$ev': $(samples_in) samples"
		if [ "$ev" = cpu_core/cycles/ ]; then
			[ "$(samples_in)" = 9 ]
			[ "$(fn_share flat hot_c "$(prof)")" = 0 ]
		else
			[ "$(samples_in)" = 12 ]
			within "$(fn_share flat hot_c "$(prof)")" 25 0.1
		fi
	done
}

@test "import: error lines name the capture's path, through the driver too" {
	gen hybrid 0
	run -1 --separate-stderr "$RP" import --input "$cap" --event nope --output "$out"
	echo "$stderr"
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ ${stderr_lines[0]} == *"'$cap': "*"no event named 'nope'"*"cpu_atom/cycles/, cpu_core/cycles/"* ]]
	[[ ${stderr_lines[0]} != *"'-'"* ]]
	run -1 --separate-stderr "$RP_BIN/import" --input - --input-name "$cap" --event nope < "$cap"
	[[ $stderr == *"'$cap': "* ]]
}

@test "import: executables mapped at the same address in different processes keep their own mappings" {
	# simpleperf's layout: three processes, /data/local/tmp/{one,two,three} at 0x400000,
	# whose build ids simpleperf wrote as zeros (they were one module), or distinct
	for distinct in 0 1; do
		gen sp3 $distinct
		fresh
		pipeline "$cap"
		p=$(prof)
		within "$(fn_share flat f_one "$p")" 57.14 0.1
		within "$(fn_share flat f_two "$p")" 28.57 0.1
		within "$(fn_share flat f_three "$p")" 14.29 0.1
		run -0 leaf_shares "$p"
		assert_line "dso one 57.14"
		assert_line "dso two 28.57"
		assert_line "dso three 14.29"
	done
	# perf: three non-PIE programs at the same address, run together
	need_perf
	d=$BATS_TEST_TMPDIR/same
	mkdir -p "$d"
	for n in one two three; do
		printf '%s\n' '#include <time.h>' 'static volatile unsigned long sink;' \
			"__attribute__((noinline)) void spin_$n(void) { for (int i = 0; i < 1000; i++) sink += i; }" \
			'int main(void) { struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);' \
			"do { spin_$n(); clock_gettime(CLOCK_MONOTONIC, &b); } while (b.tv_sec - a.tv_sec < 1); }" \
			> "$d/$n.c"
		${CC:-cc} -O1 -g -no-pie -fno-omit-frame-pointer -o "$d/$n" "$d/$n.c"
	done
	perf_rec "$d/p.data" -g -e cpu-clock -F 499 -- \
		sh -c "'$d/one' & '$d/two' & '$d/three' & wait"
	fresh
	pipeline "$d/p.data"
	p=$(prof)
	for n in one two three; do
		v=$(fn_share flat "spin_$n" "$p")
		echo "spin_$n: $v%"
		# a third each on a quiet machine; each must be there whatever the load
		awk -v v="$v" 'BEGIN { exit !(v >= 15) }'
	done
	# one mapping per program, all at the same address
	[ "$(pprof -raw "$p" | awk '/^Mappings/ { m = 1 } m && / 0x401000\// { print $3 }' |
		sort -u | wc -l)" -eq 3 ]
}

@test "import: an LBR call stack: the leaf is the sample's IP, the user frames are the recorded calls" {
	gen lbr
	pipeline "$cap"
	p=$(prof)
	[ "$(fn_share flat hot_a "$p")" = 100 ]
	[ "$(fn_share cum dispatch "$p")" = 100 ]
	[ "$(fn_share cum run_worker "$p")" = 100 ]
	# the callchain's kernel frame and its wrong user frames are not in the stacks
	[ "$(fn_share cum hot_b "$p")" = 0 ]
	[ "$(fn_share cum main "$p")" = 0 ]
	run -0 leaf_shares "$p"
	refute_output --partial "kernel.kallsyms"
	run -0 jq -r '.cpu.unwind_reason' "$out"/diagnostics-*.json
	assert_output --partial "LBR"
}

@test "import: a sample whose IP disagrees with its cpumode is placed where the IP is" {
	gen cpumode
	pipeline "$cap"
	run -0 leaf_shares "$(prof)"
	assert_line "dso cpu_split 50.00"
	assert_line "dso [kernel.kallsyms] 50.00"
	assert_line "off [kernel.kallsyms] 0xffffffff81001234 50.00"
	within "$(fn_share flat hot_a "$(prof)")" 50 0.1
}

@test "import: cycles and instructions are exported in their own unit, clocks in nanoseconds" {
	gen units
	pipeline "$cap"
	[ "$(value_type "$(prof)")" = cycles/count ]
	[ "$(jq -s 'map(.cpu.cpu_nanoseconds) | add' "$out"/diagnostics-*.json)" = 3000 ]
	fresh
	pipeline "$cap" --event instructions
	[ "$(value_type "$(prof)")" = instructions/count ]
	within "$(fn_share flat hot_b "$(prof)")" 100 0
	fresh
	gen cpumode
	pipeline "$cap"
	[ "$(value_type "$(prof)")" = cpu/nanoseconds ]
	# a software event that counts occurrences, recorded here
	need_perf
	perf_rec "$BATS_TEST_TMPDIR/pf.data" -e page-faults -c 1 "$RP_WORKLOADS/cpu_split" 1
	fresh
	pipeline "$BATS_TEST_TMPDIR/pf.data"
	[ "$(value_type "$(prof)")" = page-faults/count ]
}

@test "import: a group read with PERF_SAMPLE_READ is weighed by the values read" {
	gen group
	pipeline "$cap"
	within "$(fn_share flat hot_a "$(prof)")" 75 0.1
	fresh
	pipeline "$cap" --event instructions
	within "$(fn_share flat hot_b "$(prof)")" 90 0.1
	[ "$(value_type "$(prof)")" = instructions/count ]
	run -0 warnings
	assert_output --partial "sampling event instructions: 10 samples; not imported: cycles 10"
	# a group read recorded here: the page faults counted beside cpu-clock's samples, as
	# perf sums them (deep_nofp: one thread, a group read is not inherited)
	need_perf
	g=$BATS_TEST_TMPDIR/grp.data
	perf_rec "$g" -e '{cpu-clock,page-faults}:S' -F 499 "$RP_WORKLOADS/deep_nofp" 1
	want=$(perf script -F event,period -i "$g" 2>/dev/null |
		awk '$2 == "page-faults:" { n += $1 } END { print n + 0 }')
	fresh
	pipeline "$g" --event page-faults
	[ "$(value_type "$(prof)")" = page-faults/count ]
	got=$(jq -s 'map(.cpu.cpu_nanoseconds) | add' "$out"/diagnostics-*.json)
	echo "page faults: $got, perf script $want"
	[ "$want" -gt 0 ]
	[ "$got" = "$want" ]
}

@test "import: a --call-graph dwarf capture is unwound offline to main, here and through --symbol-dir" {
	need_perf
	d=$BATS_TEST_TMPDIR/dw
	mkdir -p "$d"
	# deep_nofp has no frame pointers: only the CFI walk reaches main
	cp "$RP_WORKLOADS/deep_nofp" "$d/deep_nofp"
	perf_rec "$d/p.data" --call-graph dwarf -e cpu-clock -F 499 "$d/deep_nofp" 1
	chmod a+r "$d/p.data"
	pipeline "$d/p.data"
	p=$(prof)
	for f in main chain_1 chain_6; do
		v=$(fn_share cum "$f" "$p")
		echo "$f: $v%"
		within "$v" 100 3
	done
	run -0 jq -r '.cpu.unwind_mode' "$out"/diagnostics-*.json
	assert_output dwarf
	# the binary gone from its path: found by build id in --symbol-dir, through the driver
	id=$(readelf -n "$d/deep_nofp" | awk '/Build ID:/ { print $3; exit }')
	mkdir -p "$d/sym/.build-id/${id:0:2}"
	mv "$d/deep_nofp" "$d/sym/.build-id/${id:0:2}/${id:2}.debug"
	chmod -R a+rX "$d"
	run -0 "$RP" import --input "$d/p.data" --symbol-dir "$d/sym" --output "$d/out"
	within "$(fn_share cum main "$d/out/$(outputs "$d/out" cpu pb.gz | tail -n 1)")" 100 3
	# and without it, the leaf alone, as perf report shows without the binary
	run -0 "$RP" import --input "$d/p.data" --output "$d/out2"
	p=$d/out2/$(outputs "$d/out2" cpu pb.gz | tail -n 1)
	[ "$(fn_share cum main "$p")" = 0 ]
	run -0 leaf_shares "$p"
	assert_output --partial "dso deep_nofp"
}

@test "import: kernel frames are named from /proc/kallsyms for this kernel, from --kallsyms otherwise" {
	# another kernel: its own table, at another KASLR offset than the capture's _text
	gen cpumode
	printf '%s\n' 'ffffffff80e00000 T _text' 'ffffffff80e01000 T fake_kernel_fn' \
		'ffffffff80e02000 t next_fn	[mod]' > "$BATS_TEST_TMPDIR/kallsyms"
	pipeline "$cap"
	[ "$(fn_share flat fake_kernel_fn "$(prof)")" = 0 ]
	run -0 warnings
	assert_output --partial "--kallsyms FILE names them"
	fresh
	pipeline "$cap" --kallsyms "$BATS_TEST_TMPDIR/kallsyms"
	within "$(fn_share flat fake_kernel_fn "$(prof)")" 50 0.1
	run -1 "$RP_BIN/import" --input "$cap" --kallsyms /nonexistent
	assert_output --partial "--kallsyms: cannot open '/nonexistent'"
	# this kernel: a capture made here, through the driver (whose stages drop privileges)
	need_perf
	perf_rec "$BATS_TEST_TMPDIR/k.data" -g -e cpu-clock -F 999 "$RP_WORKLOADS/syscall_heavy" 1
	chmod a+r "$BATS_TEST_TMPDIR/k.data"
	run -0 "$RP" import --input "$BATS_TEST_TMPDIR/k.data" --output "$out"
	# every kernel location has a function name
	run -0 pprof -raw "$(prof)"
	raw=$output
	kern=$(printf '%s\n' "$raw" | awk '/^Mappings/ { exit } / 0xffffffff[0-9a-f]+ M=/ { n++ } END { print n + 0 }')
	named=$(printf '%s\n' "$raw" | awk '/^Mappings/ { exit } / 0xffffffff[0-9a-f]+ M=[0-9]+ [^ ]/ { n++ } END { print n + 0 }')
	echo "kernel locations: $kern, named: $named"
	[ "$kern" -gt 0 ]
	[ "$named" -eq "$kern" ]
	run -0 warnings
	assert_output --partial "kernel frames named from /proc/kallsyms"
}

@test "import: imported profiles carry the process name" {
	gen units
	run -0 "$RP" import --input "$cap" --firefox-profile json --output "$out"
	f=$out/$(outputs "$out" firefox json.gz | tail -n 1)
	[ "$(zcat "$f" | jq -r '.meta.product')" = cpu_split ]
	run -0 jq -r '.target.comm' "$out"/diagnostics-*.json
	assert_output cpu_split
}

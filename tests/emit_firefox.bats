#!/usr/bin/env bats
# emit-firefox: one gzip Firefox processed profile per window, as JSON or JSLB.
# The live cases replay a recording of cpu_split (saved once with --save-stream) through the
# hand pipeline with emit-firefox before emit-pprof, so every profile has a pprof twin of the
# same window to count against.  Checks use jq and tests/tools/jslbdecode.c.

load helper

setup_file() {
	local root="$BATS_TEST_DIRNAME/.."
	export RP_BIN="${RP_BIN:-$root/.output/bin}"
	export JSLBDECODE="$BATS_FILE_TMPDIR/jslbdecode" STREAMGEN="$BATS_FILE_TMPDIR/streamgen"
	# CC/LDFLAGS come from make (check-asan links with the sanitizers).
	${CC:-cc} -std=c17 -D_GNU_SOURCE -I"$root/lib" ${LDFLAGS:-} -o "$JSLBDECODE" \
		"$root/tests/tools/jslbdecode.c" "$RP_BIN/../lib/librp.a" -lz -lm
	${CC:-cc} -std=c17 -D_GNU_SOURCE -I"$root/lib" ${LDFLAGS:-} -o "$STREAMGEN" \
		"$root/tests/tools/streamgen.c" "$RP_BIN/../lib/librp.a" -lz -lm
	export REC=$BATS_FILE_TMPDIR/rec
	[ "$(id -u)" -eq 0 ] || return 0
	# The unprivileged stages write here: bats makes its directories 0700.
	mkdir -p "$REC/live" && chmod -R a+rwx "$BATS_FILE_TMPDIR"
	chmod a+rx "$BATS_RUN_TMPDIR" "$(dirname "$BATS_FILE_TMPDIR")" 2>/dev/null || true
	"$RP_WORKLOADS/cpu_split" 10 3>&- &
	local w=$!
	"$RP_BIN/rustprofile.sh" record --pid "$w" --duration 3s --window 1s \
		--output "$REC/live" --save-stream "$REC/rec.stream" >/dev/null 3>&- || true
	kill "$w" 2>/dev/null; wait "$w" 2>/dev/null || true
	[ -s "$REC/rec.stream" ] || return 0
	for fmt in json jslb; do
		hand "$fmt" "$REC/$fmt"
	done
}

# hand FORMAT DIR [emit-firefox options]: the saved stream through the hand pipeline.
hand() {
	local fmt=$1 dir=$2 b=$RP_BIN
	shift 2
	mkdir -p "$dir"
	"$b/unwind" --module-cache "$REC/live/.modules" <"$REC/rec.stream" |
		"$b/aggregate" --window 1s |
		"$b/emit-firefox" --output "$dir" --format "$fmt" "$@" |
		"$b/emit-pprof" --output "$dir" | "$b/commit" --output "$dir" >/dev/null
}

need_rec() {
	require_root
	[ -s "$REC/rec.stream" ] || skip "no recording of cpu_split"
}

# pprof_samples FILE: the number of samples in a CPU pprof (the sum of sample counts).
pprof_samples() {
	pprof -raw "$1" | awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 }
		on && $2 ~ /^[0-9]+:$/ { n += $1 } END { print n + 0 }'
}

# firefox_samples FILE: samples over all threads of a Firefox JSON profile (gzip).
firefox_samples() {
	zcat "$1" | jq '[.threads[].samples.length] | add // 0'
}

@test "emit-firefox: --help documents every option" {
	run -0 "$RP_BIN/emit-firefox" --help
	for o in --output --format --max-timeline-samples --help; do
		assert_output --partial -- "$o"
	done
}

@test "emit-firefox: bad options are refused with one line" {
	run -1 --separate-stderr "$RP_BIN/emit-firefox" --format xml
	assert_equal "$stderr" "emit-firefox: --format: 'xml' is not json or jslb"
	run -1 --separate-stderr "$RP_BIN/emit-firefox" --max-timeline-samples 0
	assert_equal "${stderr%%:*}" "emit-firefox"
	run -1 --separate-stderr "$RP_BIN/emit-firefox" --output /nonexistent
	assert_equal "$stderr" "emit-firefox: cannot use output directory '/nonexistent': No such file or directory"
}

@test "emit-firefox: forwards the stream and adds a firefox file frame before each window end" {
	t=$BATS_TEST_TMPDIR
	"$STREAMGEN" good >"$t/in.rps"
	"$RP_BIN/emit-firefox" --output "$t" <"$t/in.rps" >"$t/out.rps"
	diff <("$STREAMGEN" dump <"$t/in.rps") <("$STREAMGEN" dump <"$t/out.rps" | grep -v '^file ')
	run -0 grep -A1 '^file ' <<<"$("$STREAMGEN" dump <"$t/out.rps")"
	assert_line -n 0 --regexp '^file 0 0 firefox firefox-00c0ffee12345678-000000-[0-9]+\.json\.gz \.firefox-.*\.tmp-'
	assert_line -n 1 window-end
	[ "$(ls -A "$t" | grep -c '^\.firefox-.*\.json\.gz\.tmp-')" -eq 2 ]
}

@test "emit-firefox: a truncated stream stops it with one line" {
	t=$BATS_TEST_TMPDIR
	mkdir "$t/out"
	"$STREAMGEN" good >"$t/in.rps"
	head -c $(($(stat -c %s "$t/in.rps") - 3)) "$t/in.rps" >"$t/cut.rps"
	run -4 --separate-stderr "$RP_BIN/emit-firefox" --output "$t/out" <"$t/cut.rps"
	[ "$(wc -l <<<"$stderr")" -eq 1 ]
	assert_equal "${stderr%%:*}" "emit-firefox"
}

@test "firefox json: meta fields, format version, libraries and thread names" {
	need_rec
	f=$REC/json/$(outputs "$REC/json" firefox json.gz | head -n 1)
	zcat "$f" >"$BATS_TEST_TMPDIR/p.json"
	run -0 jq -r '.meta | [.preprocessedProfileVersion, (.startTime > 1e12), (.interval > 0),
		.product, .symbolicated, .categories[0].color, (.markerSchema | length)] | @tsv' \
		"$BATS_TEST_TMPDIR/p.json"
	assert_output $'69\ttrue\ttrue\tcpu_split\ttrue\tgrey\t0'
	run -0 jq -r '.threads[] | [.name, .processName, (.pid | type), .samples.weightType] | @tsv' \
		"$BATS_TEST_TMPDIR/p.json"
	assert_line $'rp-worker\tcpu_split\tstring\ttracing-ms'
	run -0 jq -r '.libs[] | select(.name == "cpu_split") |
		[.debugName, (.breakpadId | test("^[0-9A-F]{32}0$")), (.codeId | length)] | @tsv' \
		"$BATS_TEST_TMPDIR/p.json"
	assert_output $'cpu_split\ttrue\t40'
	# Every table's columns have its length; stack parents come before their children.
	run -0 jq '[.shared | (.stackTable, .frameTable, .funcTable, .resourceTable, .sources) |
		. as $t | to_entries[] | select(.key != "length") | (.value | length) == $t.length] | all' \
		"$BATS_TEST_TMPDIR/p.json"
	assert_output true
	run -0 jq '.shared.stackTable | [range(.length) as $i | .prefixOffset[$i] <= $i] | all' \
		"$BATS_TEST_TMPDIR/p.json"
	assert_output true
	run -0 jq '[.shared.funcTable.name[] as $n | .shared.stringArray[$n]] | index("hot_a") != null' \
		"$BATS_TEST_TMPDIR/p.json"
	assert_output true
}

@test "firefox json: each window has as many samples as its pprof, in time order" {
	need_rec
	n=0
	for f in $(outputs "$REC/json" firefox json.gz); do
		p=$REC/json/cpu-${f#firefox-}
		p=${p%.json.gz}.pb.gz
		[ "$(firefox_samples "$REC/json/$f")" -eq "$(pprof_samples "$p")" ]
		run -0 jq '[.threads[].samples.time | . as $t | range(1; length) | $t[.-1] <= $t[.]] | all' \
			<(zcat "$REC/json/$f")
		assert_output true
		n=$((n + 1))
	done
	[ "$n" -ge 2 ]
}

@test "firefox json: --max-timeline-samples keeps the earliest samples of each window" {
	need_rec
	hand json "$BATS_TEST_TMPDIR/cap" --max-timeline-samples 5
	for f in $(outputs "$BATS_TEST_TMPDIR/cap" firefox json.gz); do
		p=$BATS_TEST_TMPDIR/cap/cpu-${f#firefox-}
		p=${p%.json.gz}.pb.gz
		all=$(pprof_samples "$p")
		[ "$(firefox_samples "$BATS_TEST_TMPDIR/cap/$f")" -eq $((all < 5 ? all : 5)) ]
	done
}

@test "firefox jslb: a valid JsonSlabs container that decodes to the identical JSON" {
	need_rec
	n=0
	for f in $(outputs "$REC/jslb" firefox jslb.gz); do
		j=$REC/json/${f%.jslb.gz}.json.gz
		[ "$(zcat "$REC/jslb/$f" | head -c 8 | od -An -tx1 | tr -d ' ')" = dcdf4a534c420100 ]
		"$JSLBDECODE" --table "$REC/jslb/$f" >"$BATS_TEST_TMPDIR/table"
		# version 1; root in range and JSON; slabs aligned to their element size, after the
		# table, inside the file, in order without overlap; some typed slabs.
		run -0 awk '
			function size(t) { return t == 10 || t < 2 ? 1 : t < 4 ? 2 : t < 7 ? 4 : 8 }
			NR == 1 { ok = $2 == 1 && $6 < $4; root = $6; end = 20 + 12 * $4; next }
			$1 == "slab" { ok = ok && $6 % size($4) == 0 && $8 % size($4) == 0 && $6 >= end
				end = $6 + $8; typed += $4 != 10; if ($2 == root) ok = ok && $4 == 10 }
			$1 == "size" { ok = ok && end <= $2 }
			END { print (ok && typed >= 3) ? "valid" : "invalid" }' "$BATS_TEST_TMPDIR/table"
		assert_output valid
		"$JSLBDECODE" "$REC/jslb/$f" | cmp - <(zcat "$j")
		n=$((n + 1))
	done
	[ "$n" -ge 2 ]
}

@test "firefox jslb: a corrupt container is refused with a reason" {
	need_rec
	f=$REC/jslb/$(outputs "$REC/jslb" firefox jslb.gz | head -n 1)
	zcat "$f" >"$BATS_TEST_TMPDIR/ok.jslb"
	# slab 0's offset moved off its 4-byte alignment
	{ head -c 24 "$BATS_TEST_TMPDIR/ok.jslb"; printf '\001\000\000\000'
	  tail -c +29 "$BATS_TEST_TMPDIR/ok.jslb"; } >"$BATS_TEST_TMPDIR/bad.jslb"
	run -1 "$JSLBDECODE" "$BATS_TEST_TMPDIR/bad.jslb"
	assert_output --partial "not aligned"
	# the last slab cut short
	head -c $(($(stat -c %s "$BATS_TEST_TMPDIR/ok.jslb") - 10)) "$BATS_TEST_TMPDIR/ok.jslb" \
		>"$BATS_TEST_TMPDIR/short.jslb"
	run -1 "$JSLBDECODE" "$BATS_TEST_TMPDIR/short.jslb"
	assert_output --partial "outside the file"
}

@test "emit-firefox: the pprof files are the same with and without it" {
	need_rec
	mkdir -p "$BATS_TEST_TMPDIR/plain"
	"$RP_BIN/unwind" --module-cache "$REC/live/.modules" <"$REC/rec.stream" |
		"$RP_BIN/aggregate" --window 1s | "$RP_BIN/emit-pprof" --output "$BATS_TEST_TMPDIR/plain" |
		"$RP_BIN/commit" --output "$BATS_TEST_TMPDIR/plain" >/dev/null
	for f in $(outputs "$BATS_TEST_TMPDIR/plain" cpu pb.gz); do
		cmp "$BATS_TEST_TMPDIR/plain/$f" "$REC/json/$f"
	done
}

# heap_stream [EXTRA]: a crafted heap stream as text (tests/tools/streamgen.c pack): two
# allocations in window 0 (800 and 1000 bytes), a realloc move and an unsampled free; in
# window 1 the moved block freed by another thread, then EXTRA (a reset or a forget) and
# the free of the second block.
heap_stream() {
	cat <<-EOT
	header clockid=1 e_machine=62 clock_offset_ns=1700000000000000000 session_id=0x00c0ffee12345678
	target pid=100 cpu_frequency=100 flags=2 kind=pid exe=/usr/bin/app comm=app profiles=cpu,heap
	mapping id=2 pid=100 start=0x7f0000000000 limit=0x7f0000100000 offset=0x1000 flags=2 build_id=12abcdef path=/lib/libc.so.6
	mapping id=3 pid=100 start=0x400000 limit=0x500000 offset=0x1000 flags=30 build_id=4f1c3b path=/usr/bin/app
	function id=1 start_line=10 name=main filename=app.c
	function id=2 start_line=20 name=work filename=app.c
	function id=4 name=memcpy
	location id=1 mapping_id=2 address=0x7f0000001000 lines=4:0
	location id=2 mapping_id=3 address=0x401100 lines=2:25
	location id=3 mapping_id=3 address=0x401050 lines=1:12
	comm pid=100 tid=100 comm=app
	comm pid=100 tid=101 comm=worker
	heap-stack time=2000 pid=100 tid=100 addr=0x1000 size=100 weight=8 stack_flags=1 locs=2,3
	heap-stack time=3000 pid=100 tid=100 addr=0x2000 size=1000 weight=1 stack_flags=1 locs=1,3
	heap-free time=4000 pid=100 tid=101 addr=0x1000 new_addr=0x5000
	heap-free time=5000 pid=100 tid=101 addr=0x9999 new_addr=0
	window-start start=1000 end=1000001000
	window-end start=1000 end=1000001000 reason=1
	heap-free time=1000002000 pid=100 tid=101 addr=0x5000 new_addr=0
	$1
	heap-free time=1000004000 pid=100 tid=100 addr=0x2000 new_addr=0
	window-start index=1 start=1000001000 end=2000001000
	window-end index=1 start=1000001000 end=2000001000 reason=1
	end time=3000000000 reason=4
	EOT
}

# heap_allocs EXTRA [SED]: each window's nativeAllocations per thread, one line per window
# (SED edits the stream's text first).
heap_allocs() {
	local d=$BATS_TEST_TMPDIR/h f
	rm -rf "$d" && mkdir -p "$d"
	# Read as written (commit refuses a gap, which only fanout's branches may have).
	heap_stream "$1" | sed "${2:-}" | "$STREAMGEN" pack |
		"$RP_BIN/emit-firefox" --output "$d" >/dev/null
	for f in $(ls -A "$d" | grep '^\.firefox-' | sort); do
		zcat "$d/$f" | jq -c '[.threads[] | select(.nativeAllocations) | [.tid,
			(.nativeAllocations | .weightType, .weight, .memoryAddress, .threadId,
			 (.stack | map(. != null)), .length)]]'
	done
}

@test "firefox heap: allocations, a moved block's free in a later thread and window, a reset" {
	run -0 heap_allocs "heap-reset time=1000003000 pid=100 reason=1"
	# block 1 (8 × 100 bytes) moved, then freed by the worker; block 2 forgotten by the reset.
	assert_line --index 0 '[["100","bytes",[800,1000],[1,2],[100,100],[true,true],2]]'
	assert_line --index 1 '[["101","bytes",[-800],[1],[101],[true],1]]'
}

@test "firefox heap: a free whose allocation stack was forgotten has no stack" {
	run -0 heap_allocs "forget pid=0 tid=0 ids=2"
	assert_line --index 1 '[["100","bytes",[-1000],[2],[100],[false],1],["101","bytes",[-800],[1],[101],[true],1]]'
}

@test "firefox heap: behind a gap (a window fanout shed) the shed window's frees are left out" {
	run -0 heap_allocs "heap-reset time=1000003000 pid=100 reason=1" \
		's/index=1 start=1000001000 end=2000001000/index=2 start=2000001000 end=3000001000/;
		 s/^end time=3000000000/end time=3000001000/'
	assert_line --index 0 '[["100","bytes",[800,1000],[1,2],[100,100],[true,true],2]]'
	assert_line --index 1 '[]'
}

@test "firefox heap: allocations add up to the heap pprof, retained to its in-use bytes" {
	require_root
	local d=$BATS_TEST_TMPDIR/mix f n=0 pos neg sum=0
	mkdir -p "$d" && chmod a+rwx "$d"
	run -0 "$RP" launch --profiles cpu,heap --unwind fp --alloc-interval 64k --window 2s \
		--firefox-profile json --output "$d" -- "$RP_WORKLOADS/heap_mix" 5
	for f in $(outputs "$d" heap pb.gz); do
		x=$d/firefox-${f#heap-}
		x=${x%.pb.gz}.json.gz
		read -r pos neg <<<"$(zcat "$x" | jq -r '[.threads[].nativeAllocations.weight[]?] |
			"\(map(select(. > 0)) | add // 0) \(map(select(. < 0)) | add // 0)"')"
		# per window: what it allocated, as the pprof's alloc_space
		[ "$pos" -eq "$(pprof -raw "$d/$f" | awk '/^alloc_objects/ { on = 1; next }
			/^Locations/ { on = 0 } on && NF >= 5 && $2 ~ /^[0-9]+$/ { s += $2 }
			END { print s + 0 }')" ]
		sum=$((sum + pos + neg))
		inuse=$(pprof -raw "$d/$f" | awk '/^alloc_objects/ { on = 1; next }
			/^Locations/ { on = 0 } on && NF >= 5 && $2 ~ /^[0-9]+$/ { s += $4 + 0 }
			END { print s + 0 }')
		# what is still allocated since the attach: the window's in-use bytes
		[ "$sum" -eq "$inuse" ] || fail "window $f: retained $sum, inuse_space $inuse"
		dg=$d/diagnostics-${f#heap-}
		dg=${dg%.pb.gz}.json
		[ "$(jq '.firefox.native_allocations' "$dg")" -eq \
		  "$(zcat "$x" | jq '[.threads[].nativeAllocations.length // 0] | add')" ]
		[ "$(jq '.firefox.dropped_allocations' "$dg")" -eq 0 ]
		n=$((n + 1))
	done
	[ "$n" -ge 2 ]
}

@test "firefox heap: --max-timeline-samples caps the allocations of each window, counted" {
	require_root
	local d=$BATS_TEST_TMPDIR/cap f
	mkdir -p "$d" && chmod a+rwx "$d"
	run -0 "$RP" launch --profiles cpu,heap --unwind fp --alloc-interval 64k --window 2s \
		--firefox-profile json --max-timeline-samples 10 --output "$d" -- \
		"$RP_WORKLOADS/heap_mix" 3
	for f in $(outputs "$d" firefox json.gz); do
		[ "$(zcat "$d/$f" | jq '[.threads[].nativeAllocations.length // 0] | add')" -eq 10 ]
		dg=$d/diagnostics-${f#firefox-}
		[ "$(jq '.firefox.dropped_allocations' "${dg%.json.gz}.json")" -gt 0 ]
	done
}

@test "firefox heap: a CPU-only recording has no allocation tables or counts" {
	require_root
	local d=$BATS_TEST_TMPDIR/cpu f
	mkdir -p "$d" && chmod a+rwx "$d"
	run -0 "$RP" launch --profiles cpu --unwind fp --window 2s --firefox-profile json \
		--output "$d" -- "$RP_WORKLOADS/heap_mix" 3
	for f in $(outputs "$d" firefox json.gz); do
		[ "$(zcat "$d/$f" | jq '[.threads[] | has("nativeAllocations")] | any')" = false ]
		dg=$d/diagnostics-${f#firefox-}
		[ "$(jq '.firefox | has("native_allocations")' "${dg%.json.gz}.json")" = false ]
	done
}

#!/usr/bin/env bats
# The physical memory profiles from aggregate down (docs/physical.md), on crafted streams
# (tests/tools/streamgen.c pack): aggregate's windows of page-stack and page-free frames,
# emit-pprof's physical-alloc and physical-usage pprofs, commit's diagnostics.  No root, but
# for the last case, a launch of the phys_pages workload through the whole pipeline.

load helper

setup_file() {
	local root="$BATS_TEST_DIRNAME/.."
	export STREAMGEN="$BATS_FILE_TMPDIR/streamgen"
	# CC/LDFLAGS come from make (check-asan links with the sanitizers).
	${CC:-cc} -std=c17 -D_GNU_SOURCE -I"$root/lib" ${LDFLAGS:-} -o "$STREAMGEN" \
		"$root/tests/tools/streamgen.c" "$RP_BIN/../lib/librp.a" -lz -lm
}

# phys_stream PROFILES PERCENT [EXTRA0 [EXTRA1]]: a crafted physical stream as text.  In
# window 0 (1 s from event time 1000): stack A (locations 2,3) allocates one page at pfn
# 0x1000 and four (order 2) at 0x2000, stack B (location 3) two untracked pages (order 1)
# and one page at 0x4000; 0x1000 is freed, and 0x9999, never tracked, too; then EXTRA0.  In
# window 1: 0x2000 is freed, then EXTRA1.  0x4000 stays allocated.
phys_stream() {
	cat <<-EOT
	header clockid=1 e_machine=62 clock_offset_ns=1700000000000000000 session_id=0x00c0ffee12345678
	target pid=100 cpu_frequency=100 flags=4 kind=pid exe=/usr/bin/app comm=app profiles=$1 window_nanos=1000000000 physical_percent=$2
	mapping id=3 pid=100 start=0x400000 limit=0x500000 offset=0x1000 flags=30 build_id=4f1c3b path=/usr/bin/app
	function id=1 start_line=10 name=main filename=app.c
	function id=2 start_line=20 name=work filename=app.c
	location id=2 mapping_id=3 address=0x401100 lines=2:25
	location id=3 mapping_id=3 address=0x401050 lines=1:12
	comm pid=100 tid=100 comm=app
	comm pid=100 tid=101 comm=worker
	page-stack time=2000 pid=100 tid=100 pfn=0x1000 order=0 stack_flags=1 locs=2,3
	page-stack time=3000 pid=100 tid=100 pfn=0x2000 order=2 stack_flags=1 locs=2,3
	page-stack time=3500 pid=100 tid=101 pfn=0x3000 order=1 flags=1 stack_flags=1 locs=3
	page-stack time=3600 pid=100 tid=101 pfn=0x4000 order=0 stack_flags=1 locs=3
	page-free time=4000 pid=100 pfn=0x1000 order=0
	page-free time=4500 pid=100 pfn=0x9999 order=0
	${3:-}
	page-free time=1000004000 pid=100 pfn=0x2000 order=2
	${4:-}
	end time=2000000000 reason=4
	EOT
}

setup() {
	D=$BATS_TEST_TMPDIR/out
}

# chain [AGGREGATE OPTIONS]: the text on stdin packed and through aggregate, emit-pprof and
# commit (with $COMMIT_OPTS) into $D, empty but for the files $PLANT names; aggregate's
# stderr in $D.err, the three statuses in $D.status.
chain() {
	local f
	rm -rf "$D" && mkdir -p "$D"
	for f in ${PLANT:-}; do
		echo planted >"$D/$f"
	done
	set +e
	"$STREAMGEN" pack | "$RP_BIN/aggregate" "$@" 2>"$D.err" |
		"$RP_BIN/emit-pprof" --output "$D" 2>/dev/null |
		"$RP_BIN/commit" --output "$D" ${COMMIT_OPTS:-} >/dev/null 2>&1
	local st="${PIPESTATUS[*]}"
	set -e
	echo "${st#* }" >"$D.status"
}

# statuses: aggregate's, emit-pprof's and commit's exit statuses in the last chain.
statuses() {
	cat "$D.status"
}

# file KIND INDEX [EXT]: the published file of a kind and window.
file() {
	echo "$D/$(outputs "$D" "$1" "${3:-pb.gz}" | sed -n "$(($2 + 1))p")"
}

# samples KIND INDEX: the pprof's samples, "v1 v2 leaf-location-address" per line, sorted.
samples() {
	pprof -raw "$(file "$1" "$2")" | awk '
		/^Samples:/ { on = 1; next } /^Locations/ { on = 0; locs = 1; next }
		/^Mappings/ { locs = 0 }
		on && $2 ~ /:$/ { sub(":", "", $2); s[++n] = $1 " " $2 " " $3 }
		locs && $1 ~ /:$/ { sub(":", "", $1); addr[$1] = $2 }
		END { for (i = 1; i <= n; i++) { split(s[i], f, " "); print f[1], f[2], addr[f[3]] } }
	' | sort
}

# diag INDEX JQ: a jq expression on the window's diagnostics.
diag() {
	jq -c "$2" "$(file diagnostics "$1" json)"
}

@test "physical-alloc: pages and bytes scaled by 100/probability, exactly at 10 percent" {
	phys_stream physical-alloc,physical-usage 10 | chain
	[ "$(statuses)" = "0 0 0" ]
	run -0 samples physical-alloc 0
	# A: 1 + 4 pages sampled = 50 pages; B: 2 untracked + 1 = 30 pages.
	assert_output $'30 122880 0x401050\n50 204800 0x401100'
	[ "$(diag 0 '.physical | [.alloc_pages, .alloc_bytes, .probability, .samples]')" = \
	  "[80,327680,10,4]" ]
	run -0 pprof -raw "$(file physical-alloc 0)"
	assert_line 'PeriodType: space bytes'
	assert_line 'Period: 40960'
	assert_line 'Duration: 1s'
	assert_line --partial 'alloc_pages/count alloc_space/bytes[dflt]'
	assert_line --regexp 'process.pid:\[100 pid\] thread.id:\[101 tid\]'
	assert_line --partial 'thread.name:[worker]'
	# Window 1 allocates nothing: its profile has no sample.
	run -0 samples physical-alloc 1
	assert_output ''
	# At 100 percent the values are the sampled ones.
	phys_stream physical-alloc 100 | chain
	run -0 samples physical-alloc 0
	assert_output $'3 12288 0x401050\n5 20480 0x401100'
}

@test "physical-alloc: the scaled values round to the nearest" {
	# 5 pages at 3 percent: 166.67 -> 167 pages; 20480 bytes -> 682666.67 -> 682667.
	phys_stream physical-alloc 3 | chain
	run -0 samples physical-alloc 0
	assert_line '167 682667 0x401100'
	run -0 pprof -raw "$(file physical-alloc 0)"
	assert_line 'Period: 136533'
}

@test "physical-usage: the tracked pages still allocated, after frees, unscaled" {
	phys_stream physical-alloc,physical-usage 10 | chain
	[ "$(statuses)" = "0 0 0" ]
	# A: 0x1000 freed, 0x2000 (4 pages) live; B: 0x3000 untracked, 0x4000 live.
	run -0 samples physical-usage 0
	assert_output $'1 4096 0x401050\n4 16384 0x401100'
	[ "$(diag 0 '.physical | [.usage_pages, .usage_bytes, .tracked_pages, .frees]')" = \
	  "[5,20480,5,1]" ]
	# The free of 0x2000 in window 1 counts there; 0x4000, allocated in window 0, stays.
	run -0 samples physical-usage 1
	assert_output '1 4096 0x401050'
	[ "$(diag 1 '.physical | [.usage_pages, .frees, .unmatched_frees, .samples]')" = \
	  "[1,1,0,0]" ]
}

@test "physical-usage: a snapshot, duration 0, with its comment" {
	phys_stream physical-usage 100 | chain
	run -0 pprof -raw "$(file physical-usage 0)"
	refute_line --partial 'Duration:'
	assert_line --partial 'inuse_pages/count inuse_space/bytes[dflt]'
	assert_line --partial 'Comment: a snapshot at the window'
	assert_line --partial 'unscaled: not the process'"'"'s RSS'
	assert_line 'Period: 4096'
	# Only the profiles asked are written.
	[ -z "$(outputs "$D" physical-alloc pb.gz)" ]
	[ "$(outputs "$D" physical-usage pb.gz | wc -l)" -eq 2 ]
	[ "$(diag 0 '.physical.profiles')" = '["physical-usage"]' ]
	[ "$(diag 0 '.written_profiles')" = '["physical-usage"]' ]
}

@test "physical: an untracked allocation counts in alloc, not in usage, and its free matches nothing" {
	phys_stream physical-alloc,physical-usage 100 \
		'page-free time=5000 pid=100 pfn=0x3000 order=1' | chain
	run -0 samples physical-alloc 0
	assert_line '3 12288 0x401050'
	run -0 samples physical-usage 0
	assert_line '1 4096 0x401050'
	# 0x9999 and 0x3000 were never tracked.
	[ "$(diag 0 '.physical | [.frees, .unmatched_frees]')" = "[1,2]" ]
}

@test "physical: an allocation on a tracked pfn replaces it (its free was lost)" {
	phys_stream physical-usage 100 \
		'page-stack time=5000 pid=100 tid=101 pfn=0x2000 order=0 stack_flags=1 locs=3' | chain
	# A's four pages at 0x2000 are gone; B holds one there and one at 0x4000.
	run -0 samples physical-usage 0
	assert_output '2 8192 0x401050'
	# The free of 0x2000 in window 1 takes B's page.
	run -0 samples physical-usage 1
	assert_output '1 4096 0x401050'
}

@test "physical: a window without page events still writes both profiles, empty" {
	phys_stream physical-alloc,physical-usage 50 | sed '/^page-/d' | chain
	[ "$(statuses)" = "0 0 0" ]
	for k in physical-alloc physical-usage; do
		[ "$(outputs "$D" "$k" pb.gz | wc -l)" -eq 2 ]
		run -0 samples "$k" 0
		assert_output ''
	done
	[ "$(diag 0 '.physical | [.alloc_pages, .usage_pages, .samples]')" = "[0,0,0]" ]
}

@test "physical-usage: a lost page event stops aggregate with one line; earlier windows stay" {
	local lost w1=00c0ffee12345678-000001-1700000001000000000.pb.gz
	# Temporary files of the window not published are swept at the end.
	PLANT=".physical-usage-$w1.tmp-abc123 .physical-alloc-$w1.tmp-abc124"
	for lost in "13 page events lost (the BPF ring buffer was full)" \
		"14 sampled page allocations not tracked (the tracked-page table was full)"; do
		phys_stream physical-alloc,physical-usage 10 '' \
			"round time=1000005000
			lost time=1000005000 count=12 kind=${lost%% *}" | chain
		[ "$(statuses | cut -d" " -f1)" = 1 ]
		[ "$(wc -l <"$D.err")" -eq 1 ]
		[ "$(cat "$D.err")" = "aggregate: physical-usage: 12 ${lost#* }: the usage would be wrong; lower --physical-memory-probability" ]
		# Window 0 is published; window 1, where the loss came, is not.
		[ "$(outputs "$D" physical-usage pb.gz | wc -l)" -eq 1 ]
		[ "$(outputs "$D" diagnostics json | wc -l)" -eq 1 ]
		[ "$(diag 0 '.window_index')" = 0 ]
		[ -z "$(ls -A "$D" | grep tmp-)" ]
	done
}

@test "physical: --keep-windows removes an old window's physical files with the rest" {
	phys_stream physical-alloc,physical-usage 10 | COMMIT_OPTS="--keep-windows 1" chain
	[ "$(statuses)" = "0 0 0" ]
	[ "$(ls "$D" | grep -c -- '-000000-')" -eq 0 ]
	[ "$(outputs "$D" physical-alloc pb.gz | grep -c -- '-000001-')" -eq 1 ]
	[ "$(outputs "$D" physical-usage pb.gz | grep -c -- '-000001-')" -eq 1 ]
}

@test "physical-alloc alone: lost page events are counted, the recording goes on" {
	phys_stream physical-alloc 10 '' "round time=1000005000
	lost time=1000005000 count=12 kind=13
	lost time=1000005000 count=3 kind=14
	lost time=1000005000 count=2 kind=15" | chain
	[ "$(statuses)" = "0 0 0" ]
	[ ! -s "$D.err" ]
	[ "$(diag 1 '.physical | [.ring_buffer_drops, .untracked_allocations, .stack_failures]')" = \
	  "[12,3,2]" ]
	[ "$(diag 0 '.physical | [.ring_buffer_drops, .untracked_allocations]')" = "[0,0]" ]
	# A stack failure alone does not stop physical-usage either.
	phys_stream physical-usage 10 '' "round time=1000005000
	lost time=1000005000 count=2 kind=15" | chain
	[ "$(statuses)" = "0 0 0" ]
	[ "$(diag 1 '.physical.stack_failures')" = 2 ]
}

@test "physical: --max-stacks leaves a new stack out and counts what it held" {
	phys_stream physical-alloc,physical-usage 10 | chain --max-stacks 1
	[ "$(statuses)" = "0 0 0" ]
	# A came first: B (30 scaled pages, one tracked page) is left out.
	run -0 samples physical-alloc 0
	assert_output '50 204800 0x401100'
	[ "$(diag 0 '.physical | [.distinct_stacks, .max_stacks, .aggregation_dropped_alloc_pages,
		.aggregation_dropped_alloc_bytes, .aggregation_dropped_usage_pages,
		.aggregation_dropped_usage_bytes, .tracked_pages]')" = "[1,1,30,122880,1,4096,5]" ]
	diag 0 '.warnings[]' | grep -q 'physical stack cap of 1 distinct stacks reached: 30 allocated pages (122880 bytes) and 1 tracked pages (4096 bytes) omitted'
	# In window 1 A has nothing left and B's live page is admitted.
	run -0 samples physical-usage 1
	assert_output '1 4096 0x401050'
}

@test "physical: the diagnostics' physical object, with the limitations of docs/physical.md" {
	phys_stream physical-alloc,physical-usage 10 | chain
	[ "$(diag 0 '.physical | keys_unsorted | .[0:3] + .[-1:]')" = \
	  '["profiles","probability","scaled","limitations"]' ]
	for k in alloc_pages alloc_bytes usage_pages usage_bytes samples frees unmatched_frees \
		tracked_pages ring_buffer_drops untracked_allocations stack_failures \
		tracked_evictions distinct_stacks max_stacks aggregation_dropped_alloc_pages \
		aggregation_dropped_alloc_bytes aggregation_dropped_usage_pages \
		aggregation_dropped_usage_bytes; do
		[ "$(diag 0 ".physical | has(\"$k\")")" = true ] || fail "no physical.$k"
	done
	[ "$(diag 0 '.physical.unmatched_frees')" = 1 ]
	[ "$(diag 0 '.physical.probability_percent')" = null ]
	diag 0 '.physical.scaled' | grep -q 'scaled by 100/probability'
	# Each limitation is a paragraph of the page's list, word for word.
	awk '/^## Limitations/ { on = 1; next } /^## / { on = 0 } on' "$ROOT/docs/physical.md" |
		awk '/^- / { if (s != "") print s; s = substr($0, 3); next }
			/^  / { sub(/^ +/, ""); s = s " " $0 } END { if (s != "") print s }' \
		>"$BATS_TEST_TMPDIR/doc"
	jq -r '.physical.limitations[]' "$(file diagnostics 0 json)" >"$BATS_TEST_TMPDIR/diag"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/doc")" -ge 5 ]
	diff "$BATS_TEST_TMPDIR/doc" "$BATS_TEST_TMPDIR/diag"
	# A target without the physical profiles has no physical object.
	phys_stream cpu 10 | sed 's/ flags=4 / /; s/ physical_percent=10//; /^page-/d' | chain
	[ "$(statuses)" = "0 0 0" ]
	[ "$(diag 0 'has("physical")')" = false ]
}

@test "physical: aggregate forwards the page frames in time order, not with --windows-only" {
	phys_stream physical-usage 100 | "$STREAMGEN" pack | "$RP_BIN/aggregate" |
		"$STREAMGEN" unpack >"$BATS_TEST_TMPDIR/out"
	[ "$(grep -c '^page-' "$BATS_TEST_TMPDIR/out")" -eq 7 ]
	# The free of window 1 comes after window 0's end.
	grep -n '^page-free time=1000004000\|^window-end end=' "$BATS_TEST_TMPDIR/out" |
		cut -d: -f2 | cut -d' ' -f1 | tr '\n' ' ' | grep -qx 'window-end page-free '
	phys_stream physical-usage 100 | "$STREAMGEN" pack | "$RP_BIN/aggregate" --windows-only |
		"$STREAMGEN" unpack >"$BATS_TEST_TMPDIR/out"
	[ "$(grep -c '^page-' "$BATS_TEST_TMPDIR/out")" -eq 0 ]
	[ "$(grep -c '^window-page-stack' "$BATS_TEST_TMPDIR/out")" -eq 3 ]
}

@test "physical: a free that arrives before its allocation is counted after it" {
	# The free (time 2500) comes first in the stream, as from another CPU's ring: the
	# reorder buffer puts the allocation (time 2000) before it.
	phys_stream physical-usage 100 | sed '/^page-free time=4000 /d;
		/^page-stack time=2000 /i page-free time=2500 pid=100 pfn=0x1000 order=0' | chain
	[ "$(statuses)" = "0 0 0" ]
	[ "$(diag 0 '.physical | [.frees, .unmatched_frees]')" = "[1,1]" ]
	run -0 samples physical-usage 0
	assert_output $'1 4096 0x401050\n4 16384 0x401100'
}

@test "physical: the other stages let page frames and window page stacks pass" {
	local d=$BATS_TEST_TMPDIR/em s
	phys_stream physical-alloc,physical-usage 10 | "$STREAMGEN" pack | "$RP_BIN/aggregate" \
		>"$BATS_TEST_TMPDIR/agg"
	for s in emit-svg emit-collapsed emit-firefox emit-json emit-otlp; do
		rm -rf "$d" && mkdir -p "$d"
		"$RP_BIN/$s" --output "$d" <"$BATS_TEST_TMPDIR/agg" >"$d.stream" 2>"$d.err" ||
			fail "$s: $(cat "$d.err")"
		[ ! -s "$d.err" ]
		# A tee: the stream goes on as it came, file frames added.
		[ "$("$STREAMGEN" unpack <"$d.stream" | grep -c '^window-page-stack')" -eq 3 ]
	done
	# fanout with a derived branch, as the driver starts it.
	mkdir -p "$d/br" && mkfifo "$d/br/in" "$d/br/out"
	"$RP_BIN/emit-collapsed" --output "$d" <"$d/br/in" >"$d/br/out" &
	run -0 --separate-stderr "$RP_BIN/fanout" --branch "emit-collapsed=$d/br/in,$d/br/out" \
		<"$BATS_TEST_TMPDIR/agg"
	wait $!
	[ -z "$stderr" ]
}

@test "physical: fanout's shed window leaves out its page stacks, keeps its page frees" {
	local d=$BATS_TEST_TMPDIR/fo
	mkdir -p "$d/out" && mkfifo "$d/in" "$d/back"
	phys_stream physical-usage 100 '' \
		'page-stack time=1000005000 pid=100 tid=100 pfn=0x7000 order=0 stack_flags=1 locs=3' |
		"$STREAMGEN" pack | "$RP_BIN/aggregate" >"$d/agg"
	# The branch starts late: window 1 ends while window 0 waits for it, and is shed.
	{ sleep 1; "$RP_BIN/emit-collapsed" --output "$d/out" <"$d/in" | tee "$d/copy" >"$d/back"; } &
	run -0 --separate-stderr timeout 30 "$RP_BIN/fanout" --branch "emit-collapsed=$d/in,$d/back" \
		<"$d/agg"
	wait $!
	"$STREAMGEN" unpack <"$d/copy" >"$d/copy.txt"
	grep -q '^page-free time=1000004000 ' "$d/copy.txt"
	! grep -q '^page-stack time=1000005000 ' "$d/copy.txt"
	[ "$(grep -c '^window-page-stack' "$d/copy.txt")" -eq 2 ]
	[ "$(grep -c '^window-start' "$d/copy.txt")" -eq 1 ]
}

@test "physical: a launch of phys_pages: usage holds the kept pages, alloc adds up to the touched" {
	require_root
	local d=$BATS_TEST_TMPDIR/live f sum=0 n=0 usage
	mkdir -p "$d" && chmod a+rwx "$d"
	open_tmpdirs
	run -0 "$RP" launch --profiles cpu,physical-alloc,physical-usage --unwind fp --window 1s \
		--output "$d" -- "$RP_WORKLOADS/phys_pages" 20000 100000 2 2
	for f in $(outputs "$d" diagnostics json); do
		sum=$((sum + $(jq '.physical.alloc_pages' "$d/$f")))
		[ "$(jq '.physical.ring_buffer_drops + .physical.untracked_allocations' "$d/$f")" = 0 ]
		n=$((n + 1))
	done
	[ "$n" -ge 3 ]
	# Every touched page, and a few of the program's own (page tables, its start).
	[ "$sum" -ge 120000 ] && [ "$sum" -le 126000 ] || fail "$sum pages allocated"
	# A window in the hold: the 20000 kept pages (and a few more) still allocated.
	f=$(outputs "$d" physical-usage pb.gz | tail -2 | head -1)
	usage=$(pprof -raw "$d/$f" | awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 }
		on && $2 ~ /:$/ { s += $1 } END { print s + 0 }')
	[ "$usage" -ge 20000 ] && [ "$usage" -le 21000 ] || fail "$usage pages in use in $f"
}

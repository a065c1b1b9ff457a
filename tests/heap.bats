#!/usr/bin/env bats
# --profiles heap: the allocator uprobes of bpf/heap.bpf.c, checked against the bundled
# heap_mix workload, which prints what it allocated through each call path and how much
# it keeps live; every heap file is read back by go tool pprof.

load helper

setup() {
	require_root
	open_tmpdirs
	out=$BATS_TEST_TMPDIR/out
}

teardown() {
	stop_workload
}

# bytes_of PROFILE FUNCTION INDEX: the flat bytes of FUNCTION for sample index INDEX.
bytes_of() {
	pprof -top -unit=B -nodecount=1000 -sample_index="$3" "$1" |
		awk -v f="$2" '$6 == f { sub("B", "", $1); print $1; found = 1; exit }
			END { if (!found) print 0 }'
}

# launch_mix DIR INTERVAL ARGS...: heap_mix under launch, its truth in DIR.truth.
launch_mix() {
	local dir=$1 interval=$2
	shift 2
	run -0 "$RP" launch --profiles cpu,heap --unwind fp --alloc-interval "$interval" \
		--window 2s --output "$dir" -- "$RP_WORKLOADS/heap_mix" "$@"
	printf '%s\n' "$output" >"$dir.truth"
}

# check_estimates DIR: alloc_space of churn_alloc and keep_alloc summed over the windows,
# and keep_alloc's inuse_space at the end of every window, within 15% of the truth.
check_estimates() {
	local dir=$1 churn=0 keep=0 f n=0 live
	live=$(truth "$dir.truth" live_bytes)
	for f in $(outputs "$dir" heap pb.gz); do
		churn=$((churn + $(bytes_of "$dir/$f" churn_alloc alloc_space)))
		keep=$((keep + $(bytes_of "$dir/$f" keep_alloc alloc_space)))
		inuse=$(bytes_of "$dir/$f" keep_alloc inuse_space)
		near "$inuse" "$live" 15 || fail "window $f: keep_alloc inuse_space $inuse, live $live"
		n=$((n + 1))
	done
	[ "$n" -ge 3 ] || fail "only $n heap windows"
	near "$churn" "$(truth "$dir.truth" churn_bytes)" 15 ||
		fail "churn_alloc alloc_space $churn, truth $(truth "$dir.truth" churn_bytes)"
	near "$keep" "$(truth "$dir.truth" keep_bytes)" 15 ||
		fail "keep_alloc alloc_space $keep, truth $(truth "$dir.truth" keep_bytes)"
}

@test "heap: alloc_space and inuse_space within 15% of the truth on their stacks at 512 KiB" {
	launch_mix "$out" 512KiB 7 20
	check_estimates "$out"
}

@test "heap: the same at a small interval (32 KiB)" {
	launch_mix "$out" 32KiB 7 8
	check_estimates "$out"
	# Many more samples: the counts are estimates of the workload's calls too.
	cat "$out"/diagnostics-*.json | jq -s -e 'map(.heap.samples) | add > 1000'
}

@test "heap: every heap file reads in go tool pprof with inuse_space as its default" {
	launch_mix "$out" 512KiB 4 20
	n=0
	for f in $(outputs "$out" heap pb.gz); do
		pprof -top "$out/$f" >"$BATS_TEST_TMPDIR/top" || fail "pprof cannot read $f"
		grep -q '^Type: inuse_space$' "$BATS_TEST_TMPDIR/top"
		grep -q 'observed since rustprofile attached' "$BATS_TEST_TMPDIR/top"
		# The sample types and the period, as the manual names them.
		pprof -raw "$out/$f" >"$BATS_TEST_TMPDIR/raw"
		grep -q 'alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes\[dflt\]' \
			"$BATS_TEST_TMPDIR/raw"
		grep -q '^PeriodType: space bytes$' "$BATS_TEST_TMPDIR/raw"
		grep -q '^Period: 524288$' "$BATS_TEST_TMPDIR/raw"
		n=$((n + 1))
	done
	[ "$n" -ge 2 ]
	d=$(ls "$out"/diagnostics-*.json | tail -n 1)
	jq -e '.written_profiles == ["cpu", "heap"] and .heap.since_attach == true and
		.allocator_probe.requested == "auto" and .allocator_probe.detected == "system" and
		.allocator_probe.complete == true and (.allocator_probe.module | test("libc"))' "$d"
	# Launch: CPU follows the launch cgroup, heap the command's process.
	jq -e '.heap.scope == "mixed_process_and_cgroup"' "$d"
	# The four exported totals are those of the file.
	f=$out/$(outputs "$out" heap pb.gz | tail -n 1)
	total=$(pprof -top -unit=B -sample_index=inuse_space "$f" | awk '/^Showing nodes/ {
		for (i = 1; i <= NF; i++) if ($i == "of") { v = $(i + 1); sub("B", "", v); print v } }')
	[ "$(jq '.heap.inuse_space' "$d")" = "$total" ]
}

@test "heap: realloc chains and frees of unsampled memory never make in-use negative" {
	launch_mix "$out" 4KiB 4 10
	for f in $(outputs "$out" heap pb.gz); do
		# realloc_chain frees its block every round: at most one chain is live at a time.
		v=$(bytes_of "$out/$f" realloc_chain inuse_space)
		[ "$v" -ge 0 ] && [ "$v" -le $((8 << 20)) ] || fail "$f: realloc_chain inuse $v"
		v=$(bytes_of "$out/$f" free_unsampled inuse_space)
		[ "$v" -ge 0 ] && [ "$v" -le $((1 << 20)) ] || fail "$f: free_unsampled inuse $v"
		pprof -raw "$out/$f" >"$BATS_TEST_TMPDIR/raw"
		grep -Eq '^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+: ' "$BATS_TEST_TMPDIR/raw"
		! grep -Eq '^ +(-?[0-9]+ +){0,3}-[0-9]+[ :]' "$BATS_TEST_TMPDIR/raw" ||
			fail "$f: a negative sample value"
	done
	# Moves were seen and followed.
	cat "$out"/diagnostics-*.json | jq -s -e 'map(.heap.moves) | add > 0'
}

@test "heap: a Rust program built by Debian's rustc is detected as the rust family" {
	[ -x "$RP_WORKLOADS/rust_workload" ] || skip "no rustc: rust_workload was not built"
	run -0 "$RP" launch --unwind fp --duration 2s --window 2s --output "$out" -- \
		"$RP_WORKLOADS/rust_workload" 1
	d=$(ls "$out"/diagnostics-*.json | tail -n 1)
	jq -e '.allocator_probe.detected == "rust" and .allocator_probe.complete == true and
		(.allocator_probe.module | endswith("/rust_workload"))' "$d"
	[ -n "$(outputs "$out" heap pb.gz)" ]
}

@test "heap: a statically linked musl program is detected as the system family in the executable" {
	[ -x "$RP_WORKLOADS/heap_mix_musl" ] || fail "heap_mix_musl was not built (musl-tools)"
	run -0 "$RP" launch --unwind fp --window 2s --output "$out" -- \
		"$RP_WORKLOADS/heap_mix_musl" 3 20
	d=$(ls "$out"/diagnostics-*.json | tail -n 1)
	jq -e '.allocator_probe.detected == "system" and
		(.allocator_probe.module | endswith("/heap_mix_musl"))' "$d"
	f=$out/$(outputs "$out" heap pb.gz | tail -n 1)
	v=$(bytes_of "$f" keep_alloc inuse_space)
	printf '%s\n' "$output" >"$out.truth"
	near "$v" "$(truth "$out.truth" live_bytes)" 15
}

@test "heap: a program with its own allocator fails the preflight with the reason" {
	run -1 "$RP" launch --unwind fp --duration 2s --output "$out" -- "$RP_WORKLOADS/own_alloc" 2
	assert_output --partial "heap: allocator 'auto' unavailable: no supported allocator"
	[ -z "$(ls "$out" 2>/dev/null)" ]
	run -1 "$RP" launch --unwind fp --allocator rust --duration 2s --output "$out" -- \
		"$RP_WORKLOADS/heap_mix" 2
	assert_output --partial "no mapped module defines the rust family"
}

@test "heap: --allow-partial goes on CPU-only, the reason in the diagnostics" {
	run -0 "$RP" launch --unwind fp --allow-partial --duration 3s --window 3s \
		--output "$out" -- "$RP_WORKLOADS/own_alloc" 2
	[ -n "$(outputs "$out" cpu pb.gz)" ]
	[ -z "$(outputs "$out" heap pb.gz)" ]
	d=$(ls "$out"/diagnostics-*.json | tail -n 1)
	jq -e '.written_profiles == ["cpu"] and .allocator_probe.detected == null and
		(.allocator_probe.reason | test("no supported allocator")) and (.heap == null) and
		any(.warnings[]; test("heap dropped"))' "$d"
	# Nothing else requested: no partial recording to keep.
	run -1 "$RP" launch --profiles heap --allow-partial --duration 2s --output "$out.2" -- \
		"$RP_WORKLOADS/own_alloc" 2
	assert_output --partial "no other profile was requested"
}

@test "heap: an exec mid-recording resets in-use with a warning" {
	w=$RP_WORKLOADS/heap_mix
	run -0 "$RP" launch --unwind fp --window 2s --output "$out" -- "$w" 3 20 "$w" 4 20
	printf '%s\n' "$output" >"$out.truth"
	cat "$out"/diagnostics-*.json | jq -s -e 'map(.heap.resets) | add == 1'
	cat "$out"/diagnostics-*.json | jq -s -e \
		'map(.warnings[]) | any(test("heap state cleared: the target executed a new image"))'
	# The first image's live set is gone from in-use: the last window holds the second's.
	f=$out/$(outputs "$out" heap pb.gz | tail -n 1)
	v=$(bytes_of "$f" keep_alloc inuse_space)
	near "$v" "$(truth "$out.truth" live_bytes)" 15 || fail "inuse $v after the exec"
}

@test "heap: an exec under --unwind auto keeps in-use right through the new calibration" {
	w=$RP_WORKLOADS/heap_mix
	# The old probes fire in the new image (same libc) while it is calibrated: their
	# records are held and their table goes to the new probes.
	run -0 "$RP" launch --window 2s --output "$out" -- "$w" 3 20 "$w" 4 20
	printf '%s\n' "$output" >"$out.truth"
	cat "$out"/diagnostics-*.json | jq -s -e 'map(.heap.resets) | add >= 1'
	f=$out/$(outputs "$out" heap pb.gz | tail -n 1)
	v=$(bytes_of "$f" keep_alloc inuse_space)
	near "$v" "$(truth "$out.truth" live_bytes)" 15 || fail "inuse $v after the exec"
}

@test "heap: a replayed stream gives the same heap files" {
	run -0 "$RP" launch --unwind fp --window 2s --save-stream "$BATS_TEST_TMPDIR/s.rps" \
		--output "$out" -- "$RP_WORKLOADS/heap_mix" 3 20
	run -0 "$RP" replay --input "$BATS_TEST_TMPDIR/s.rps" --module-cache "$out/.modules" \
		--output "$out.replay"
	a=$(outputs "$out" heap pb.gz)
	b=$(outputs "$out.replay" heap pb.gz)
	[ "$a" = "$b" ]
	[ -n "$a" ]
	for f in $a; do
		diff <(pprof -raw "$out/$f" | grep -v '^Time:') \
			<(pprof -raw "$out.replay/$f" | grep -v '^Time:')
	done
}

@test "heap: --max-stacks leaves new heap stacks out, counts them, and keeps their blocks" {
	run -0 "$RP" launch --unwind fp --window 2s --max-stacks 2 --output "$out" -- \
		"$RP_WORKLOADS/heap_mix" 4 20
	printf '%s\n' "$output" >"$out.truth"
	for f in $(outputs "$out" heap pb.gz); do
		n=$(pprof -raw "$out/$f" | grep -Ec '^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+: ' || true)
		[ "$n" -le 2 ] || fail "$f: $n stacks"
	done
	cat "$out"/diagnostics-*.json | jq -s -e \
		'map(.heap.aggregation_dropped_alloc_space) | add > 0'
	cat "$out"/diagnostics-*.json | jq -s -e 'map(.warnings[]) | any(test("heap stack cap"))'
	# Left out or not, every live block is still tracked: exported and dropped in-use add
	# up to the live set.
	d=$(ls "$out"/diagnostics-*.json | tail -n 1)
	v=$(jq '.heap.inuse_space + .heap.aggregation_dropped_inuse_space' "$d")
	near "$v" "$(truth "$out.truth" live_bytes)" 15 || fail "in-use $v"
}

@test "heap: under --unwind dwarf the allocation stacks are walked with the CFI, to _start" {
	run -0 "$RP" launch --unwind dwarf --window 3s --output "$out" -- \
		"$RP_WORKLOADS/heap_mix" 3 20
	f=$out/$(outputs "$out" heap pb.gz | head -n 1)
	pprof -top -cum -nodecount=1000 -sample_index=alloc_space "$f" >"$BATS_TEST_TMPDIR/top"
	grep -Eq ' _start$' "$BATS_TEST_TMPDIR/top"
	grep -Eq ' churn_alloc$' "$BATS_TEST_TMPDIR/top"
	d=$(ls "$out"/diagnostics-*.json | head -n 1)
	jq -e '.cpu.unwind_mode == "dwarf" and .heap.unusable_stacks == 0 and .heap.samples > 0' "$d"
}

@test "heap: the stream ends before the probes are taken out, whose removal waits on the kernel" {
	# Each tracefs probe's removal waits for RCU grace periods (about 100 ms here): the
	# stages downstream see the end of the stream, and publish the last window, meanwhile.
	local events=/sys/kernel/tracing/uprobe_events
	start_workload heap_mix 3 20
	mkfifo "$BATS_TEST_TMPDIR/s"
	"$RP_BIN/collect" --pid "$wpid" --profiles heap --unwind fp --duration 1s \
		--uprobes tracefs --module-cache "$BATS_TEST_TMPDIR/m" >"$BATS_TEST_TMPDIR/s" &
	local cpid=$!
	cat "$BATS_TEST_TMPDIR/s" >"$BATS_TEST_TMPDIR/s.rps"
	# At the end of the stream collect still runs, its probes still in tracefs.
	grep -q "rustprofile_$cpid/" "$events"
	wait "$cpid"
	run -1 grep -q "rustprofile_$cpid/" "$events"
	# The stream is whole: it ends with its end frame.
	run -0 "$RP_BIN/unwind" --module-cache "$BATS_TEST_TMPDIR/m" <"$BATS_TEST_TMPDIR/s.rps"
}

@test "heap: the probes are in tracefs only while collect runs, and a killed collect's are swept" {
	local events=/sys/kernel/tracing/uprobe_events dead
	# A group named after a collect that no longer runs, as SIGKILL would leave it.
	sh -c 'exit 0' &
	dead=$!
	wait "$dead"
	echo "p:rustprofile_$dead/malloc_0 /bin/true:0x0" >>"$events"
	grep -q "rustprofile_$dead/" "$events"
	# Another recording on this machine has groups of its own: they are not this test's.
	local others
	others=$(grep -o "^[pr]:rustprofile_[0-9]*/" "$events" | grep -v "_$dead/" | sort -u || true)
	start_workload heap_mix 3 20
	mkdir -p "$out"
	"$RP_BIN/collect" --pid "$wpid" --profiles heap --unwind fp --duration 2s --window 2s \
		--uprobes tracefs --module-cache "$out/.modules" >"$out/s.rps" 2>"$out.log" &
	local rec=$! n=0
	for _ in $(seq 100); do
		n=$(grep -o "^[pr]:rustprofile_[0-9]*/" "$events" | grep -vxF "${others:-none}" |
			grep -c . || true)
		[ "$n" -ge 2 ] && ! grep -q "rustprofile_$dead/" "$events" && break
		sleep 0.1
	done
	cat "$events"
	wait "$rec"
	[ "$n" -ge 2 ]
	# What is left belongs to a collect still running (another recording), none to ours.
	local g
	for g in $(grep -o "rustprofile_[0-9]*/" "$events" | sort -u); do
		g=${g#rustprofile_}
		kill -0 "${g%/}" 2>/dev/null || fail "group rustprofile_$g outlived its collect"
	done
	run -0 "$RP" replay --input "$out/s.rps" --output "$out"
	[ "$(outputs "$out" heap pb.gz | wc -l)" -ge 1 ]
}

# uprobe_multi_links PID: the uprobe_multi links (entries, and returns: uretprobe_multi)
# collect PID holds open.
uprobe_multi_links() {
	local f n=0
	for f in /proc/"$1"/fdinfo/*; do
		grep -Eqx 'link_type:.u(ret)?probe_multi' "$f" 2>/dev/null && n=$((n + 1))
	done
	echo "$n"
}

@test "heap: --uprobes multi makes the probes two uprobe_multi links, nothing in tracefs, and sees every thread's allocations" {
	kernel_at_least 6 12 || skip "uprobe_multi takes the target's other threads from Linux 6.12"
	# A thread started after the probes attached allocates; the main one only waits.
	cat >"$BATS_TEST_TMPDIR/late.c" <<-'EOF'
	#include <pthread.h>
	#include <stdlib.h>
	#include <unistd.h>
	static void *volatile keep[4096];
	__attribute__((noinline)) void late_thread_alloc(int i) { free(keep[i % 4096]); keep[i % 4096] = malloc(4096 + i % 64); }
	static void *late(void *arg) { for (int i = 0;; i++) { late_thread_alloc(i); usleep(50); } return arg; }
	int main(void) { pthread_t t; sleep(1); pthread_create(&t, NULL, late, NULL); sleep(30); return 0; }
	EOF
	cc -O1 -fno-omit-frame-pointer -pthread -o "$BATS_TEST_TMPDIR/late" "$BATS_TEST_TMPDIR/late.c"
	"$BATS_TEST_TMPDIR/late" &
	wpid=$!
	sleep 0.2
	local events=/sys/kernel/tracing/uprobe_events
	mkdir -p "$out"
	"$RP_BIN/collect" --pid "$wpid" --profiles heap --unwind fp --duration 3s --window 3s \
		--uprobes multi --module-cache "$out/.modules" >"$out/s.rps" &
	local cpid=$! n=0
	for _ in $(seq 50); do
		n=$(uprobe_multi_links "$cpid")
		[ "$n" -eq 2 ] && break
		sleep 0.1
	done
	[ "$n" -eq 2 ]
	run -1 grep -q "rustprofile_$cpid/" "$events"
	wait "$cpid"
	run -0 "$RP" replay --input "$out/s.rps" --output "$out"
	pprof -top -nodecount=100 -sample_index=alloc_space \
		"$out/$(outputs "$out" heap pb.gz | tail -n 1)" >"$out/top"
	cat "$out/top"
	grep -q ' late_thread_alloc$' "$out/top"
}

@test "heap: under --unwind auto the calibration's allocations are kept, also of a program that ends during it" {
	# heap_mix mostly sleeps: about 8 CPU samples a second, so the calibration (64 samples,
	# at most 10 s) outlasts it, and the verdict comes when it has ended.
	run -0 "$RP" launch --profiles cpu,heap --window 1s --output "$out" -- \
		"$RP_WORKLOADS/heap_mix" 3 20
	printf '%s\n' "$output" >"$out.truth"
	cat "$out"/diagnostics-*.json | jq -s -e 'map(.cpu.unwind_reason) | any(test("^auto: "))'
	check_estimates "$out"
	# The held allocations were written with their stack copies for the DWARF verdict.
	cat "$out"/diagnostics-*.json | jq -s -e 'map(.heap.usable_stacks) | add > 100'
	run ! grep -q "ended before the allocator probes" "$out"/diagnostics-*.json
}

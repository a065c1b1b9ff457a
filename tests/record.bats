#!/usr/bin/env bats
# record and launch: live CPU profiles of bundled workloads, read back by go tool pprof.

load helper

setup() {
	require_root
	open_tmpdirs
	out=$BATS_TEST_TMPDIR/out
}

teardown() {
	stop_workload
}

@test "record: a 60/30/10 split shows each share within 5 points, deep stacks and the thread name" {
	start_workload cpu_split 30
	run -0 "$RP" record --pid "$wpid" --duration 8s --window 8s --cpu-frequency 499 --output "$out"
	prof=$(outputs "$out" cpu pb.gz | tail -n 1)
	[ -n "$prof" ]
	a=$(cum_share hot_a "$out/$prof")
	b=$(cum_share hot_b "$out/$prof")
	c=$(cum_share hot_c "$out/$prof")
	echo "shares: hot_a=$a hot_b=$b hot_c=$c"
	within "$a" 60 5
	within "$b" 30 5
	within "$c" 10 5
	# Stacks of at least three frames: hot_a is reached through dispatch and run_worker.
	run -0 pprof -traces "$out/$prof"
	echo "$output" | grep -A3 -E '^\s+[0-9.]+m?s +hot_a$' | grep -q dispatch
	echo "$output" | grep -A3 -E '^\s+[0-9.]+m?s +hot_a$' | grep -q run_worker
	run -0 pprof -tags "$out/$prof"
	assert_output --partial "rp-worker"
	assert_output --partial "thread.id"
	assert_output --partial "process.pid"
}

@test "record: a syscall-heavy workload shows kernel frames under its user frames" {
	start_workload syscall_heavy 30
	run -0 "$RP" record --pid "$wpid" --duration 4s --window 4s --cpu-frequency 499 --output "$out"
	prof=$(outputs "$out" cpu pb.gz | tail -n 1)
	run -0 pprof -traces "$out/$prof"
	# A trace whose leaf part is in the kernel and whose root part is the workload's code.
	echo "$output" | awk '/-----------/ { if (k && u) ok = 1; k = u = 0; next }
		/entry_SYSCALL|do_syscall_64|__x64_sys/ { k = 1 }
		/checked|main/ { if (k) u = 1 }
		END { exit !ok }'
}

@test "record: --duration 6s --window 2s publishes three windows with increasing start times" {
	start_workload cpu_split 30
	run -0 "$RP" record --pid "$wpid" --duration 6s --window 2s --output "$out"
	cpus=$(outputs "$out" cpu pb.gz)
	diags=$(outputs "$out" diagnostics json)
	[ "$(echo "$cpus" | wc -l)" -eq 3 ]
	[ "$(echo "$diags" | wc -l)" -eq 3 ]
	echo "$cpus" | awk -F- '{ print $3 }' | tr '\n' ' ' | grep -qx '000000 000001 000002 '
	echo "$cpus" | sed 's/.*-\([0-9]*\)\.pb\.gz/\1/' | sort -c -n
	# wrote lines name exactly the published files: a heap profile too (the default).
	heaps=$(outputs "$out" heap pb.gz)
	[ "$(echo "$heaps" | wc -l)" -eq 3 ]
	[ "$(echo "$output" | grep -c '^wrote ')" -eq 9 ]
	for f in $cpus $heaps $diags; do echo "$output" | grep -qx "wrote $out/$f"; done
}

@test "record: --duration 4s --window 2s marks the second, whole window and only it final" {
	start_workload cpu_split 30
	run -0 "$RP" record --pid "$wpid" --duration 4s --window 2s --output "$out"
	diags=$(outputs "$out" diagnostics json)
	[ "$(echo "$diags" | wc -l)" -eq 2 ]
	first=$out/$(echo "$diags" | head -n 1)
	last=$out/$(echo "$diags" | tail -n 1)
	run -0 jq -e '.final_window == false and .duration_nanos == 2000000000' "$first"
	run -0 jq -e '.final_window == true and .duration_nanos == 2000000000
		and .window_index == 1' "$last"
}

@test "record: --keep-windows 2 leaves only the newest two windows" {
	start_workload cpu_split 30
	run -0 "$RP" record --pid "$wpid" --duration 4s --window 1s --keep-windows 2 --output "$out"
	[ "$(outputs "$out" cpu pb.gz | wc -l)" -eq 2 ]
	[ "$(outputs "$out" diagnostics json | wc -l)" -eq 2 ]
	outputs "$out" cpu pb.gz | awk -F- '{ print $3 }' | tr '\n' ' ' | grep -qx '000002 000003 '
}

@test "record: SIGTERM publishes the final short window" {
	start_workload cpu_split 30
	"$RP" record --pid "$wpid" --duration 0 --window 10s --output "$out" >"$BATS_TEST_TMPDIR/log" 3>&- &
	rec=$!
	sleep 3
	kill -TERM "$rec"
	wait "$rec"
	[ "$(outputs "$out" cpu pb.gz | wc -l)" -eq 1 ]
	d=$out/$(outputs "$out" diagnostics json)
	run -0 jq -e '.final_window == true and .duration_nanos < 8000000000 and .cpu.samples > 0' "$d"
}

@test "launch: target exit publishes the final short window and returns 0" {
	run -0 "$RP" launch --duration 0 --window 10s --cpu-frequency 199 --output "$out" -- \
		"$RP_WORKLOADS/cpu_split" 3
	[ "$(outputs "$out" cpu pb.gz | wc -l)" -eq 1 ]
	d=$out/$(outputs "$out" diagnostics json)
	run -0 jq -e '.final_window == true and .cpu.samples > 50 and .target.kind == "launch"' "$d"
	prof=$out/$(outputs "$out" cpu pb.gz)
	run -0 pprof -top "$prof"
	assert_output --partial hot_a
}

@test "record: every stage after collect runs as the output directory's owner, with no capabilities" {
	start_workload cpu_split 30
	mkdir -p "$out"
	chown nobody: "$out"
	"$RP" record --pid "$wpid" --duration 4s --window 4s --output "$out" >/dev/null 3>&- &
	rec=$!
	sleep 2
	for stage in unwind aggregate emit-pprof commit; do
		p=$(pgrep -P "$rec" -x "$stage" | head -n 1)
		[ -n "$p" ] || { echo "no $stage process"; false; }
		uid=$(awk '/^Uid:/ { print $2 }' "/proc/$p/status")
		capeff=$(awk '/^CapEff:/ { print $2 }' "/proc/$p/status")
		echo "$stage uid=$uid CapEff=$capeff"
		[ "$uid" -eq "$(id -u nobody)" ]
		[ "$capeff" = 0000000000000000 ]
	done
	c=$(pgrep -P "$rec" -x collect | head -n 1)
	[ "$(awk '/^Uid:/ { print $2 }' "/proc/$c/status")" -eq 0 ]
	wait "$rec"
}

@test "replay: a saved stream gives the same samples as the live run" {
	start_workload cpu_split 30
	run -0 "$RP" record --pid "$wpid" --duration 3s --window 3s --output "$out" \
		--save-stream "$out/rec.stream"
	live=$out/$(outputs "$out" cpu pb.gz)
	run -0 "$RP" replay --input "$out/rec.stream" --window 3s --output "$BATS_TEST_TMPDIR/replay"
	again=$BATS_TEST_TMPDIR/replay/$(outputs "$BATS_TEST_TMPDIR/replay" cpu pb.gz)
	[ "$(basename "$live")" = "$(basename "$again")" ]
	pprof -raw "$live" | sed -n '/^Samples:/,/^Locations/p' >"$BATS_TEST_TMPDIR/a"
	pprof -raw "$again" | sed -n '/^Samples:/,/^Locations/p' >"$BATS_TEST_TMPDIR/b"
	[ -s "$BATS_TEST_TMPDIR/a" ]
	diff "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b"
}

@test "replay: without --window, aggregate cuts the windows the stream was recorded with" {
	start_workload cpu_split 30
	run -0 "$RP" record --pid "$wpid" --duration 4s --window 2s --output "$out" \
		--save-stream "$out/rec.stream"
	again=$BATS_TEST_TMPDIR/replay
	mkdir -p "$again"
	"$RP_BIN/unwind" --module-cache "$out/.modules" <"$out/rec.stream" | "$RP_BIN/aggregate" |
		"$RP_BIN/emit-pprof" --output "$again" | "$RP_BIN/commit" --output "$again"
	live=$(outputs "$out" diagnostics json)
	[ "$(outputs "$again" diagnostics json)" = "$live" ]
	[ "$(echo "$live" | wc -l)" -eq 2 ]
	for d in $live; do
		run -0 jq -e '.duration_nanos == 2000000000' "$again/$d"
	done
	# The end of the replayed stream makes the last of them final.
	run -0 jq -s -e 'map(.final_window) == [false, true]' \
		$(for d in $live; do echo "$again/$d"; done)
	# An explicit --window still wins.
	mkdir "$again/1s"
	"$RP_BIN/unwind" --module-cache "$out/.modules" <"$out/rec.stream" |
		"$RP_BIN/aggregate" --window 1s | "$RP_BIN/emit-pprof" --output "$again/1s" |
		"$RP_BIN/commit" --output "$again/1s"
	[ "$(outputs "$again/1s" diagnostics json | wc -l)" -eq 4 ]
}

@test "record: --max-stacks and --max-pending-events are enforced and reported" {
	start_workload syscall_heavy 30
	run -0 "$RP" record --pid "$wpid" --duration 3s --window 3s --cpu-frequency 499 \
		--max-stacks 2 --max-pending-events 4 --event-reorder-window 3s --output "$out"
	d=$out/$(outputs "$out" diagnostics json)
	cat "$d"
	run -0 jq -e '.cpu.distinct_stacks == 2 and .cpu.max_stacks == 2
		and .cpu.aggregation_dropped_samples > 0 and .cpu.aggregation_dropped_nanoseconds > 0
		and .cpu.cpu_nanoseconds > 0
		and .event_order.max_pending_events == 4 and .event_order.forced_flushes > 0
		and .event_order.peak_pending_events == 4
		and (.warnings | map(select(test("stack cap"))) | length) == 1' "$d"
	# The pprof holds exactly the two kept stacks: -traces rules off each and closes with one.
	prof=$out/$(outputs "$out" cpu pb.gz)
	[ "$(pprof -traces "$prof" | grep -c -- '-----------+')" -eq 3 ]
}

@test "record: --svg and --collapsed publish with their window and leave with it" {
	start_workload cpu_split 30
	# Frame pointers: auto's first windows come at once when its calibration ends, and a
	# derived emitter busy with one sheds the next (docs/derived-outputs.md).
	run -0 "$RP" record --pid "$wpid" --unwind fp --duration 3s --window 1s --keep-windows 2 \
		--svg --collapsed --output "$out"
	[ "$(outputs "$out" cpu svg | wc -l)" -eq 2 ]
	[ "$(outputs "$out" cpu collapsed | wc -l)" -eq 2 ]
	[ "$(outputs "$out" cpu pb.gz | wc -l)" -eq 2 ]
	svg=$out/$(outputs "$out" cpu svg | tail -n 1)
	xmllint --noout "$svg"
	grep -q hot_a "$svg"
	! grep -qi '<script' "$svg" || fail "line 198: the negated check succeeded"
	col=$out/$(outputs "$out" cpu collapsed | tail -n 1)
	grep -q '^cpu_split;.*;dispatch;hot_a [0-9]*$' "$col"
	d=$out/$(outputs "$out" diagnostics json | tail -n 1)
	run -0 jq -e '.output_paths["svg-cpu"] and .output_paths["collapsed-cpu"]' "$d"
}

@test "record: --firefox-profile jslb publishes a Firefox profile per window" {
	start_workload cpu_split 30
	# Frame pointers, as above: no calibration to hand over two windows at once.
	run -0 "$RP" record --pid "$wpid" --unwind fp --duration 2s --window 1s --firefox-profile jslb \
		--max-timeline-samples 10 --output "$out"
	[ "$(outputs "$out" firefox jslb.gz | wc -l)" -eq 2 ]
	d=$out/$(outputs "$out" diagnostics json | tail -n 1)
	run -0 jq -e '.output_paths.firefox and .firefox.timeline_samples == 10
		and .firefox.dropped_samples > 0
		and .event_order.timeline_events_dropped == .firefox.dropped_samples' "$d"
}

# hand_chain DIR [aggregate options]: the saved stream $out/rec.stream through every
# window-reading emitter, by hand.
hand_chain() {
	local d=$1 b=$RP_BIN
	shift
	mkdir -p "$d"
	"$b/unwind" --module-cache "$out/.modules" <"$out/rec.stream" | "$b/aggregate" "$@" |
		tee "$d.agg" | "$b/emit-svg" --output "$d" | "$b/emit-collapsed" --output "$d" |
		"$b/emit-json" --output "$d" | "$b/emit-pprof" --output "$d" |
		"$b/commit" --output "$d" >/dev/null
}

@test "aggregate --windows-only: the same files from every window emitter, without the events" {
	run -0 "$RP" launch --profiles cpu,heap,off-cpu --unwind fp --duration 4s --window 2s \
		--output "$out" --save-stream "$out/rec.stream" -- "$RP_WORKLOADS/heap_mix" 3
	hand_chain "$BATS_TEST_TMPDIR/all"
	hand_chain "$BATS_TEST_TMPDIR/win" --windows-only
	local sg=$BATS_TEST_TMPDIR/streamgen n=0 f
	${CC:-cc} -std=c17 -D_GNU_SOURCE -I"$BATS_TEST_DIRNAME/../lib" ${LDFLAGS:-} -o "$sg" \
		"$BATS_TEST_DIRNAME/tools/streamgen.c" "$RP_BIN/../lib/librp.a" -lz -lm
	# The full stream has the events; the windows-only one none, and is a tiny part of it.
	[ "$("$sg" dump <"$BATS_TEST_TMPDIR/all.agg" | grep -c -E '^(stack|offcpu-stack|heap-stack|heap-free)( |$)')" -gt 100 ]
	run -1 grep -E '^(stack|offcpu-stack|heap-stack|heap-free|heap-reset)( |$)' \
		<("$sg" dump <"$BATS_TEST_TMPDIR/win.agg")
	[ $(($(stat -c %s "$BATS_TEST_TMPDIR/win.agg") * 4)) -lt "$(stat -c %s "$BATS_TEST_TMPDIR/all.agg")" ]
	for f in $(cd "$BATS_TEST_TMPDIR/all" && ls | grep -v '^diagnostics-'); do
		cmp "$BATS_TEST_TMPDIR/all/$f" "$BATS_TEST_TMPDIR/win/$f"
		n=$((n + 1))
	done
	# pprof, SVG, collapsed and JSON of cpu, off-cpu and heap: several windows of each
	[ "$n" -ge 12 ]
}

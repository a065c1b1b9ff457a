#!/usr/bin/env bats
# --profiles off-cpu: the sched_switch eBPF collector, checked against the bundled
# offcpu_pipe workload, libbpf-tools' offcputime and its own split and loss accounting.

load helper
load derived

setup() {
	require_root
	open_tmpdirs
	out=$BATS_TEST_TMPDIR/out
}

teardown() {
	stop_workload
}

# tid_of PID NAME: the thread of PID called NAME.
tid_of() {
	local f
	for f in /proc/"$1"/task/*/comm; do
		[ "$(cat "$f")" = "$2" ] && { basename "$(dirname "$f")"; return 0; }
	done
	return 1
}

# cum_ms PROFILE FUNCTION [pprof options...]: cumulative off-CPU milliseconds of FUNCTION.
cum_ms() {
	local prof=$1 fn=$2
	shift 2
	pprof -top -cum -unit=ms -nodecount=1000 -sample_index=off_cpu "$@" "$prof" |
		awk -v f="$fn" '{ name = $6; for (i = 7; i <= NF; i++) name = name " " $i }
			name == f { sub("ms", "", $4); print $4; found = 1; exit }
			END { if (!found) print 0 }'
}

# diag_sum DIR KEY: the sum over the diagnostics files of off_cpu.KEY.
diag_sum() {
	cat "$1"/diagnostics-*.json | jq -s "map(.off_cpu.$2) | add"
}

@test "off-cpu: half blocked in read() gives the read path half the wall time, as offcputime sees it" {
	command -v offcputime >/dev/null || fail "offcputime (libbpf-tools) is not installed"
	start_workload offcpu_pipe 30 half
	sleep 0.5
	tid=$(tid_of "$wpid" reader)
	offcputime -t "$tid" 6 >"$BATS_TEST_TMPDIR/peer.txt" 2>/dev/null &
	peer=$!
	run -0 "$RP" record --pid "$wpid" --profiles cpu,off-cpu --unwind fp --duration 6s \
		--window 6s --output "$out"
	wait "$peer"
	prof=$out/$(outputs "$out" off-cpu pb.gz | tail -n 1)
	[ -f "$prof" ]
	# The reader's time in the pipe read, against the window's wall time.
	ms=$(cum_ms "$prof" anon_pipe_read -tagfocus=thread.name=reader)
	share=$(awk -v m="$ms" 'BEGIN { printf "%.1f", m / 6000 * 100 }')
	# offcputime: microseconds of the reader's stacks that go through the pipe read.
	peer_share=$(awk '/^$/ { p = 0 } /anon_pipe_read/ { p = 1 }
		/^ +[0-9]+$/ { if (p) us += $1; p = 0 } END { printf "%.1f", us / 6e6 * 100 }' \
		"$BATS_TEST_TMPDIR/peer.txt")
	echo "read path: ours ${share}% of 6 s, offcputime ${peer_share}%"
	within "$share" 50 10
	within "$peer_share" "$share" 10
	# The same blocking stack, user frames included, under the blocked root, with the
	# caller of glibc's frameless read wrapper (wait_reply) that a frame-pointer walk skips
	# put back from the words at the stack pointer.
	run -0 pprof -traces -tagfocus=thread.name=reader -sample_index=off_cpu "$prof"
	echo "$output" | awk '/-----------/ { k = u = w = r = 0; next }
		/anon_pipe_read/ { k = 1 } /ksys_read/ { if (k) u = 1 }
		/ wait_reply$/ { if (u) w = 1 } / reader$/ { if (w) r = 1 }
		/off-CPU blocked/ { if (r) ok = 1 }
		END { exit !ok }'
	# Two frameless libc functions in a row (nanosleep, then clock_nanosleep): both
	# callers are put back, down to the writer thread's function.
	run -0 pprof -traces -tagfocus=thread.name=writer -sample_index=off_cpu "$prof"
	echo "$output" | awk '/-----------/ { c = n = 0; next }
		/clock_nanosleep$/ { c = 1 } / __nanosleep$/ { if (c) n = 1 }
		/ writer$/ { if (n) ok = 1 }
		END { exit !ok }'
	grep -A12 anon_pipe_read "$BATS_TEST_TMPDIR/peer.txt" | grep -q ksys_read
	grep -A12 anon_pipe_read "$BATS_TEST_TMPDIR/peer.txt" | grep -q reader
	# The diagnostics and the profile tell the same story.
	d=$(ls "$out"/diagnostics-*.json | tail -n 1)
	run -0 jq -e '.off_cpu.intervals > 100 and .off_cpu.ring_buffer_drops == 0 and
		(.written_profiles | index("off-cpu")) != null' "$d"
}

@test "off-cpu: a condition-variable wait, whose frame pointer is not one, is walked with the CFI" {
	# glibc's pthread_cond_wait uses the frame-pointer register as a general one: the
	# kernel's walk ends at the leaf, so the stack copy taken then is walked by unwind.
	start_workload offcpu_pipe 30 cond
	run -0 "$RP" record --pid "$wpid" --profiles off-cpu --duration 3s --window 3s \
		--collapsed --output "$out"
	col=$(outputs "$out" off-cpu collapsed | tail -n 1)
	# The waiter's half of the time (the signaller sleeps the other half) has its whole
	# stack, down to the thread's start.  The main thread, in pthread_join from before the
	# start, waits the whole recording too: it is not part of the halves.
	total=$(awk '!/pthread_(clock)?join/ { s += $NF } END { printf "%.0f", s }' "$out/$col")
	whole=$(awk '/^offcpu_pipe;off-CPU blocked;clone3;start_thread;waiter;wait_signal;[^;]*pthread_cond_wait;.*futex/ { s += $NF } END { printf "%.0f", s }' "$out/$col")
	echo "waiter's whole stacks: $whole of $total ns"
	[ "$whole" -gt $((total / 3)) ]
	d=$(ls "$out"/diagnostics-*.json | tail -n 1)
	run -0 jq -e '.off_cpu.stack_errors == 0 and .off_cpu.unusable_stacks == 0' "$d"
}

@test "off-cpu: nanoseconds of intervals split across windows add up to the unsplit total" {
	start_workload offcpu_pipe 30 half
	run -0 "$RP" record --pid "$wpid" --profiles off-cpu --unwind fp --duration 3s \
		--window 250ms --output "$out" --save-stream "$BATS_TEST_TMPDIR/s.rps"
	# off-cpu alone: no CPU profile.
	[ -z "$(outputs "$out" cpu pb.gz)" ]
	[ "$(outputs "$out" off-cpu pb.gz | wc -l)" -ge 11 ]
	run -0 "$RP" replay --input "$BATS_TEST_TMPDIR/s.rps" --window 60s \
		--output "$BATS_TEST_TMPDIR/whole"
	split=$(diag_sum "$out" nanoseconds)
	whole=$(diag_sum "$BATS_TEST_TMPDIR/whole" nanoseconds)
	pieces=$(diag_sum "$out" pieces)
	intervals=$(diag_sum "$out" intervals)
	echo "split $split ns, whole $whole ns; $intervals intervals in $pieces pieces"
	[ "$whole" -gt 2000000000 ]
	[ "$split" -eq "$whole" ]
	# Some interval did cross a boundary, and each is counted once.
	[ "$(diag_sum "$BATS_TEST_TMPDIR/whole" intervals)" -eq "$intervals" ]
	[ "$pieces" -gt "$intervals" ]
	# Each window's pprof carries what its diagnostics say.
	prof=$(outputs "$out" off-cpu pb.gz | sed -n 3p)
	d=$out/diagnostics-${prof#off-cpu-}
	d=${d%.pb.gz}.json
	ns=$(jq .off_cpu.nanoseconds "$d")
	run -0 pprof -raw "$out/$prof"
	total=$(echo "$output" | awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
		s && /^ +[0-9]+ +[0-9]+:/ { sub(":", "", $2); t += $2 } END { print t + 0 }')
	[ "$total" -eq "$ns" ]
}

@test "off-cpu: a thread that blocks at one place thousands of times a second costs a few frames a drain" {
	start_workload offcpu_pipe 30 pingpong
	run -0 "$RP" record --pid "$wpid" --profiles off-cpu --unwind fp --duration 2s \
		--window 60s --output "$out" --save-stream "$BATS_TEST_TMPDIR/s.rps"
	build_streamgen
	# collect writes one offcpu frame per thread and stacks of each drain, carrying the
	# intervals as spans.
	"$STREAMGEN" dump <"$BATS_TEST_TMPDIR/s.rps" >"$BATS_TEST_TMPDIR/frames"
	read -r frames spans < <(awk '$1 == "offcpu" { f++; n += $2 } END { print f + 0, n + 0 }' \
		"$BATS_TEST_TMPDIR/frames")
	echo "$spans intervals or pieces in $frames offcpu frames"
	[ "$spans" -gt 10000 ]
	[ "$spans" -ge $((50 * frames)) ]
	# Every one of them reached the windows, and a replay counts the same.
	[ "$(diag_sum "$out" pieces)" -eq "$spans" ]
	run -0 "$RP" replay --input "$BATS_TEST_TMPDIR/s.rps" --window 500ms \
		--output "$BATS_TEST_TMPDIR/again"
	[ "$(diag_sum "$BATS_TEST_TMPDIR/again" nanoseconds)" -eq "$(diag_sum "$out" nanoseconds)" ]
	[ "$(diag_sum "$BATS_TEST_TMPDIR/again" intervals)" -eq "$(diag_sum "$out" intervals)" ]
}

@test "off-cpu: --offcpu-phase all on an oversubscribed workload shows the scheduling-delay roots" {
	start_workload offcpu_pipe 30 crowd 8
	run -0 "$RP" record --pid "$wpid" --profiles cpu,off-cpu --offcpu-phase all --unwind fp \
		--duration 3s --window 3s --output "$out"
	prof=$out/$(outputs "$out" off-cpu pb.gz | tail -n 1)
	run -0 pprof -top -cum -nodecount=1000 -sample_index=off_cpu "$prof"
	echo "$output" | grep -E 'scheduling delay \((preempted|yielded)\)'
	delay=$(cum_ms "$prof" "scheduling delay (preempted)")
	delay=$(awk -v a="$delay" -v b="$(cum_ms "$prof" "scheduling delay (yielded)")" \
		'BEGIN { print a + b }')
	echo "scheduling delay: $delay ms"
	# Eight computing threads on this machine's CPUs wait far more than a second in 3 s.
	awk -v d="$delay" -v n="$(nproc)" 'BEGIN { exit !(n >= 8 || d > 1000) }'
	# They never call sched_yield: their wait is preemption (the tick, or the reschedule on
	# their way back to user space), not a yield.
	yielded=$(cum_ms "$prof" "scheduling delay (yielded)")
	echo "yielded: $yielded ms"
	awk -v y="$yielded" -v d="$delay" 'BEGIN { exit !(y <= d / 20) }'
	# The default phase (blocked) has no such root.
	rm -rf "$out"
	run -0 "$RP" record --pid "$wpid" --profiles off-cpu --unwind fp --duration 2s \
		--window 2s --output "$out"
	prof=$out/$(outputs "$out" off-cpu pb.gz | tail -n 1)
	run -0 pprof -top -cum -nodecount=1000 -sample_index=off_cpu "$prof"
	refute_output --partial "scheduling delay"
}

@test "off-cpu: threads that hand the CPU over with sched_yield wait under (yielded)" {
	start_workload offcpu_pipe 30 yield 8
	run -0 "$RP" record --pid "$wpid" --profiles off-cpu --offcpu-phase all --unwind fp \
		--duration 3s --window 3s --output "$out"
	prof=$out/$(outputs "$out" off-cpu pb.gz | tail -n 1)
	yielded=$(cum_ms "$prof" "scheduling delay (yielded)")
	preempted=$(cum_ms "$prof" "scheduling delay (preempted)")
	echo "yielded $yielded ms, preempted $preempted ms"
	awk -v n="$(nproc)" 'BEGIN { exit !(n < 8) }' || skip "$(nproc) CPUs: 8 threads do not crowd them"
	awk -v y="$yielded" -v p="$preempted" 'BEGIN { exit !(y > 500 && y > 2 * p) }'
	# The yield is seen in its stack too, under the yielded root.
	run -0 pprof -traces -sample_index=off_cpu "$prof"
	echo "$output" | grep -q sched_yield
}

@test "off-cpu: a tiny ring buffer counts its drops" {
	run -0 "$RP" launch --profiles off-cpu --offcpu-ring-buffer 4096 --unwind fp \
		--duration 0 --window 60s --output "$out" -- "$RP_WORKLOADS/offcpu_pipe" 2 pingpong
	trips=$(echo "$output" | awk '/^round_trips/ { print $2 }')
	drops=$(diag_sum "$out" ring_buffer_drops)
	intervals=$(diag_sum "$out" intervals)
	echo "$trips round trips; $intervals intervals, $drops dropped"
	[ "$drops" -gt 0 ]
	# Every switch is either in the profile or counted: at most two per round trip,
	# and most round trips block both threads.
	awk -v i="$intervals" -v d="$drops" -v t="$trips" \
		'BEGIN { exit !(i + d <= 2 * t + 100 && i + d >= t / 2) }'
	jq -e '.warnings | length >= 0' "$(ls "$out"/diagnostics-*.json | head -n 1)"
}

@test "off-cpu: more waits needing a stack copy than the map of 4,096 holds are counted, and kept" {
	# Each of 4,300 threads waits on a condition variable at once, and glibc's wait leaves
	# no frame pointer: every one wants a stack copy, and the map holds 4,096.
	n=4300
	run -0 "$RP" launch --profiles off-cpu --duration 0 --window 60s --collapsed \
		--output "$out" -- "$RP_WORKLOADS/offcpu_pipe" 2 herd "$n"
	assert_output --partial "herd $n"
	errors=$(diag_sum "$out" stack_errors)
	intervals=$(diag_sum "$out" intervals)
	echo "$intervals intervals, $errors stack errors"
	# Beyond the map's 4,096 each wait is counted, never silently lost, ...
	[ "$errors" -ge $((n - 4096)) ]
	# ... and its interval is kept, with the stack the kernel's chain gave it: the herd's
	# two seconds each are all there, most with the whole stack, the rest with the leaf's.
	[ "$intervals" -ge "$n" ]
	ns=$(diag_sum "$out" nanoseconds)
	[ "$ns" -ge $((n * 3 / 2 * 1000000000)) ]
	col=$(outputs "$out" off-cpu collapsed | tail -n 1)
	whole=$(awk '/;start_thread;herd;wait_herd;/ { s += $NF } END { printf "%.0f", s }' "$out/$col")
	short=$(awk '/^offcpu_pipe;off-CPU blocked;__futex/ { s += $NF } END { printf "%.0f", s }' "$out/$col")
	echo "$ns ns: $whole with the whole stack, $short with the leaf's"
	[ "$whole" -ge $((4000 * 1000000000)) ]
	[ "$short" -ge $(((n - 4096) * 1000000000)) ]
}

@test "off-cpu: off-CPU alone has no unwind calibration to wait for" {
	# A command that is mostly blocked and ends within a second never gives a calibration
	# its 64 CPU samples: with nothing to unwind there must be no calibration to wait for.
	run -0 "$RP" launch --profiles off-cpu --duration 0 --window 60s --output "$out" \
		-- "$RP_WORKLOADS/offcpu_pipe" 1 half
	d=$(ls "$out"/diagnostics-*.json | head -n 1)
	jq -e '.cpu.unwind_mode == "fp" and .cpu.samples == 0 and .cpu.calibration == null' "$d"
	jq -e '.cpu.unwind_reason | startswith("no cpu profile")' "$d"
	intervals=$(diag_sum "$out" intervals)
	echo "$intervals intervals"
	[ "$intervals" -gt 50 ]
}

@test "off-cpu: a failed load stops the request, or --allow-partial drops it and keeps cpu" {
	start_workload offcpu_pipe 30 half
	printf 'not BTF' >"$BATS_TEST_TMPDIR/bad.btf"
	run -1 "$RP" record --pid "$wpid" --profiles cpu,off-cpu --unwind fp --duration 1s \
		--offcpu-btf "$BATS_TEST_TMPDIR/bad.btf" --output "$out"
	assert_output --partial "off-cpu: cannot load the sched_switch program"
	[ -z "$(ls "$out" 2>/dev/null)" ]
	run -0 "$RP" record --pid "$wpid" --profiles cpu,off-cpu --unwind fp --duration 2s \
		--window 2s --allow-partial --offcpu-btf "$BATS_TEST_TMPDIR/bad.btf" --output "$out"
	[ -n "$(outputs "$out" cpu pb.gz)" ]
	[ -z "$(outputs "$out" off-cpu pb.gz)" ]
	d=$(ls "$out"/diagnostics-*.json | head -n 1)
	run -0 jq -c '[.requested_profiles, .written_profiles, .warnings]' "$d"
	assert_output --partial '["cpu","off-cpu"],["cpu"]'
	assert_output --partial "off-cpu dropped (--allow-partial): off-cpu: cannot load"
	# The lifecycle program needs no BTF: a bad one leaves it running.
	run -1 grep -q "lifecycle eBPF unavailable" <<<"$output"
	# Nothing else to record: partial mode cannot help.
	run -1 "$RP" record --pid "$wpid" --profiles off-cpu --duration 1s --allow-partial \
		--offcpu-btf "$BATS_TEST_TMPDIR/bad.btf" --output "$out"
	assert_output --partial "no other profile was requested"
}

@test "off-cpu: bad off-cpu options are refused before anything starts" {
	start_workload offcpu_pipe 30 half
	run -1 "$RP" record --pid "$wpid" --profiles cpu,off-cpu --offcpu-phase sometimes \
		--output "$out"
	assert_output --partial "unknown phase 'sometimes'"
	run -1 "$RP" record --pid "$wpid" --profiles off-cpu --offcpu-ring-buffer 5000 \
		--output "$out"
	assert_output --partial "not a power of two"
	run -1 "$RP" record --pid "$wpid" --profiles off-cpu --offcpu-min-duration-us x \
		--output "$out"
	assert_output --partial "--offcpu-min-duration-us"
	for p in 0 101 half; do
		run -1 "$RP" record --pid "$wpid" --profiles off-cpu --offcpu-probability "$p" \
			--output "$out"
		assert_output --partial "--offcpu-probability"
		[ "${#lines[@]}" -eq 1 ]
	done
	run -1 "$RP" record --pid "$wpid" --profiles cpu,off-cpu,gpu --output "$out"
	assert_output --partial "unknown profile 'gpu'"
	[ ! -e "$out" ]
}

@test "off-cpu: --offcpu-probability 50 records half the switch-outs and weighs them twice" {
	start_workload offcpu_pipe 30 half
	sleep 0.5
	run -0 "$RP" record --pid "$wpid" --profiles off-cpu --offcpu-probability 50 \
		--unwind fp --duration 6s --window 6s --output "$out"
	d=$(ls "$out"/diagnostics-*.json | head -n 1)
	prof=$out/$(outputs "$out" off-cpu pb.gz | head -n 1)
	run -0 jq -r '.off_cpu | "\(.probability_percent) \(.recorded_intervals) \(.unsampled_switch_outs) \(.intervals) \(.nanoseconds)"' "$d"
	read -r pct recorded unsampled intervals ns <<<"$output"
	echo "$recorded recorded, $unsampled left out, $intervals estimated, $ns ns"
	[ "$pct" -eq 50 ]
	# About half of the switch-outs were recorded, and each counts twice.
	[ "$recorded" -gt 100 ]
	[ "$unsampled" -gt 100 ]
	within $((100 * recorded / (recorded + unsampled))) 50 10
	[ "$intervals" -eq $((2 * recorded)) ]
	# The estimate keeps the read path at about half the reader's 6 s.
	share=$(cum_ms "$prof" anon_pipe_read -tagfocus=thread.name=reader |
		awk '{ printf "%d", $1 / 60 }')
	echo "read path: ${share}% of 6 s"
	within "$share" 50 15
	# The pprof carries the weighed values the diagnostics report.
	run -0 pprof -raw "$prof"
	total=$(echo "$output" | awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
		s && /^ +[0-9]+ +[0-9]+:/ { sub(":", "", $2); c += $1; t += $2 }
		END { printf "%.0f %.0f\n", c, t }')
	echo "pprof: $total"
	[ "$total" = "$intervals $ns" ]
}

@test "off-cpu: --offcpu-min-duration-us drops short intervals and counts them" {
	start_workload offcpu_pipe 30 half
	run -0 "$RP" record --pid "$wpid" --profiles off-cpu --offcpu-phase all \
		--offcpu-min-duration-us 5000 --unwind fp --duration 2s --window 2s --output "$out"
	d=$(ls "$out"/diagnostics-*.json | head -n 1)
	prof=$out/$(outputs "$out" off-cpu pb.gz | head -n 1)
	# Every remaining interval is at least 5 ms: nanoseconds / intervals >= 5e6.
	run -0 jq -e '.off_cpu.min_duration_filtered > 0 and .off_cpu.intervals > 50 and
		.off_cpu.nanoseconds >= 5000000 * (.off_cpu.intervals - 2)' "$d"
	[ -f "$prof" ]
}

@test "off-cpu: --svg and --collapsed draw the off-CPU time of each window too" {
	start_workload offcpu_pipe 30 half
	run -0 "$RP" record --pid "$wpid" --profiles cpu,off-cpu --unwind fp --duration 2s \
		--window 2s --svg --collapsed --output "$out"
	svg=$(outputs "$out" off-cpu svg)
	col=$(outputs "$out" off-cpu collapsed)
	[ -n "$svg" ]
	[ -n "$col" ]
	[ -n "$(outputs "$out" cpu svg)" ]
	[ -n "$(outputs "$out" cpu collapsed)" ]
	grep -q "off-CPU blocked" "$out/$svg"
	grep -q "Off-CPU flame graph" "$out/$svg"
	# The folded lines carry the window's off-CPU nanoseconds, under the phase root.
	sum=$(awk '{ s += $NF } END { printf "%.0f", s }' "$out/$col")
	d=$(ls "$out"/diagnostics-*.json)
	[ "$sum" -eq "$(jq .off_cpu.nanoseconds "$d")" ]
	grep -q '^offcpu_pipe;off-CPU blocked;start_thread;reader;wait_reply;__libc_read;' "$out/$col"
	run -0 jq -r '.output_paths | keys | join(" ")' "$d"
	assert_output --partial "svg-off-cpu"
	assert_output --partial "collapsed-off-cpu"
}

@test "off-cpu: alone, the stacks of an image executed mid-recording are named" {
	# Off-CPU alone follows mappings through events on the CPUs filtered by pid: the image
	# that replaces the target one second in must be symbolized as well as the first.
	start_workload exec_later 1 "$RP_WORKLOADS/offcpu_pipe" 30 half
	run -0 "$RP" record --pid "$wpid" --profiles off-cpu --duration 3s --window 60s \
		--collapsed --output "$out"
	cols=$(outputs "$out" off-cpu collapsed)
	[ -n "$cols" ]
	last=$(echo "$cols" | tail -n 1)
	grep -q '^offcpu_pipe;off-CPU blocked;start_thread;reader;wait_reply;__libc_read;' "$out/$last"
	grep -q '^offcpu_pipe;off-CPU blocked;start_thread;writer;__nanosleep;__clock_nanosleep;.*;do_nanosleep;' \
		"$out/$last"
	d=$(ls "$out"/diagnostics-*.json | tail -n 1)
	jq -e '.cpu.samples == 0 and .off_cpu.unusable_stacks * 10 <= .off_cpu.usable_stacks' "$d"
}

@test "off-cpu: launch covers the command's descendants through its cgroup" {
	run -0 "$RP" launch --profiles off-cpu --unwind fp --duration 0 --window 60s \
		--output "$out" -- sh -c "'$RP_WORKLOADS/offcpu_pipe' 2 half; true"
	d=$(ls "$out"/diagnostics-*.json | head -n 1)
	[ "$(jq -r .scope.effective "$d")" = cgroup ]
	prof=$out/$(outputs "$out" off-cpu pb.gz | head -n 1)
	# The shell waits for its child, whose reader blocks in the pipe: two processes.
	run -0 pprof -tags "$prof"
	echo "$output" | awk '/process.pid:/ { p = 1; next } /^ *$/ { p = 0 }
		p && /%\)/ { n++ } END { exit !(n == 2) }'
	ms=$(cum_ms "$prof" anon_pipe_read -tagfocus=thread.name=reader)
	awk -v m="$ms" 'BEGIN { exit !(m > 500) }'
}

@test "off-cpu: a process whose only thread sleeps from before the start has one interval spanning window 0" {
	# The thread never leaves the CPU while it is watched: its interval opens at the start.
	sleep 60 3>&- &
	wpid=$!
	sleep 0.2
	run -0 "$RP" record --pid "$wpid" --profiles off-cpu --duration 3s --window 1s \
		--collapsed --output "$out"
	d=$out/$(ls "$out" | grep -E '^diagnostics-.*-000000-' | head -n 1)
	cat "$d" >&2
	# One interval, as long as the window (less a millisecond when the machine is slow to
	# read the maps at the first drain).
	jq -e '.off_cpu.intervals == 1 and .off_cpu.incomplete_intervals == 0 and
		.off_cpu.nanoseconds >= 999000000 and .off_cpu.nanoseconds <= 1000000000' "$d"
	# The stacks are those of the wait: the kernel's nanosleep under the C library's.
	col=$out/$(outputs "$out" off-cpu collapsed | head -n 1)
	grep -q '^sleep;off-CPU blocked;.*__clock_nanosleep;.*hrtimer_nanosleep' "$col"
}

@test "off-cpu: after an unwind calibration, a thread that ran at the start is blocked from its own wait, not from the start" {
	# The laggard computes for 4 s, then sleeps; the sleeper sleeps from before the start.
	# At 10 samples a second the calibration (64 samples, docs/unwinding.md) lasts the whole
	# recording, and the off-CPU program is attached after it, when both sleep: only the
	# sleeper was asleep at the start without running since.  (The 4 s cover the
	# recording's own start-up, over a second on a busy machine.)
	start_workload offcpu_pipe 30 late
	run -0 "$RP" record --pid "$wpid" --profiles cpu,off-cpu --unwind auto \
		--cpu-frequency 10 --duration 5s --window 5s --output "$out"
	prof=$out/$(outputs "$out" off-cpu pb.gz | tail -n 1)
	[ -f "$prof" ]
	sleeper=$(cum_ms "$prof" sleeper -tagfocus=thread.name=sleeper)
	laggard=$(cum_ms "$prof" laggard -tagfocus=thread.name=laggard)
	echo "off-CPU: sleeper ${sleeper} ms, laggard ${laggard} ms of 5000"
	# The sleeper from the start (less a millisecond on a slow machine); the laggard at most
	# from its wait on, which began while the recording ran.
	awk -v s="$sleeper" -v l="$laggard" 'BEGIN { exit !(s >= 4990 && l <= 4000) }'
}

@test "off-cpu: alone under launch, a process outside the cgroup reaches neither the stream nor the module cache" {
	# Off-CPU alone watches mappings through events on the CPUs, which see every task: an
	# unrelated program started again and again maps its image and names itself meanwhile.
	# collect runs alone, so that no retention prunes its module cache afterwards.
	other=$BATS_TEST_TMPDIR/rp_unrelated_mm
	cp "$RP_WORKLOADS/syscall_heavy" "$other"
	bid=$(readelf -n "$other" | awk '/Build ID/ { print $3 }')
	own=$(readelf -n "$RP_WORKLOADS/offcpu_pipe" | awk '/Build ID/ { print $3 }')
	[ -n "$bid" ]
	[ -n "$own" ]
	( while :; do "$other" 0.2; done ) 3>&- &
	loop=$!
	cache=$BATS_TEST_TMPDIR/modules
	mkdir "$cache"
	rc=0
	"$RP_BIN/collect" --profiles off-cpu --unwind fp --duration 3s --module-cache "$cache" \
		--kind launch --launch -- "$RP_WORKLOADS/offcpu_pipe" 2 half \
		>"$BATS_TEST_TMPDIR/s.rps" || rc=$?
	kill "$loop"
	wait "$loop" 2>/dev/null || true
	[ "$rc" -eq 0 ]
	# The command is there, with its image in the cache; the other program is not.
	grep -aq offcpu_pipe "$BATS_TEST_TMPDIR/s.rps"
	[ -e "$cache/.build-id/${own:0:2}/${own:2}" ]
	run -1 grep -ac rp_unrelated_mm "$BATS_TEST_TMPDIR/s.rps"
	[ ! -e "$cache/.build-id/${bid:0:2}/${bid:2}" ]
	run -1 grep -qx "$bid" "$cache"/.sessions/*
}

@test "lifecycle: the eBPF program reports exec, fork and exit of the target at once" {
	# exec_later spins 3 s, then becomes a shell that forks a child and exits after it.
	"$RP_WORKLOADS/exec_later" 3 /bin/sh -c "sleep 0.5; true" &
	wpid=$!
	"$RP_BIN/collect" -v --pid "$wpid" --unwind fp --duration 0 >"$BATS_TEST_TMPDIR/s.rps" \
		2>"$BATS_TEST_TMPDIR/log"
	run -0 grep lifecycle "$BATS_TEST_TMPDIR/log"
	assert_output --partial "lifecycle: eBPF"
	assert_output --partial "lifecycle: exec of pid $wpid"
	echo "$output" | grep -qE "lifecycle: fork of pid [0-9]+ \(tid [0-9]+, parent $wpid\)"
	assert_output --partial "lifecycle: exit of pid $wpid"
	# The exec was handled: the stream warns of the new image.
	grep -aq "the target executed a new image: /" "$BATS_TEST_TMPDIR/s.rps"
	# A new thread is no new process; a process ends once, with its last thread.
	"$RP_WORKLOADS/threads_later" 2 &
	wpid=$!
	"$RP_BIN/collect" -v --pid "$wpid" --unwind fp --duration 0 >/dev/null \
		2>"$BATS_TEST_TMPDIR/log"
	run -0 grep 'lifecycle: ' "$BATS_TEST_TMPDIR/log"
	assert_output --partial "lifecycle: 0 execs, 0 forks, 1 exits seen"
	assert_output --partial "lifecycle: exit of pid $wpid"
}

@test "off-cpu: the Firefox profile shows each thread's off-CPU time as a track of its own" {
	start_workload offcpu_pipe 30 half
	run -0 "$RP" record --pid "$wpid" --profiles cpu,off-cpu --unwind fp --duration 2s \
		--window 2s --firefox-profile json --output "$out"
	ff=$out/$(outputs "$out" firefox json.gz | head -n 1)
	d=$(ls "$out"/diagnostics-*.json)
	ns=$(jq .off_cpu.nanoseconds "$d")
	# Off-CPU tracks carry the off-CPU milliseconds of the window, CPU tracks the rest.
	run -0 sh -c "zcat '$ff' | jq -r '[.threads[] | select(.name | endswith(\" (off-CPU)\"))
		| .samples.weight | add] | add'"
	awk -v ms="$output" -v ns="$ns" 'BEGIN { d = ms - ns / 1e6; exit !(ns > 0 && d < 1 && d > -1) }'
	run -0 sh -c "zcat '$ff' | jq -r '.threads[].name'"
	assert_line "reader (off-CPU)"
	assert_line "writer (off-CPU)"
	assert_line "reader"
}

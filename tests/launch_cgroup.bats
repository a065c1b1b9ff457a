#!/usr/bin/env bats
# launch follows the command's descendants through a short-lived cgroup v2, and falls back to
# the command's own pid only with --allow-partial when no cgroup can be made.

load helper

setup() {
	require_root
	open_tmpdirs
	out=$BATS_TEST_TMPDIR/out
	script=$ROOT/workloads/three_workers.sh
	cgroot=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
}

teardown() {
	stop_workload
	# A parent made full on purpose.
	[ -z "${full:-}" ] || rmdir "$full" 2>/dev/null || true
	# The test's own cgroup: the shell goes back where it was; what the test left running
	# there on purpose (moved back from the launch cgroup) ends, and the cgroup goes.
	if [ -n "${origin:-}" ]; then
		echo "$BASHPID" >"$cgroot$before/cgroup.procs" || true
		for p in $(cat "$origin/cgroup.procs" 2>/dev/null); do kill "$p" 2>/dev/null || true; done
		for _ in $(seq 50); do rmdir "$origin" 2>/dev/null && break; sleep 0.1; done
	fi
}

need_cgroup2() {
	[ -n "$cgroot" ] || skip "no cgroup v2 hierarchy is mounted"
}

# pids_of PROFILE: the process.pid label values of a profile, sorted.
pids_of() {
	pprof -tags "$1" | awk '/^ *process.pid:/ { on = 1; next } /^ *[a-z.]+:/ { on = 0 }
		on && NF { print $NF }' | sort -n
}

@test "launch: a script's three workers appear in the CPU profile under their own pids" {
	need_cgroup2
	run -0 "$RP" launch --unwind fp --duration 0 --window 30s --cpu-frequency 199 \
		--output "$out" -- sh "$script" "$RP_WORKLOADS/fixedjob" 60
	workers=$(echo "$output" | awk '$1 == "worker" { print $2 }' | sort -n)
	[ "$(echo "$workers" | wc -l)" -eq 3 ]
	prof=$out/$(outputs "$out" cpu pb.gz)
	got=$(pids_of "$prof")
	echo "workers: $workers; profile pids: $got"
	for w in $workers; do
		echo "$got" | grep -qx "$w"
		# Each worker's own samples are symbolized against its own mappings.
		run -0 pprof -tagfocus="process.pid=$w" -top "$prof"
		assert_output --partial job_round
	done
	d=$out/$(outputs "$out" diagnostics json)
	run -0 jq -e '.scope.requested == "cgroup" and .scope.effective == "cgroup"
		and .scope.reason == null and (.warnings | length) == 0' "$d"
	# The cgroup was under the cgroup v2 hierarchy, named after the session, and is gone.
	cg=$(jq -r .scope.cgroup "$d")
	session=$(jq -r .session_id "$d")
	[ "$cg" = "$cgroot/rustprofile-$session-$(jq -r .pid "$d")" ]
	[ ! -e "$cg" ]
}

@test "launch: auto calibrates a waiting script on its workers' samples" {
	need_cgroup2
	run -0 "$RP" launch --duration 0 --window 30s --cpu-frequency 199 \
		--output "$out" -- sh "$script" "$RP_WORKLOADS/fixedjob" 60
	workers=$(echo "$output" | awk '$1 == "worker" { print $2 }' | sort -n)
	[ "$(echo "$workers" | wc -l)" -eq 3 ]
	d=$out/$(outputs "$out" diagnostics json)
	run -0 jq -e '.cpu.unwind_mode == "fp" and .cpu.calibration.verdict == "accepted"
		and .cpu.calibration.samples >= 64' "$d"
	got=$(pids_of "$out/$(outputs "$out" cpu pb.gz)")
	for w in $workers; do echo "$got" | grep -qx "$w"; done
}

@test "launch: off-CPU intervals of the workers appear under their own pids" {
	need_cgroup2
	# The off-CPU probe needs BTF and Linux 5.8 (manual: supported scope).
	[ -r /sys/kernel/btf/vmlinux ] || skip "no kernel BTF for the off-CPU probe"
	run -0 "$RP" launch --profiles cpu,off-cpu --unwind fp --duration 0 --window 30s \
		--output "$out" -- sh "$script" sleep 0.5
	workers=$(echo "$output" | awk '$1 == "worker" { print $2 }' | sort -n)
	[ "$(echo "$workers" | wc -l)" -eq 3 ]
	got=$(pids_of "$out/$(outputs "$out" off-cpu pb.gz)")
	echo "workers: $workers; off-CPU profile pids: $got"
	for w in $workers; do echo "$got" | grep -qx "$w"; done
}

# The cgroup v2 path (from the hierarchy's root) of process $1.
cgroup_of() {
	awk -F: '$1 == 0 { print $3 }' "/proc/$1/cgroup"
}

# Runs the test's shell, and so the driver and collect, in a cgroup of its own, so that the
# cgroup the command was started from is not the hierarchy's root.
own_cgroup() {
	before=$(cgroup_of "$BASHPID")
	origin=$cgroot/rp-test-origin-$$
	mkdir "$origin"
	echo "$BASHPID" >"$origin/cgroup.procs"
	[ "$(cgroup_of "$BASHPID")" = "/rp-test-origin-$$" ]
}

# no_cgroup_of DIAGNOSTICS: the launch cgroup the diagnostics name is gone, with no other
# cgroup of that session beside it.
no_cgroup_of() {
	local session cg
	session=$(jq -r .session_id "$1")
	cg=$(jq -r .scope.cgroup "$1")
	[ "$cg" = "$cgroot/rustprofile-$session-$(jq -r .pid "$1")" ]
	[ ! -e "$cg" ]
	[ -z "$(find "$cgroot" -maxdepth 3 -type d -name "rustprofile-$session-*")" ]
}

@test "launch: a background child left running goes back to the command's cgroup, the launch cgroup goes" {
	need_cgroup2
	own_cgroup
	run -0 --separate-stderr "$RP" launch --unwind fp --duration 0 --window 30s \
		--output "$out" -- sh -c 'sleep 30 </dev/null >/dev/null 2>&1 & echo "child $!"'
	child=$(echo "$output" | awk '$1 == "child" { print $2 }')
	[ -n "$child" ]
	echo "stderr: $stderr"
	d=$out/$(outputs "$out" diagnostics json)
	no_cgroup_of "$d"
	run -0 jq -e '.warnings == [] and .scope.effective == "cgroup"' "$d"
	[[ "$stderr" != *cgroup* ]]
	# The child still runs, in the cgroup the command was started from.
	kill -0 "$child"
	[ "$(cgroup_of "$child")" = "/rp-test-origin-$$" ]
}

@test "launch: a command still running when --duration ends goes back and keeps running" {
	need_cgroup2
	own_cgroup
	run -0 --separate-stderr "$RP" launch --unwind fp --duration 2s --window 2s \
		--output "$out" -- sh -c 'sleep 30 </dev/null >/dev/null 2>&1 & echo "child $!"
			exec sleep 30 </dev/null >/dev/null 2>&1'
	child=$(echo "$output" | awk '$1 == "child" { print $2 }')
	# The exec of sleep cuts a window: the last one is the final one.  Its only warning is
	# the heap reset of that exec (sleep's own allocator is probed from there on).
	d=$out/$(outputs "$out" diagnostics json | tail -n 1)
	cmd=$(jq -r .pid "$d")
	echo "stderr: $stderr"
	no_cgroup_of "$d"
	run -0 jq -e '[.warnings[] | select(startswith("heap state cleared: the target executed") | not)]
		== [] and .final_window == true' "$d"
	for p in "$child" "$cmd"; do
		kill -0 "$p"
		[ "$(cgroup_of "$p")" = "/rp-test-origin-$$" ]
	done
}

@test "launch: without a cgroup v2 parent, launch fails with one line before the command runs" {
	export RUSTPROFILE_CGROUP_PARENT=$BATS_TEST_TMPDIR/none
	run -1 --separate-stderr "$RP" launch --unwind fp --output "$out" -- \
		touch "$BATS_TEST_TMPDIR/ran"
	echo "$stderr"
	[ "${#stderr_lines[@]}" -eq 1 ]
	[ "${stderr_lines[0]}" = "collect: launch needs a cgroup v2 hierarchy: cgroup parent '$BATS_TEST_TMPDIR/none': No such file or directory; --allow-partial profiles the command's own pid only" ]
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
	[ -z "$(outputs "$out" cpu pb.gz 2>/dev/null)" ]
}

@test "launch: a cgroup that cannot be created is fatal, and --allow-partial falls back" {
	need_cgroup2
	# A real cgroup v2 parent that refuses children.
	full=$cgroot/rustprofile-test-full-$$
	mkdir "$full"
	echo 0 >"$full/cgroup.max.descendants"
	export RUSTPROFILE_CGROUP_PARENT=$full
	run -1 --separate-stderr "$RP" launch --unwind fp --output "$out" -- \
		touch "$BATS_TEST_TMPDIR/ran"
	echo "$stderr"
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "${stderr_lines[0]}" =~ ^"collect: launch: cannot create cgroup '$full/rustprofile-"[0-9a-f]{16}-[0-9]+"': Resource temporarily unavailable; --allow-partial profiles the command's own pid only"$ ]]
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
	run -0 --separate-stderr "$RP" launch --allow-partial --unwind fp --output "$out" -- \
		touch "$BATS_TEST_TMPDIR/ran"
	[ -e "$BATS_TEST_TMPDIR/ran" ]
	d=$out/$(outputs "$out" diagnostics json)
	run -0 jq -e '.scope.requested == "cgroup" and .scope.effective == "process"
		and (.scope.reason | startswith("cannot create cgroup"))' "$d"
}

@test "launch --allow-partial without a cgroup: a warning, and only the command's own pid" {
	export RUSTPROFILE_CGROUP_PARENT=$BATS_TEST_TMPDIR/none
	run -0 --separate-stderr "$RP" launch --allow-partial --unwind fp --duration 0 \
		--window 30s --cpu-frequency 199 --output "$out" -- \
		sh "$script" -s 150000 "$RP_WORKLOADS/fixedjob" 30
	workers=$(echo "$output" | awk '$1 == "worker" { print $2 }')
	[ "$(echo "$workers" | wc -l)" -eq 3 ]
	d=$out/$(outputs "$out" diagnostics json)
	pid=$(jq -r .pid "$d")
	reason="cgroup parent '$BATS_TEST_TMPDIR/none': No such file or directory; profiling pid $pid only, without its descendants (--allow-partial)"
	echo "$stderr" | grep -qxF "collect: launch: $reason"
	run -0 jq -e --arg r "$reason" '.scope == { requested: "cgroup", effective: "process",
		cgroup: null, reason: $r } and .warnings == ["launch: \($r)"]' "$d"
	# The shell's own counting is there; none of its workers is.
	[ "$(pids_of "$out/$(outputs "$out" cpu pb.gz)")" = "$pid" ]
}

@test "record --pid: the scope is the process" {
	start_workload cpu_split 10
	run -0 "$RP" record --pid "$wpid" --duration 2s --window 2s --output "$out"
	d=$out/$(outputs "$out" diagnostics json)
	run -0 jq -e '.scope == { requested: "process", effective: "process", cgroup: null,
		reason: null }' "$d"
}

# cpu_ms DIR: the CPU milliseconds of every window published in DIR.
cpu_ms() {
	cat "$1"/diagnostics-*.json | jq -s 'map(.cpu.cpu_nanoseconds) | add / 1000000 | floor'
}

# covers_run PROG: launch --duration 6s of a 3 s run of PROG under auto publishes at least
# 90% of the CPU time PROG itself used (bash's time: its getrusage).
covers_run() {
	run -0 "$RP" launch --duration 6s --window 30s --cpu-frequency 199 --output "$out" -- \
		bash -c 'TIMEFORMAT="%3U %3S"; { time "$1" 3 >/dev/null; } 2>"$2"' _ \
		"$RP_WORKLOADS/$1" "$BATS_TEST_TMPDIR/rusage"
	used=$(awk '{ print int(($1 + $2) * 1000) }' "$BATS_TEST_TMPDIR/rusage")
	got=$(cpu_ms "$out")
	echo "program ${used} ms, published ${got} ms"
	[ "$used" -gt 100 ]
	[ "$((got * 100))" -ge "$((used * 90))" ]
	run -0 jq -e '.cpu.unwind_requested == "auto" and .cpu.calibration != null' \
		"$out/$(outputs "$out" diagnostics json | head -1)"
}

@test "launch: the calibration's samples are published: a 3 s frame-pointer program" {
	need_cgroup2
	covers_run deep_fp
}

@test "launch: the calibration's samples are published: a 3 s program without frame pointers" {
	need_cgroup2
	covers_run deep_nofp
	run -0 jq -e '.cpu.unwind_mode == "dwarf"' "$out/$(outputs "$out" diagnostics json | head -1)"
}

@test "launch: a command that ends during the calibration is published" {
	need_cgroup2
	run -0 "$RP" launch --duration 0 --window 30s --output "$out" -- \
		"$RP_WORKLOADS/deep_fp" 0.5
	[ "$(outputs "$out" cpu pb.gz | wc -l)" -eq 1 ]
	d=$out/$(outputs "$out" diagnostics json)
	run -0 jq -e '.final_window == true and .cpu.samples > 0
		and .cpu.calibration.verdict != null' "$d"
}

@test "launch: a script running two frame-pointer programs in turn keeps fp" {
	need_cgroup2
	run -0 "$RP" launch --duration 0 --window 30s --cpu-frequency 199 --output "$out" -- \
		sh -c '"$1" 1.5; "$1" 1.5' _ "$RP_WORKLOADS/deep_fp"
	d=$out/$(outputs "$out" diagnostics json)
	run -0 jq -e '.cpu.unwind_mode == "fp" and .cpu.calibration.verdict == "accepted"' "$d"
}

@test "launch: forked children that never exec carry thread.name" {
	need_cgroup2
	run -0 "$RP" launch --duration 0 --window 30s --cpu-frequency 199 --output "$out" -- \
		bash -c 'for i in $(seq 60); do ( x=0; for j in $(seq 3000); do x=$((x + j)); done ); done'
	prof=$out/$(outputs "$out" cpu pb.gz)
	pprof -traces "$prof" >"$BATS_TEST_TMPDIR/traces"
	# One block per stack: each names its thread, and the subshells are among them.
	run -0 awk '/^-+\+/ { if (n && !named) bad++; n = 0; named = 0; next }
		/^ *thread.name:/ { named = 1 } /^ *process.pid:/ { n++; pids[$2] = 1 }
		END { if (n && !named) bad++; for (p in pids) np++; print np + 0, bad + 0 }' \
		"$BATS_TEST_TMPDIR/traces"
	echo "$output"
	[ "${output% *}" -ge 10 ]
	[ "${output#* }" -eq 0 ]
}

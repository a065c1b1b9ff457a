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
	# A parent made full on purpose, and a cgroup left on purpose once its task ended.
	[ -z "${full:-}" ] || rmdir "$full" 2>/dev/null || true
	[ -z "${left:-}" ] || { sleep 2; rmdir "$left" 2>/dev/null; } || true
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

@test "launch: tasks still in the cgroup at the end leave it in place with a warning" {
	need_cgroup2
	run -0 --separate-stderr "$RP" launch --unwind fp --duration 0 --window 30s \
		--output "$out" -- sh -c 'sleep 1 >/dev/null 2>&1 & echo started'
	d=$out/$(outputs "$out" diagnostics json)
	left=$(jq -r .scope.cgroup "$d")
	[ -d "$left" ]
	run -0 jq -e --arg cg "$left" \
		'.warnings == ["launch cgroup \($cg) still holds 1 process; it is left in place"]' "$d"
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

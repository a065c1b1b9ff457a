#!/usr/bin/env bats
# tracefs at /sys/kernel/tracing (manual: "Docker and Kubernetes deployment"): when it is
# missing, a root recording mounts it there; without CAP_SYS_ADMIN it fails with the manual's
# explicit error.  Each test runs in a mount namespace of its own, where tracefs is first
# unmounted, so the machine's mounts stay as they are.

load helper

setup() {
	require_root
	command -v unshare >/dev/null && command -v setpriv >/dev/null ||
		skip "needs unshare and setpriv (util-linux)"
	open_tmpdirs
	out=$BATS_TEST_TMPDIR/out
}

# in_ns CMD...: runs CMD in a private mount namespace without tracefs.
in_ns() {
	unshare -m --propagation private sh -c \
		'umount /sys/kernel/tracing 2>/dev/null; [ "$(stat -f -c %T /sys/kernel/tracing)" != tracefs ] || exit 9; "$@"' sh "$@"
}

@test "tracefs: a root recording mounts it at /sys/kernel/tracing when it is missing" {
	start_workload cpu_split 10
	run -0 in_ns sh -c '"$1" record --pid "$2" --duration 1s --window 1s --output "$3" >/dev/null &&
		stat -f -c %T /sys/kernel/tracing' sh "$RP" "$wpid" "$out"
	stop_workload
	assert_output tracefs
	[ "$(outputs "$out" cpu pb.gz | wc -l)" -eq 1 ]
}

@test "tracefs: without CAP_SYS_ADMIN the recording fails with the explicit error" {
	start_workload cpu_split 10
	run -1 in_ns setpriv --bounding-set -sys_admin --inh-caps -sys_admin \
		"$RP" record --pid "$wpid" --duration 1s --output "$out"
	stop_workload
	assert_output "collect: tracefs is not mounted; run rustprofile with CAP_SYS_ADMIN/--privileged or mount tracefs at /sys/kernel/tracing"
	[ ! -e "$out" ] || [ -z "$(ls "$out")" ]
}

@test "tracefs: a launch fails the same way without the capability" {
	run -1 in_ns setpriv --bounding-set -sys_admin --inh-caps -sys_admin \
		"$RP" launch --duration 1s --output "$out" -- /bin/true
	assert_output "collect: tracefs is not mounted; run rustprofile with CAP_SYS_ADMIN/--privileged or mount tracefs at /sys/kernel/tracing"
}

#!/usr/bin/env bats
# Process churn: what the stages keep for a process goes once it has exited and its last
# window is written (docs/churn.md), so a command that keeps starting short-lived children
# costs them no more memory after thousands of children than after hundreds.

load helper

setup_file() {
	local root="$BATS_TEST_DIRNAME/.."
	export CHURNGEN="$BATS_FILE_TMPDIR/churngen"
	${CC:-cc} -std=c17 -D_GNU_SOURCE -I"$root/lib" ${LDFLAGS:-} -o "$CHURNGEN" \
		"$root/tests/tools/churngen.c" "$RP_BIN/../lib/librp.a" -lz -lm
}

setup() {
	[ "$BATS_TEST_NUMBER" -ne 1 ] || return 0
	require_root
	open_tmpdirs
	out=$BATS_TEST_TMPDIR/out
	mkdir -p "$out"
	chown nobody: "$out"
	cgroot=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
}

@test "4,000 processes, every pid taken again before the window of its last owner is out: each keeps its own mapping, and none loses its name" {
	d=$BATS_TEST_TMPDIR/d
	mkdir -p "$d"
	"$CHURNGEN" 4000 | "$RP_BIN/unwind" | "$RP_BIN/aggregate" --window 2s |
		"$RP_BIN/emit-collapsed" --output "$d" | "$RP_BIN/emit-pprof" --output "$d" |
		"$RP_BIN/commit" --output "$d" >"$BATS_TEST_TMPDIR/wrote"
	[ "$(grep -c collapsed "$BATS_TEST_TMPDIR/wrote")" -eq 5 ]
	cat "$d"/*.collapsed >"$BATS_TEST_TMPDIR/all"
	# Every process's samples stand on its own file: forgetting the one that ended never
	# took the mapping of the next one with its pid.
	[ "$(grep -o '\[p[0-9]*\]' "$BATS_TEST_TMPDIR/all" | sort -u | wc -l)" -eq 4000 ]
	# And every stack has a process name (a name is the latest of its pid in the window).
	[ "$(grep -c '^p[0-9]*;\[p[0-9]*\] [0-9]*$' "$BATS_TEST_TMPDIR/all")" -eq \
		"$(wc -l <"$BATS_TEST_TMPDIR/all")" ]
}

teardown() {
	[ -z "${driver:-}" ] || { kill -INT "$driver" 2>/dev/null; wait "$driver"; } || true
}

# rss NAME: VmRSS (KB) of the stage NAME of this run's driver.
rss() {
	local p
	p=$(pgrep -P "$driver" -x "$1") || return 1
	awk '/^VmRSS:/ { print $2 }' "/proc/$p/status"
}

# wait_children N: until the workload has reaped N children (60 s at most).
wait_children() {
	local i
	for i in $(seq 600); do
		[ "$(cat "$BATS_TEST_TMPDIR/progress" 2>/dev/null || echo 0)" -ge "$1" ] && return 0
		kill -0 "$driver" 2>/dev/null || { echo "the run ended early"; return 1; }
		sleep 0.1
	done
	echo "no $1 children within 60 s"
	return 1
}

@test "launch of a fork-heavy command: unwind and emit-pprof keep their RSS from 200 to 2,000 exited children" {
	[ -n "$cgroot" ] || skip "no cgroup v2 hierarchy is mounted"
	# unwind indexes the DWARF of a module's debug file (libc's, from /usr/lib/debug) one
	# compilation unit at a time, as samples first reach each: up to some MB as the
	# children's rare paths come in, whatever the number of processes.  Out of sight of
	# this run, the symbol tables stay those of the ELF files themselves.
	mkdir "$BATS_TEST_TMPDIR/nodebug"
	# Under check-asan, freed memory waits in the quarantine and would read as growth.
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0
	unshare -m sh -c 'mount --bind "$0" /usr/lib/debug && exec "$@"' \
		"$BATS_TEST_TMPDIR/nodebug" "$RP" launch --unwind fp --duration 0 --window 1s \
		--cpu-frequency 999 --output "$out" \
		-- "$RP_WORKLOADS/forkchurn" 100 2200 "$BATS_TEST_TMPDIR/progress" \
		>"$BATS_TEST_TMPDIR/log" 2>&1 &
	driver=$!
	wait_children 200
	u200=$(rss unwind) p200=$(rss emit-pprof)
	wait_children 2000
	u2000=$(rss unwind) p2000=$(rss emit-pprof)
	echo "unwind $u200 -> $u2000 KB, emit-pprof $p200 -> $p2000 KB"
	wait "$driver"
	driver=
	cat "$BATS_TEST_TMPDIR/log"
	grep -qx "children 2200" "$BATS_TEST_TMPDIR/log"
	[ "$u2000" -le $((u200 + 2048)) ]
	[ "$p2000" -le $((p200 + 2048)) ]
	# The children's own samples are in the windows, each under its own pid.
	last=$(outputs "$out" cpu pb.gz | tail -n 2 | head -n 1)
	run -0 pprof -top "$out/$last"
	assert_output --partial child_spin
	pids=$(pprof -tags "$out/$last" | awk '/^ *process.pid:/ { on = 1; next }
		/^ *[a-z.]+:/ { on = 0 } on && NF { print $NF }' | sort -u | wc -l)
	echo "$pids processes in $last"
	[ "$pids" -gt 20 ]
}

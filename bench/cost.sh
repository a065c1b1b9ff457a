#!/bin/sh
# USAGE: [RP_BIN=.output/bin] [RP_WORKLOADS=.output/workloads] sh bench/cost.sh
#
# What recording costs the machine: CPU seconds used by the profiler itself, per second of
# recording, while it samples `busy2` (two busy threads) at 999 Hz for 10 s:
#   rustprofile.sh record --pid PID --duration 10s --cpu-frequency 999 --output DIR
#   perf record -g -e cpu-clock -F 999 -p PID -o FILE -- sleep 10
# Each profiler runs in its own cgroup v2 group, whose cpu.stat counts every process it
# started, waited for or not; /usr/bin/time's user+sys (waited descendants only) is printed
# beside it as a cross-check, and is the measure when no cgroup v2 tree is writable.
# Run as root.  Exits non-zero when a run failed or the rustprofile driver is missing.
#
#   cost: CPU seconds per second of recording at 999 Hz (busy2, 10 s)
#   profiler      cgroup_cpu/s  time_cpu/s  wall_s
#   rustprofile         0.0241      0.0230   10.18
#   perf                0.0277      0.0270   11.23
#   cost: rustprofile/perf: 0.870
# shellcheck disable=SC1091,SC2046,SC2086 # word lists (flags, fields) are split on purpose
set -u
. "$(dirname "$0")/common.sh"
bench_init cost

SECONDS_REC=10
LIMIT=$((SECONDS_REC + 60))	# a recorder still running by then is hung: killed, exit 124
BUSY2=$(need_workload busy2) || exit 1
command -v perf >/dev/null 2>&1 || die "perf not found: install linux-perf (scripts/install-deps.sh)"
[ -x /usr/bin/time ] || die "/usr/bin/time not found: install the 'time' package (scripts/install-deps.sh)"
failed=0

# The cgroup v2 tree: /sys/fs/cgroup itself, or the hybrid layout's unified/ beside v1.
CG_ROOT=""
for d in /sys/fs/cgroup /sys/fs/cgroup/unified; do
	if [ -f "$d/cgroup.procs" ] && [ -f "$d/cgroup.controllers" ]; then
		CG_ROOT=$d
		break
	fi
done

# measure NAME CMD...: runs CMD (in a fresh cgroup when possible) and prints
# "cgroup_cpu_s time_cpu_s wall_s" (cgroup_cpu_s is n/a without cgroup v2); messages go to
# stderr since callers capture stdout.
measure() {
	name=$1
	shift
	cg=""
	if [ -n "$CG_ROOT" ] && mkdir "$CG_ROOT/rp-bench-$name-$$" 2>/dev/null; then
		cg=$CG_ROOT/rp-bench-$name-$$
	fi
	# The inner sh joins the cgroup, then becomes /usr/bin/time, which runs CMD.
	sh -c 'if [ -n "$1" ]; then echo $$ >"$1/cgroup.procs" || exit 125; fi; shift; exec "$@"' \
		sh "$cg" /usr/bin/time -f '%U %S %e' -o "$BENCH_TMP/$name.time" \
		timeout -k 5 "$LIMIT" "$@" \
		>"$BENCH_TMP/$name.out" 2>"$BENCH_TMP/$name.err"
	rc=$?
	cg_cpu=n/a
	if [ -n "$cg" ]; then
		usec=$(awk '$1 == "usage_usec" { print $2 }' "$cg/cpu.stat")
		[ -n "$usec" ] && cg_cpu=$(awk -v u="$usec" 'BEGIN { printf "%.3f", u / 1e6 }')
		rmdir "$cg" 2>/dev/null || say "cgroup '$cg' still busy: left in place" >&2
	fi
	if [ $rc -ne 0 ]; then
		say "$name failed (exit $rc): $(grep -v '^Command exited' "$BENCH_TMP/$name.err" | tail -n 1)" >&2
		return 1
	fi
	# The last line of -o is ours; a "Command exited" line may come first.
	set -- $(tail -n 1 "$BENCH_TMP/$name.time")
	echo "$cg_cpu $(awk -v u="$1" -v s="$2" 'BEGIN { printf "%.3f", u + s }') $3"
}

# start_target: a fresh busy2 that outlives the recording; prints its pid.
start_target() {
	"$BUSY2" $((SECONDS_REC + 3)) >/dev/null 2>&1 &
	echo $!
}

per_s() { awk -v c="$1" -v s="$SECONDS_REC" 'BEGIN { if (c == "n/a") print c; else printf "%.4f\n", c / s }'; }

rp=""
if have_driver; then
	pid=$(start_target)
	BENCH_PIDS="$BENCH_PIDS $pid"
	sleep 1	# let both threads start before attaching
	rp=$(measure rustprofile "$RP_DRIVER" record --pid "$pid" --duration "${SECONDS_REC}s" \
		--cpu-frequency 999 --output "$BENCH_TMP/rp-out") || failed=1
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	[ -n "$(ls -A "$BENCH_TMP/rp-out" 2>/dev/null)" ] ||
		say "rustprofile wrote nothing under --output: is it really profiling?"
else
	say "rustprofile driver '$RP_DRIVER' not found: build it with 'make'; skipping its run"
	failed=1
fi

pid=$(start_target)
BENCH_PIDS="$BENCH_PIDS $pid"
sleep 1
pf=$(measure perf perf record -q -g -e cpu-clock -F 999 -p "$pid" -o "$BENCH_TMP/perf.data" \
	-- sleep "$SECONDS_REC") || failed=1
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null

say "CPU seconds per second of recording at 999 Hz (busy2, ${SECONDS_REC} s)"
printf '%-12s %13s %11s %7s\n' profiler cgroup_cpu/s time_cpu/s wall_s
for p in rustprofile perf; do
	if [ $p = rustprofile ]; then set -- $rp; else set -- $pf; fi
	if [ $# -eq 3 ]; then
		printf '%-12s %13s %11s %7s\n' $p "$(per_s "$1")" "$(per_s "$2")" "$3"
	else
		printf '%-12s %13s %11s %7s\n' $p n/a n/a n/a
	fi
done
set -- $rp
rp_cpu=${1:-n/a}
[ "$rp_cpu" = n/a ] && rp_cpu=${2:-n/a}
set -- $pf
pf_cpu=${1:-n/a}
[ "$pf_cpu" = n/a ] && pf_cpu=${2:-n/a}
say "rustprofile/perf: $(ratio "$rp_cpu" "$pf_cpu")"
exit $failed

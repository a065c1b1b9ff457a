#!/bin/sh
# USAGE: [RUNS=3] [RP_BIN=.output/bin] [RP_WORKLOADS=.output/workloads] sh bench/cost.sh
#
# What recording costs the machine: CPU seconds used by the profiler itself, per second of
# recording, while it samples `busy2` (two busy threads) at 999 Hz for 10 s:
#   rustprofile.sh record --pid PID --duration 10s --cpu-frequency 999 --output DIR
#   perf record -g -e cpu-clock -F 999 -p PID -o FILE -- sleep 10
# and "stages": the same stages typed by hand (README), without the driver's shell, checks
# and confinement (setpriv, Landlock):
#   collect --pid PID --duration 10s --cpu-frequency 999 --module-cache DIR/.modules |
#   unwind --module-cache DIR/.modules | aggregate | emit-pprof --output DIR | commit --output DIR
# RUNS rounds, the three interleaved, each against a fresh busy2 and a fresh output directory
# (start-up, module copies and the end included: all stages, the driver too).  Each
# profiler runs in its own cgroup v2 group, whose cpu.stat counts every process it
# started, waited for or not; /usr/bin/time's user+sys (waited descendants only) is printed
# beside it as a cross-check, and is the measure when no cgroup v2 tree is writable.
# Medians; the samples each wrote tell whether both saw the same load.
# Goal (issue 16): the CPU of all stages at most half of perf's (stages/perf <= 0.5);
# rustprofile/perf, the driver included, is printed too.
# Run as root.  Exits non-zero when a run failed or the rustprofile driver is missing.
#
#   cost: CPU seconds per second of recording at 999 Hz (busy2, 10 s), medians of 3 runs
#   profiler      cgroup_cpu/s  time_cpu/s  wall_s
#   rustprofile         0.0141      0.0130   10.18
#   stages              0.0110      0.0108   10.12
#   perf                0.0277      0.0270   11.23
#   cost: rustprofile/perf: 0.509, stages/perf: 0.397 (goal <= 0.5)
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

bench_runs 3
have_driver || { say "rustprofile driver '$RP_DRIVER' not found: build it with 'make'"; failed=1; }

# run_variant rustprofile|perf ROUND: one recording; appends its measure to $BENCH_TMP/NAME.
run_variant() {
	v=$1
	pid=$(start_target)
	BENCH_PIDS="$BENCH_PIDS $pid"
	sleep 1	# let both threads start before attaching
	if [ "$v" = stages ]; then
		out=$BENCH_TMP/st-out.$2
		mkdir -p "$out"
		m=$(measure stages sh -c '"$1/collect" --pid "$2" --duration "$3" --cpu-frequency 999 \
			--module-cache "$4/.modules" | "$1/unwind" --module-cache "$4/.modules" |
			"$1/aggregate" | "$1/emit-pprof" --output "$4" | "$1/commit" --output "$4"' \
			sh "$RP_BIN" "$pid" "${SECONDS_REC}s" "$out")
		rc=$?
		[ -n "$(ls "$out" 2>/dev/null)" ] || say "the stages wrote nothing under $out"
		rm -rf "$out"
	elif [ "$v" = rustprofile ]; then
		out=$BENCH_TMP/rp-out.$2
		m=$(measure rustprofile "$RP_DRIVER" record --pid "$pid" \
			--duration "${SECONDS_REC}s" --cpu-frequency 999 --output "$out")
		rc=$?
		[ -n "$(ls -A "$out" 2>/dev/null)" ] ||
			say "rustprofile wrote nothing under --output: is it really profiling?"
		rm -rf "$out"
	else
		m=$(measure perf perf record -q -g -e cpu-clock -F 999 -p "$pid" \
			-o "$BENCH_TMP/perf.data" -- sleep "$SECONDS_REC")
		rc=$?
		rm -f "$BENCH_TMP/perf.data"
	fi
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	[ $rc -eq 0 ] && echo "$m" >>"$BENCH_TMP/$v.runs"
	return $rc
}

if have_driver; then
	VARIANTS="rustprofile stages perf"
else
	# shellcheck disable=SC2034 # run_interleaved (common.sh) reads it
	VARIANTS="stages perf"
fi
run_interleaved || failed=1

col() {	# col NAME FIELD: the median of a column, n/a when none
	[ -s "$BENCH_TMP/$1.runs" ] || { echo n/a; return; }
	awk -v f="$2" '$f != "n/a" { print $f }' "$BENCH_TMP/$1.runs" | median
}
per_s() { awk -v c="$1" -v s="$SECONDS_REC" 'BEGIN { if (c == "n/a") print c; else printf "%.4f\n", c / s }'; }

say "CPU seconds per second of recording at 999 Hz (busy2, ${SECONDS_REC} s), medians of $RUNS runs"
printf '%-12s %13s %11s %7s\n' profiler cgroup_cpu/s time_cpu/s wall_s
for p in rustprofile stages perf; do
	printf '%-12s %13s %11s %7s\n' $p "$(per_s "$(col $p 1)")" "$(per_s "$(col $p 2)")" \
		"$(col $p 3)"
done
cpu() {	# cpu NAME: the cgroup's median, else time's
	c=$(col "$1" 1)
	[ "$c" = n/a ] && c=$(col "$1" 2)
	echo "$c"
}
say "rustprofile/perf: $(ratio "$(cpu rustprofile)" "$(cpu perf)")," \
	"stages/perf: $(ratio "$(cpu stages)" "$(cpu perf)") (goal <= 0.5)"
exit $failed

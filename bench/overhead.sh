#!/bin/sh
# USAGE: [RUNS=5] [RP_BIN=.output/bin] [RP_WORKLOADS=.output/workloads] sh bench/overhead.sh
#
# How much a profiler slows its target: times the fixed CPU job `fixedjob` (~3 s) bare, under
# `rustprofile.sh launch --duration 0 --cpu-frequency HZ` and under `perf record -g -F HZ`, at
# 49 and 999 Hz, RUNS times each (variants interleaved so drift hits all alike), and prints
# medians and ratios.  "wall" is the whole command, profiler start-up and wrap-up included;
# "job" is fixedjob's own timing of its work, the slowdown the target itself sees.  Run as
# root.  Exits non-zero when a variant failed or the rustprofile driver is missing.
#
#   overhead: fixedjob, 5 runs per variant, medians in seconds
#   variant     wall_s   job_s  wall/bare  job/bare
#   bare         3.041   3.038      1.000     1.000
#   rp-49        3.310   3.052      1.088     1.005
#   ...
#   overhead: rp-999/perf-999: wall 1.020 job 1.004
# shellcheck disable=SC1091 # common.sh is read from beside this script
set -u
. "$(dirname "$0")/common.sh"
bench_init overhead

bench_runs 5
LIMIT=300	# seconds before a profiled run counts as hung and is killed (timeout exits 124)
FIXEDJOB=$(need_workload fixedjob) || exit 1
command -v perf >/dev/null 2>&1 || die "perf not found: install linux-perf (scripts/install-deps.sh)"
failed=0

VARIANTS="bare perf-49 perf-999"
if have_driver; then
	# shellcheck disable=SC2034 # run_interleaved (common.sh) reads it
	VARIANTS="bare rp-49 perf-49 rp-999 perf-999"
else
	say "rustprofile driver '$RP_DRIVER' not found: build it with 'make'; skipping rp-49 and rp-999"
	failed=1
fi

# run_variant NAME RUN: runs fixedjob once under NAME; appends "wall job" to $BENCH_TMP/NAME.
run_variant() {
	v=$1
	dir=$BENCH_TMP/$v.$2
	mkdir -p "$dir"
	hz=${v#*-}
	t0=$(now_s)
	case $v in
	bare) "$FIXEDJOB" >"$dir/stdout" 2>"$dir/stderr" ;;
	rp-*) timeout -k 5 "$LIMIT" "$RP_DRIVER" launch --duration 0 --cpu-frequency "$hz" --output "$dir/out" \
		-- "$FIXEDJOB" >"$dir/stdout" 2>"$dir/stderr" ;;
	perf-*) timeout -k 5 "$LIMIT" perf record -q -g -e cpu-clock -F "$hz" -o "$dir/perf.data" \
		-- "$FIXEDJOB" >"$dir/stdout" 2>"$dir/stderr" ;;
	esac
	rc=$?
	t1=$(now_s)
	if [ $rc -ne 0 ]; then
		say "$v run $2 failed (exit $rc): $(tail -n 1 "$dir/stderr")"
		return 1
	fi
	case $v in
	rp-*) [ -n "$(ls -A "$dir/out" 2>/dev/null)" ] ||
		say "$v run $2 wrote nothing under --output: is it really profiling?" ;;
	perf-*) [ -s "$dir/perf.data" ] || say "$v run $2 wrote no perf.data" ;;
	esac
	job=$(sed -n 's/.*elapsed \([0-9.]*\) s.*/\1/p' "$dir/stdout")
	echo "$(fsub "$t1" "$t0") ${job:-n/a}" >>"$BENCH_TMP/$v"
	rm -rf "$dir"	# perf.data and profiles are large; only the timings are kept
}

run_interleaved || failed=1

col() {	# col VARIANT FIELD: median of one column of a variant's timings
	[ -f "$BENCH_TMP/$1" ] || { echo n/a; return; }
	awk -v f="$2" '$f != "n/a" { print $f }' "$BENCH_TMP/$1" | median
}

say "fixedjob, $RUNS runs per variant, medians in seconds"
bare_w=$(col bare 1)
bare_j=$(col bare 2)
printf '%-10s %8s %8s %10s %10s\n' variant wall_s job_s wall/bare job/bare
for v in bare rp-49 perf-49 rp-999 perf-999; do
	w=$(col "$v" 1)
	j=$(col "$v" 2)
	printf '%-10s %8s %8s %10s %10s\n' "$v" "$w" "$j" "$(ratio "$w" "$bare_w")" "$(ratio "$j" "$bare_j")"
done
for hz in 49 999; do
	say "rp-$hz/perf-$hz: wall $(ratio "$(col "rp-$hz" 1)" "$(col "perf-$hz" 1)")" \
		"job $(ratio "$(col "rp-$hz" 2)" "$(col "perf-$hz" 2)")"
done
exit $failed

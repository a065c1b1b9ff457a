#!/bin/sh
# USAGE: [RUNS=5] [WORKLOADS="busy2 cpu_split cpp_workload deep_nofp"] sh bench/startup.sh
#        (as root, after `make` and `make workloads`)
#
# The one-time cost of a recording: the CPU seconds `record --pid` spends whatever its
# length (preflight, BPF programs, the module copies, unwind's indexing of the modules, the
# stages' start and end), beside `perf record -g`'s.  For each bundled workload of WORKLOADS,
# running, RUNS rounds (interleaved, so drift on a shared machine hits all alike) record it
# at 999 Hz for 1 s and for 3 s, each run in a fresh cgroup v2 group (every process counted)
# and into a fresh output directory (the module cache starts empty), with:
#   rp      rustprofile.sh record --pid PID --duration Ds --cpu-frequency 999 --output DIR
#   stages  the same stages typed by hand (README), without the driver and its confinement:
#           collect --pid PID --duration Ds --cpu-frequency 999 --module-cache DIR/.modules |
#           unwind --module-cache DIR/.modules | aggregate | emit-pprof --output DIR |
#           commit --output DIR
#   perf    perf record -g -e cpu-clock -F 999 -p PID -o FILE -- sleep D
# The fixed cost is the median CPU of the 1 s runs less the CPU of one recorded second, the
# median of (3 s - 1 s) / 2 over the rounds (none when that comes out negative: on a shared
# machine the noise is larger than what one second of sampling costs); ratios to perf.
# Goal (issue 16): rp's fixed cost at most 50 ms on the bundled workloads.
#
#   startup: fixed CPU of a recording (ms), medians of 5 runs; per recorded second beside it
#   workload       rp  stages    perf   rp/perf   rp/s  perf/s
#   busy2         125.0    74.2   253.1     0.494    1.6     4.6
#   ...
#   startup: goal rp <= 50 ms: met on 3 of 4 workloads
# shellcheck disable=SC1091 # common.sh is read from beside this script
set -u
. "$(dirname "$0")/common.sh"
bench_init startup

bench_runs 5
WORKLOADS=${WORKLOADS:-busy2 cpu_split cpp_workload deep_nofp}
command -v perf >/dev/null 2>&1 || die "perf not found: install linux-perf (scripts/install-deps.sh)"
[ -n "$(cg_root)" ] || die "no cgroup v2 tree: the CPU of every process cannot be counted"
have_driver || die "rustprofile driver '$RP_DRIVER' not found: build it with 'make'"
# shellcheck disable=SC2034 # run_interleaved (common.sh) reads it
VARIANTS="rp stages perf"
failed=0

# The hand-typed pipeline, as a script a cgroup can run: stages.sh PID SECONDS DIR.
cat >"$BENCH_TMP/stages.sh" <<STAGES
set -e
mkdir -p "\$3"
"$RP_BIN/collect" --pid "\$1" --duration "\$2s" --cpu-frequency 999 --module-cache "\$3/.modules" |
	"$RP_BIN/unwind" --module-cache "\$3/.modules" | "$RP_BIN/aggregate" |
	"$RP_BIN/emit-pprof" --output "\$3" | "$RP_BIN/commit" --output "\$3" >/dev/null
STAGES

# run_variant VARIANT ROUND: one 1 s and one 3 s run; appends "cpu_1s per_second" to
# $BENCH_TMP/$W.VARIANT.
run_variant() {
	v=$1
	c1=""
	c3=""
	for s in 1 3; do
		d=$BENCH_TMP/$W.$v.$2.$s
		mkdir -p "$d"
		chmod 755 "$d"
		case $v in
		rp) c=$(cg_run "$d/log" "$RP_DRIVER" record --pid "$PID" --duration "${s}s" \
			--cpu-frequency 999 --output "$d/out") ;;
		stages) c=$(cg_run "$d/log" sh "$BENCH_TMP/stages.sh" "$PID" "$s" "$d/out") ;;
		perf) c=$(cg_run "$d/log" perf record -q -g -e cpu-clock -F 999 -p "$PID" \
			-o "$d/perf.data" -- sleep "$s") ;;
		esac || { say "$W $v ${s}s run $2 failed"; return 1; }
		[ "$s" = 1 ] && c1=$c || c3=$c
		rm -rf "$d"
	done
	awk -v a="$c1" -v b="$c3" 'BEGIN { printf "%.6f %.6f\n", a, (b - a) / 2 }' \
		>>"$BENCH_TMP/$W.$v"
}

col() {	# col WORKLOAD VARIANT FIELD: the median in ms
	[ -s "$BENCH_TMP/$1.$2" ] || { echo n/a; return; }
	awk -v f="$3" '{ print $f * 1000 }' "$BENCH_TMP/$1.$2" | median
}

fixed() {	# fixed WORKLOAD VARIANT: the 1 s runs' median less one recorded second's
	awk -v a="$(col "$1" "$2" 1)" -v p="$(col "$1" "$2" 2)" 'BEGIN {
		if (a == "n/a") print a; else printf "%.1f\n", a - (p > 0 ? p : 0) }'
}

for W in $WORKLOADS; do
	wl=$(need_workload "$W") || { failed=1; continue; }
	"$wl" $((RUNS * 60 + 60)) >/dev/null 2>&1 &	# outlives the runs; killed after them
	PID=$!
	BENCH_PIDS="$BENCH_PIDS $PID"
	sleep 1	# its threads started, its libraries mapped
	run_interleaved || failed=1
	kill "$PID" 2>/dev/null
	wait "$PID" 2>/dev/null
done

say "fixed CPU of a recording (ms), medians of $RUNS runs; per recorded second beside it"
printf '%-14s %7s %7s %7s %9s %6s %7s\n' workload rp stages perf rp/perf rp/s perf/s
met=0
n=0
for W in $WORKLOADS; do
	rp=$(fixed "$W" rp)
	pf=$(fixed "$W" perf)
	printf '%-14s %7s %7s %7s %9s %6s %7s\n' "$W" "$rp" "$(fixed "$W" stages)" "$pf" \
		"$(ratio "$rp" "$pf")" "$(col "$W" rp 2)" "$(col "$W" perf 2)"
	n=$((n + 1))
	[ "$rp" != n/a ] && awk -v r="$rp" 'BEGIN { exit !(r <= 50) }' && met=$((met + 1))
done
say "goal rp <= 50 ms: met on $met of $n workloads"
exit $failed

#!/bin/sh
# USAGE: [RUNS=3] [SECONDS_PER_RUN=4] [REGIMES="split busy shared"] [BPF_STATS=0|1] \
#        [SAMPLED=10] [RP_BIN=.output/bin] [RP_WORKLOADS=.output/workloads] sh bench/offcpu.sh
#
# What the off-CPU collector costs a context-switch-heavy target: `offcpu_pipe S pingpong
# CPU_PING CPU_PONG` (two threads passing one byte over two pipes) reports its round trips
# per second bare, under `rustprofile.sh record --profiles off-cpu --pid PID` and under
# libbpf-tools' `offcputime -p PID`, RUNS times each, interleaved; per-run rates, medians and
# ratios are printed: of the medians, and paired (the median of each run's ratio to the run
# of bare beside it), which the goals are judged on.  A fourth variant records with --offcpu-probability SAMPLED (default
# 10; 0 or 100 leaves it out): sampled switch-outs, estimated values, far less overhead.
# Both tools attach to the running pid; the workload waits for SIGUSR1
# (OFFCPU_PIPE_START=usr1) until the tool has attached, and only then starts its threads and
# its clock.  Run as root.  Exits non-zero when a variant failed or a tool is missing; the
# goals (rp at least 0.95 of bare, and at least offcputime's rate) are reported per regime,
# not enforced.
#
# The workload's threads are pinned, because where the scheduler puts two ping-pong threads
# decides their rate more than any profiler does: a round trip takes about 60 us when they
# run on different CPUs and 7 us when they share one, and unpinned runs mix the two.
#
#   split   ping on the first allowed CPU, pong on the second, the CPUs otherwise idle:
#           every round trip is two cross-CPU wake-ups, some tens of thousands of context
#           switches a second.  Most of a round trip is the wake-up of an idle CPU, which in
#           a virtual machine is slow; a profiler that keeps the CPUs busier makes it faster,
#           so profiled runs beat bare ones here.
#   busy    the same, with a SCHED_IDLE spinner on each of the two CPUs: the CPUs never
#           idle, wake-ups are fast (about twice the split rate), and what the profiler adds
#           to a round trip shows.
#   shared  both threads on the first CPU: two plain context switches a round trip, about
#           300,000 a second, so the rate measures the kernel-side cost per switch (the two
#           stack walks) with nothing to hide it.  No per-switch stack walker comes near 5%.
#
# BPF_STATS=1 turns on kernel.bpf_stats_enabled for the run and also prints the kernel's
# time per run of each tool's sched_switch program, a steadier measure of the per-switch
# cost than rates on a shared machine (the accounting itself adds some tens of ns a run to
# both tools, so rates of such a run are not compared with bare).
#
# The profilers' stages are not pinned: they share the two CPUs with the workload, as they
# would in production.  On the 2-CPU test machine (RUNS=5 SECONDS_PER_RUN=3, paired ratios
# to bare; p10 is --offcpu-probability 10):
#
#   regime  bare trips/s  rp-offcpu  rp-offcpu-p10  offcputime  rp/offcputime
#   split          66345      0.874          0.965       0.729          1.013
#   busy           39047      0.870          1.014       0.854          1.060
#   shared        140521      0.652          0.816       0.434          1.453
#
# Rates on this shared machine move by 10-30% from run to run (bare busy ran from 35,000 to
# 51,000 in that run), so a ratio within 0.05 of another is a tie.  A second run of the
# same build: split rp 0.750, p10 1.011, offcputime 0.731 (rp/offcputime 1.041); busy
# 0.832, 0.948, 0.770 (1.080); shared 0.661, 0.878, 0.432 (1.530).  BPF_STATS=1 (RUNS=3) gave the kernel's time per program
# run: split rp 1,972 ns, offcputime 2,981; busy 1,781 and 2,651; shared 1,896 and 4,250.
# Of rp's, the kernel stack walk is about 1.4 us and the program's own user-stack walk 0.3
# (bpf_get_stackid's was 0.9): on one CPU the two kernel walks of a round trip are 2.8 us
# of 7, which is why no recorder that walks the stacks of each switch is within 5% there.
# On an earlier host where waking an idle CPU took about 60 us, split ran 14,000 round
# trips a second bare and both exact profilers beat bare (a busier CPU wakes faster).
# shellcheck disable=SC1091 # common.sh is read from beside this script
set -u
. "$(dirname "$0")/common.sh"
bench_init offcpu

bench_runs 3
BPF_STATS=${BPF_STATS:-0}
SAMPLED=${SAMPLED:-10}
case $SAMPLED in '' | *[!0-9]*) die "SAMPLED must be a percentage, not '$SAMPLED'" ;; esac
VARIANTS="bare rp-offcpu offcputime"
[ "$SAMPLED" -ge 1 ] && [ "$SAMPLED" -le 99 ] && VARIANTS="bare rp-offcpu rp-offcpu-p$SAMPLED offcputime"
SECS=${SECONDS_PER_RUN:-4}
REGIMES=${REGIMES:-split busy shared}
W=$(need_workload offcpu_pipe) || exit 1
have_driver || die "rustprofile driver '$RP_DRIVER' not found: build it with 'make'"
PEER=$(command -v offcputime || true)
[ -n "$PEER" ] || die "offcputime not found: install libbpf-tools (scripts/install-deps.sh)"
failed=0
if [ "$BPF_STATS" = 1 ]; then
	command -v bpftool >/dev/null || die "BPF_STATS=1 needs bpftool"
	stats_was=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null) ||
		die "BPF_STATS=1: this kernel has no kernel.bpf_stats_enabled"
	sysctl -qw kernel.bpf_stats_enabled=1 || die "BPF_STATS=1: cannot enable kernel.bpf_stats_enabled"
	trap 'sysctl -qw kernel.bpf_stats_enabled="$stats_was"; bench_cleanup' EXIT
fi

# rate FILE: the workload's round trips per second, from its last line.
rate() { awk '/^round_trips/ { r = $4 } END { print r }' "$1"; }

# run_attached DIR [PROGRAM STOP TOOL...]: runs the workload, under a tool that attaches to its
# pid as `offcputime -p PID` and `rustprofile.sh record --pid PID` do (the pid is the tool's
# last argument).  The workload waits for SIGUSR1 before it starts its threads and its clock
# (OFFCPU_PIPE_START), which it gets once the tool's BPF program PROGRAM is loaded and the
# tool has had time to finish attaching; without a tool, at once.  STOP "int": the tool runs
# until SIGINT; "exit": it ends with its target.
run_attached() {
	dir=$1
	shift
	# shellcheck disable=SC2086 # CPUS is two numbers
	OFFCPU_PIPE_START=usr1 "$W" "$SECS" pingpong $CPUS >"$dir/stdout" 2>&1 &
	wl=$!
	BENCH_PIDS="$BENCH_PIDS $wl"
	# SIGUSR1 kills the workload until it blocks the signal, which it then says.
	n=0
	until grep -q 'waiting for SIGUSR1' "$dir/stdout" 2>/dev/null || [ $n -ge 100 ]; do
		sleep 0.05
		n=$((n + 1))
	done
	tool=
	if [ $# -gt 0 ]; then
		prog=$1 stop=$2
		shift 2
		"$@" "$wl" >"$dir/tool" 2>&1 &
		tool=$!
		BENCH_PIDS="$BENCH_PIDS $tool"
		n=0
		until bpftool prog show 2>/dev/null | grep -q " name $prog " || [ $n -ge 100 ]; do
			sleep 0.1
			n=$((n + 1))
		done
		# Loaded is not yet attached, nor has collect read the kernel's symbols.
		sleep 1
	fi
	kill -USR1 "$wl"
	wait "$wl"
	rc=$?
	# With BPF_STATS=1, the kernel's time per run of the tool's sched_switch program.
	if [ -n "$tool" ] && [ "$BPF_STATS" = 1 ]; then
		bpftool prog show name "$prog" 2>/dev/null |
			awk '{ for (i = 1; i < NF; i++) { if ($i == "run_time_ns") t = $(i + 1)
				if ($i == "run_cnt") c = $(i + 1) } }
				END { if (c > 0) printf "%.0f\n", t / c }' >>"$dir.bpfns"
	fi
	if [ -n "$tool" ]; then
		[ "$stop" = int ] && kill -INT "$tool" 2>/dev/null
		wait "$tool" || rc=$?
	fi
	return $rc
}

# run_variant NAME RUN: appends the rate to $BENCH_TMP/$REGIME.NAME
# shellcheck disable=SC2086 # CPUS is two numbers
run_variant() {
	v=$1
	dir=$BENCH_TMP/$REGIME.$v.$2
	mkdir -p "$dir"
	case $v in
	bare) run_attached "$dir" ;;
	rp-offcpu) run_attached "$dir" offcpu_switch exit "$RP_DRIVER" record --profiles off-cpu \
		--unwind fp --duration 0 --window 60s --output "$dir/out" --pid ;;
	rp-offcpu-p*) run_attached "$dir" offcpu_switch exit "$RP_DRIVER" record --profiles off-cpu \
		--offcpu-probability "${v#rp-offcpu-p}" --unwind fp --duration 0 --window 60s \
		--output "$dir/out" --pid ;;
	offcputime) run_attached "$dir" sched_switch int "$PEER" -p ;;
	esac
	rc=$?
	r=$(rate "$dir/stdout")
	if [ $rc -ne 0 ] || [ -z "$r" ]; then
		say "$REGIME: $v run $2 failed (exit $rc): $(tail -n 1 "$dir/stdout")"
		return 1
	fi
	if [ "$v" = rp-offcpu ]; then
		ls "$dir/out"/off-cpu-*.pb.gz >/dev/null 2>&1 ||
			say "$REGIME: $v run $2 wrote no off-CPU profile: is it really profiling?"
		jq -s -r '"\(map(.off_cpu.intervals) | add) \(map(.off_cpu.ring_buffer_drops) | add)"' \
			"$dir/out"/diagnostics-*.json \
			>>"$BENCH_TMP/$REGIME.rp-counts" 2>/dev/null
	fi
	echo "$r" >>"$BENCH_TMP/$REGIME.$v"
	echo "$2 $r" >>"$BENCH_TMP/$REGIME.$v.runs"
	[ -s "$dir.bpfns" ] && cat "$dir.bpfns" >>"$BENCH_TMP/$REGIME.$v.bpfns"
	rm -rf "$dir" "$dir.bpfns"
}

# The first two CPUs this benchmark may use, from its affinity list ("0-3,8" -> 0 1).
allowed=$(awk '/^Cpus_allowed_list/ {
	n = split($2, part, ",")
	for (i = 1; i <= n; i++) {
		if (split(part[i], r, "-") == 1) r[2] = r[1]
		for (c = r[1]; c <= r[2]; c++) printf "%d ", c
	} }' /proc/self/status)
# shellcheck disable=SC2086 # a list of numbers
set -- $allowed
CPU_A=${1:-0}
CPU_B=${2:-}

col() { [ -f "$BENCH_TMP/$REGIME.$1" ] && median <"$BENCH_TMP/$REGIME.$1" || echo n/a; }

# paired A B: the median over the runs of A's rate / B's rate in the same run.  The machine
# drifts between runs (rates move by 10-30%), so ratios of neighbouring runs say more than
# ratios of medians.
paired() {
	if [ ! -f "$BENCH_TMP/$REGIME.$1.runs" ] || [ ! -f "$BENCH_TMP/$REGIME.$2.runs" ]; then
		echo n/a
		return
	fi
	awk 'NR == FNR { b[$1] = $2; next } ($1 in b) && b[$1] > 0 { print $2 / b[$1] }' \
		"$BENCH_TMP/$REGIME.$2.runs" "$BENCH_TMP/$REGIME.$1.runs" | median
}

for REGIME in $REGIMES; do
	case $REGIME in
	split)
		if [ -z "$CPU_B" ]; then
			say "split: needs two CPUs, this benchmark may use only CPU $CPU_A; skipped"
			continue
		fi
		CPUS="$CPU_A $CPU_B" ;;
	shared) CPUS="$CPU_A $CPU_A" ;;
	busy)
		if [ -z "$CPU_B" ]; then
			say "busy: needs two CPUs, this benchmark may use only CPU $CPU_A; skipped"
			continue
		fi
		CPUS="$CPU_A $CPU_B"
		for c in $CPUS; do
			taskset -c "$c" chrt -i 0 sh -c 'while :; do :; done' &
			BENCH_PIDS="$BENCH_PIDS $!"
			SPINNERS="${SPINNERS:-} $!"
		done ;;
	*) die "unknown regime '$REGIME': split, busy or shared" ;;
	esac
	run_interleaved || failed=1

	say "$REGIME: offcpu_pipe pingpong on CPUs $CPUS, $SECS s, $RUNS runs per variant, medians"
	bare=$(col bare)
	printf '%-14s %10s %9s %12s\n' variant trips/s "vs bare" "paired/bare"
	for v in $VARIANTS; do
		printf '%-14s %10s %9s %12s\n' "$v" "$(col "$v")" "$(ratio "$(col "$v")" "$bare")" \
			"$(paired "$v" bare)"
	done
	for v in $VARIANTS; do
		[ -f "$BENCH_TMP/$REGIME.$v" ] && say "$REGIME: $v runs: $(tr '\n' ' ' <"$BENCH_TMP/$REGIME.$v")"
	done
	[ -f "$BENCH_TMP/$REGIME.rp-counts" ] &&
		say "$REGIME: rp-offcpu intervals and ring-buffer drops per run: $(tr '\n' ';' <"$BENCH_TMP/$REGIME.rp-counts")"
	if [ -n "${SPINNERS:-}" ]; then
		# shellcheck disable=SC2086 # a list of pids
		kill $SPINNERS 2>/dev/null
		SPINNERS=
	fi
	if [ "$BPF_STATS" = 1 ]; then
		line=
		for v in $VARIANTS; do
			[ -f "$BENCH_TMP/$REGIME.$v.bpfns" ] && line="$line $v $(col "$v.bpfns")"
		done
		say "$REGIME: ns per run of the sched_switch program (median):$line"
	fi
	rb=$(paired rp-offcpu bare)
	ro=$(paired rp-offcpu offcputime)
	say "$REGIME: rp-offcpu/offcputime $(ratio "$(col rp-offcpu)" "$(col offcputime)") (medians), $ro (paired)"
	# The goals are judged on the paired ratios.
	awk -v g="$REGIME" -v rb="$rb" -v ro="$ro" 'BEGIN {
		if (rb == "n/a" || ro == "n/a") exit
		printf "offcpu: %s: at most 5%% slower than bare: %s; no slower than offcputime: %s\n", g,
			(rb >= 0.95) ? "met" : "not met", (ro >= 1) ? "met" : "not met" }'
	case $VARIANTS in *rp-offcpu-p*)
		awk -v g="$REGIME" -v s="$(paired "rp-offcpu-p$SAMPLED" bare)" -v pc="$SAMPLED" 'BEGIN {
			if (s == "n/a") exit
			printf "offcpu: %s: with --offcpu-probability %s (estimates): %s of bare, %s 5%%\n",
				g, pc, s, (s >= 0.95) ? "within" : "not within" }' ;;
	esac
done
exit $failed

#!/bin/sh
# USAGE: [RUNS=3] [SECONDS_PER_RUN=4] [RP_BIN=.output/bin] [RP_WORKLOADS=.output/workloads] \
#        sh bench/heap.sh
#
# What the heap probes cost an allocating target.  `alloc_rate S SPIN` makes small
# allocations (malloc 16..256 B, free) with SPIN iterations of arithmetic between them; SPIN
# is calibrated so that a bare run makes about a million allocations a second ("fast") and
# about 50,000 ("slow").  Each regime runs, RUNS times interleaved:
#
#   bare       nothing attached
#   floor      bench/heap_floor_driver: the empty program of bpf/heap.bpf.c on the same
#              uprobes and uretprobes as the heap profile (the trap floor)
#   rp         rustprofile.sh record --pid PID --profiles heap (512 KiB, the default)
#   memleak    bcc's memleak-bpfcc -p PID, sampling every 1024th allocation (-s 1024)
#   heaptrack  heaptrack running the workload (LD_PRELOAD; attaching needs gdb)
#
# and prints the median rate of each, its ratio to bare, and the cost per allocator call
# (1/rate - 1/bare, in ns; a malloc and a free are two calls) with rp's cost against the
# floor's.  The goals (rp's cost per call at most 1.3x the floor's, below memleak's, and at
# 50,000 allocations a second at most 3% slower than bare) are reported, not enforced.  It
# also says which kernel uprobe optimizations the kernel has.  Run as root; a missing peer
# is skipped with a line.
# shellcheck disable=SC1091,SC2317 # common.sh is read from beside this script; the tools
# and ready tests are called through variables
set -u
. "$(dirname "$0")/common.sh"
bench_init heap

bench_runs 3
SECS=${SECONDS_PER_RUN:-4}
W=$(need_workload alloc_rate) || exit 1
FLOOR=$(need_bench_driver heap_floor_driver) || exit 1
have_driver || die "rustprofile driver '$RP_DRIVER' not found: build it with 'make'"
MEMLEAK=$(command -v memleak-bpfcc || true)
HEAPTRACK=$(command -v heaptrack || true)
VARIANTS="bare floor rp"
if [ -n "$MEMLEAK" ]; then VARIANTS="$VARIANTS memleak"; else say "memleak-bpfcc not found (bpfcc-tools): skipped"; fi
if [ -n "$HEAPTRACK" ]; then VARIANTS="$VARIANTS heaptrack"; else say "heaptrack not found: skipped"; fi

# The kernel's uprobe optimizations: multi-uprobe links (6.6) and the uretprobe system call
# (x86_64, 6.11), which returns from a uretprobe without a trap.
ks() { grep -qw "$1" /proc/kallsyms 2>/dev/null && echo yes || echo no; }
say "kernel $(uname -r): uprobe_multi links: $(ks bpf_uprobe_multi_link_attach)" \
	"(not used: one perf-event uprobe per function);" \
	"uretprobe syscall: $(ks __x64_sys_uretprobe) (used by the kernel for every uretprobe when present)"

rate() { awk '/^rate/ { print $2 }' "$1"; }

# attached DIR [READY TOOL...]: the workload waits for SIGUSR1, gets it once TOOL (its last
# argument the pid) says it is attached (READY FILE, on its output); without TOOL at once.
attached() {
	dir=$1
	shift
	ALLOC_RATE_START=usr1 "$W" "$SECS" "$SPIN" >"$dir/stdout" 2>"$dir/stderr" &
	wl=$!
	BENCH_PIDS="$BENCH_PIDS $wl"
	n=0
	until grep -q 'waiting for SIGUSR1' "$dir/stderr" 2>/dev/null || [ "$n" -ge 100 ]; do
		sleep 0.05
		n=$((n + 1))
	done
	tool=
	if [ $# -gt 0 ]; then
		ready=$1
		shift
		"$@" "$wl" >"$dir/tool" 2>&1 &
		tool=$!
		BENCH_PIDS="$BENCH_PIDS $tool"
		# Until the tool says it is attached (bcc compiles its program first, which takes
		# seconds), or at most 60 s; then a moment for the last attachments.
		n=0
		until $ready "$dir/tool" || [ "$n" -ge 600 ]; do
			if ! kill -0 "$tool" 2>/dev/null; then
				# A tool that could not attach (bcc without kernel headers cannot
				# compile memleak's program): the run does not count.
				say "tool ended early: $(tail -n 1 "$dir/tool")"
				kill "$wl" 2>/dev/null
				wait "$wl" 2>/dev/null
				return 1
			fi
			sleep 0.1
			n=$((n + 1))
		done
		sleep 1
	fi
	kill -USR1 "$wl"
	wait "$wl"
	rc=$?
	if [ -n "$tool" ]; then
		kill -INT "$tool" 2>/dev/null
		wait "$tool" 2>/dev/null
	fi
	return "$rc"
}

# Ready tests, on the tool's output: each tool's own word that its probes are in.
floor_ready() { grep -q '^attached' "$1" 2>/dev/null; }
rp_ready() { bpftool prog show 2>/dev/null | grep -q ' name heap_malloc '; }
memleak_ready() { grep -q 'Attaching to pid' "$1" 2>/dev/null; }

floor_tool() { "$FLOOR" "$1" $((SECS + 5)) empty; }
rp_tool() {
	"$RP_DRIVER" record --profiles heap --duration $((SECS + 5))s --window 60s \
		--output "$BENCH_TMP/rp.out" --pid "$1"
}
memleak_tool() { "$MEMLEAK" -s 1024 -p "$1" 60; }

run_variant() {
	d=$BENCH_TMP/$REGIME.$1.$2
	mkdir -p "$d"
	case $1 in
	bare) attached "$d" ;;
	floor) attached "$d" floor_ready floor_tool ;;
	rp) attached "$d" rp_ready rp_tool ;;
	memleak) attached "$d" memleak_ready memleak_tool ;;
	heaptrack)
		"$HEAPTRACK" -o "$d/ht" "$W" "$SECS" "$SPIN" >"$d/stdout" 2>"$d/stderr" ;;
	esac || { say "$REGIME $1 run $2 failed"; return 1; }
	r=$(rate "$d/stdout")
	[ -n "$r" ] || { say "$REGIME $1 run $2: no rate"; return 1; }
	echo "$r" >>"$BENCH_TMP/$REGIME.$1"
}

# calibrate TARGET: the SPIN for about TARGET allocations a second bare.
calibrate() {
	"$W" 1 1000 >"$BENCH_TMP/cal" 2>/dev/null || die "alloc_rate failed"
	awk -v r="$(rate "$BENCH_TMP/cal")" -v t="$1" 'BEGIN { s = 1000 * r / t; printf "%d\n", s < 1 ? 0 : s }'
}

failed=0
for REGIME in fast slow; do
	[ "$REGIME" = fast ] && SPIN=$(calibrate 1000000) || SPIN=$(calibrate 50000)
	say "$REGIME: SPIN $SPIN, $RUNS runs of $SECS s"
	run_interleaved || failed=1
	bare=$(median <"$BENCH_TMP/$REGIME.bare")
	printf '%-10s %12s %8s %14s\n' variant allocs/s ratio "ns/call over bare"
	for v in $VARIANTS; do
		[ -s "$BENCH_TMP/$REGIME.$v" ] || continue
		m=$(median <"$BENCH_TMP/$REGIME.$v")
		# Two allocator calls per allocation: malloc and free.
		awk -v v="$v" -v m="$m" -v b="$bare" 'BEGIN { printf "%-10s %12.0f %8.3f %14.1f\n",
			v, m, m / b, (1e9 / m - 1e9 / b) / 2 }'
		ns=$(awk -v m="$m" -v b="$bare" 'BEGIN { printf "%.3f", (1e9 / m - 1e9 / b) / 2 }')
		eval "ns_$v=$ns"
	done
	# shellcheck disable=SC2154 # set by eval above
	awk -v r="${ns_rp:-0}" -v f="${ns_floor:-0}" -v ml="${ns_memleak:-}" -v reg="$REGIME" \
		-v rr="$(median <"$BENCH_TMP/$REGIME.rp" 2>/dev/null)" -v b="$bare" 'BEGIN {
		if (f > 0) printf "%s: rp cost per call %.2fx the floor (goal <= 1.3)\n", reg, r / f
		if (ml != "") printf "%s: rp cost per call %.2fx memleak (goal < 1)\n", reg, (ml > 0 ? r / ml : 0)
		if (reg == "slow") printf "slow: rp %.1f%% slower than bare (goal <= 3%%)\n", (1 - rr / b) * 100 }'
done
exit $failed

#!/bin/sh
# USAGE: [RUNS=3] [SECONDS_=60] [RP_BIN=.output/bin] sh bench/unwind_dwarf.sh   (as root)
#
# DWARF unwind throughput: records the six-deep chain built without frame pointers
# (deep_nofp) at 999 Hz with `collect --unwind dwarf` and, at the same time, with
# `perf record --call-graph dwarf,16384`, so both captures hold about the same samples; then
# times `unwind` on the saved stream beside `perf script` on the perf.data, RUNS times each,
# and prints samples per second, the ratio and unwind's peak resident memory.
# Goal: at least 10 times perf's rate, unwind under 64 MiB resident.
#
#   unwind_dwarf: 61781 samples (ours), 61915 (perf), medians of 3 runs
#   unwind_dwarf: unwind        0.090 s    686456 samples/s    26.2 MiB peak
#   unwind_dwarf: perf script   1.070 s     57864 samples/s
#   unwind_dwarf: unwind/perf rate: 11.863
# (/usr/bin/time counts hundredths: 0.09 to 0.11 s, 9.8 to 11.9 times, on a shared machine.)
# shellcheck disable=SC1091 # common.sh is read from beside this script
set -u
. "$(dirname "$0")/common.sh"
bench_init unwind_dwarf

RUNS=${RUNS:-3}
SECS=${SECONDS_:-60}
DEEP=$(need_workload deep_nofp) || exit 1
command -v perf >/dev/null 2>&1 || die "perf not found: install linux-perf"
[ -x /usr/bin/time ] || die "/usr/bin/time not found: install time"

"$DEEP" $((SECS + 20)) &
wpid=$!
BENCH_PIDS="$wpid"
sleep 0.3
say "recording ${SECS}s of deep_nofp at 999 Hz with collect and perf at once"
"$RP_BIN/collect" --pid "$wpid" --unwind dwarf --cpu-frequency 999 --duration "${SECS}s" \
	--module-cache "$BENCH_TMP/modules" >"$BENCH_TMP/dwarf.stream" &
cpid=$!
perf record -q -e cpu-clock -F 999 --call-graph dwarf,16384 -p "$wpid" \
	-o "$BENCH_TMP/perf.data" -- sleep "$SECS" 2>/dev/null
wait "$cpid" || die "collect failed"
kill "$wpid" 2>/dev/null

# Samples in each capture: sample-regs frames of the stream, samples perf script prints.
ours=$(python3 - "$BENCH_TMP/dwarf.stream" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
p, n = struct.unpack_from('<H', d, 10)[0], 0
while p + 8 <= len(d):
    t, l = struct.unpack_from('<II', d, p)
    n += t == 14
    p += 8 + l
print(n)
PY
)
theirs=$(perf script -i "$BENCH_TMP/perf.data" -F tid 2>/dev/null | wc -l)

: >"$BENCH_TMP/ours.t"
: >"$BENCH_TMP/perf.t"
# timed OUT CMD...: appends "wall_seconds peak_KB" of CMD to OUT.  The wall time comes from
# the clock (GNU time counts hundredths, a tenth of unwind's run); the peak from GNU time.
timed() {
	o=$1
	shift
	t0=$(now_s)
	/usr/bin/time -f '%M' -o "$BENCH_TMP/t" "$@" || return 1
	t1=$(now_s)
	echo "$(fsub "$t1" "$t0") $(tail -n 1 "$BENCH_TMP/t")" >>"$o"
}
for i in $(seq "$RUNS"); do
	timed "$BENCH_TMP/ours.t" "$RP_BIN/unwind" --module-cache "$BENCH_TMP/modules" \
		<"$BENCH_TMP/dwarf.stream" >/dev/null || die "unwind failed"
	timed "$BENCH_TMP/perf.t" perf script -i "$BENCH_TMP/perf.data" >/dev/null 2>&1 ||
		die "perf script failed"
done
ot=$(awk '{ print $1 }' "$BENCH_TMP/ours.t" | median)
om=$(awk '{ print $2 / 1024 }' "$BENCH_TMP/ours.t" | median)
pt=$(awk '{ print $1 }' "$BENCH_TMP/perf.t" | median)
orate=$(awk -v n="$ours" -v t="$ot" 'BEGIN { printf "%.0f", (t > 0 ? n / t : 0) }')
prate=$(awk -v n="$theirs" -v t="$pt" 'BEGIN { printf "%.0f", (t > 0 ? n / t : 0) }')
say "$ours samples (ours), $theirs (perf), medians of $RUNS runs"
say "$(printf 'unwind      %7.3f s %9s samples/s %7.1f MiB peak' "$ot" "$orate" "$om")"
say "$(printf 'perf script %7.3f s %9s samples/s' "$pt" "$prate")"
say "unwind/perf rate: $(ratio "$orate" "$prate")"

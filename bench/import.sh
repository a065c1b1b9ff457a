#!/bin/sh
# import.sh: a perf.data of at least 500,000 samples with callchains into pprof windows,
# beside `perf script` and `perf report --stdio` on the same file.
#
# USAGE: sh bench/import.sh     (as root, after `make` and `make workloads`)
#   env: SECONDS_BIG=30 SECONDS_SMALL=3 FREQ=25000 REPS=3 WINDOW=60s MIN_SAMPLES=500000
# Records busy2 (two busy threads, frame-pointer stacks) with `perf record -g -e cpu-clock`
# at FREQ Hz (capped at perf_event_max_sample_rate), once for SECONDS_BIG and once for
# SECONDS_SMALL; the big one again, longer, while it holds fewer than MIN_SAMPLES (a shared
# machine gives busy2 less).  Each tool reads the big capture REPS times, one process each
# run (startup included, output to /dev/null, our windows to a fresh directory); medians and
# ratios:
#   import: capture 119.1 MB, 1486563 samples with callchains, 3 runs each (median)
#   import: rustprofile import    0.484 s
#   import: perf script           4.400 s   ours 9.091x faster
#   import: perf report --stdio   3.921 s   ours 8.101x faster
#   import: import stage alone    0.110 s   (perf script / import stage 40.000x)
#   import: peak RSS of import: 10316 KB at 11.9 MB, 11540 KB at 119.1 MB
# Peak RSS is GNU time's maximum resident set size of the import stage alone.
set -eu
. "$(dirname "$0")/common.sh"
bench_init import
SECONDS_BIG=${SECONDS_BIG:-30}
SECONDS_SMALL=${SECONDS_SMALL:-3}
FREQ=${FREQ:-25000}
REPS=${REPS:-3}
WINDOW=${WINDOW:-60s}
MIN_SAMPLES=${MIN_SAMPLES:-500000}

[ "$(id -u)" -eq 0 ] || die "run as root (perf record and the driver)"
command -v perf >/dev/null || die "perf is not installed"
[ -x /usr/bin/time ] || die "GNU time (/usr/bin/time) is not installed"
have_driver || die "'$RP_DRIVER' missing: run 'make'"
busy=$(need_workload busy2)
max=$(cat /proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null || echo 100000)
[ "$FREQ" -le "$max" ] || FREQ=$max

# record SECONDS FILE: busy2 under perf record with frame-pointer callchains.
record() {
	perf record -q -g -e cpu-clock -F "$FREQ" -o "$2" "$busy" "$1" >/dev/null 2>&1 ||
		die "perf record failed"
}

# run_time CMD...: wall seconds of one run, output discarded.
run_time() {
	t0=$(now_s)
	"$@" >/dev/null 2>&1 || die "failed: $*"
	t1=$(now_s)
	fsub "$t1" "$t0"
}

rp_import() {
	rm -rf "$BENCH_TMP/out"
	"$RP_DRIVER" import --input "$big" --window "$WINDOW" --output "$BENCH_TMP/out"
}

# import_rss FILE: peak RSS (KB) of the import stage reading FILE.
import_rss() {
	/usr/bin/time -f '%M' -o "$BENCH_TMP/rss" "$RP_BIN/import" --input "$1" >/dev/null ||
		die "import failed on '$1'"
	tail -n 1 "$BENCH_TMP/rss"
}

mb() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }

big=$BENCH_TMP/big.data
small=$BENCH_TMP/small.data
say "recording busy2 for ${SECONDS_BIG}s and ${SECONDS_SMALL}s at $FREQ Hz"
record "$SECONDS_SMALL" "$small"
# On a shared machine busy2 gets less than its two CPUs: the big capture is recorded again,
# longer by the share missing (at most twice), until it holds MIN_SAMPLES.
secs=$SECONDS_BIG
tries=0
while :; do
	record "$secs" "$big"
	chmod 644 "$big" "$small"
	rp_import >/dev/null 2>&1 || die "rustprofile.sh import failed"
	samples=$(cat "$BENCH_TMP"/out/diagnostics-*.json | jq -s 'map(.cpu.samples) | add')
	[ "$samples" -ge "$MIN_SAMPLES" ] && break
	tries=$((tries + 1))
	[ "$tries" -le 2 ] ||
		die "only $samples samples (want $MIN_SAMPLES): raise SECONDS_BIG or FREQ"
	secs=$(awk -v s="$secs" -v n="$samples" -v m="$MIN_SAMPLES" \
		'BEGIN { printf "%d", s * m / (n > 0 ? n : 1) * 1.2 + 1 }')
	say "only $samples samples (want $MIN_SAMPLES): recording ${secs}s"
done

: >"$BENCH_TMP/t.ours"
: >"$BENCH_TMP/t.stage"
: >"$BENCH_TMP/t.script"
: >"$BENCH_TMP/t.report"
i=0
while [ "$i" -lt "$REPS" ]; do
	run_time rp_import >>"$BENCH_TMP/t.ours"
	run_time "$RP_BIN/import" --input "$big" >>"$BENCH_TMP/t.stage"
	run_time perf script -i "$big" >>"$BENCH_TMP/t.script"
	run_time perf report --stdio -i "$big" >>"$BENCH_TMP/t.report"
	i=$((i + 1))
done
ours=$(median <"$BENCH_TMP/t.ours")
stage=$(median <"$BENCH_TMP/t.stage")
script=$(median <"$BENCH_TMP/t.script")
report=$(median <"$BENCH_TMP/t.report")

say "capture $(mb "$big"), $samples samples with callchains, $REPS runs each (median)"
say "$(printf '%-24s %7s s' 'rustprofile import' "$ours")"
say "$(printf '%-24s %7s s   ours %sx faster' 'perf script' "$script" "$(ratio "$script" "$ours")")"
say "$(printf '%-24s %7s s   ours %sx faster' 'perf report --stdio' "$report" \
	"$(ratio "$report" "$ours")")"
say "$(printf '%-24s %7s s   (perf script / import stage %sx)' 'import stage alone' "$stage" \
	"$(ratio "$script" "$stage")")"
say "peak RSS of import: $(import_rss "$small") KB at $(mb "$small"), $(import_rss "$big") KB at $(mb "$big")"

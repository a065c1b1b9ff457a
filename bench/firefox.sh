#!/bin/sh
# USAGE: [RUNS=5] [FREQ=20000] [SECONDS_=8] sh bench/firefox.sh     (as root, after `make` and `make workloads`)
#
# emit-firefox on one window of at least 65,536 samples (the default --max-timeline-samples):
# records busy2 (two busy threads) with `perf record -g` at FREQ Hz for SECONDS_ s, turns the
# capture into one 60 s window (import | unwind | aggregate) saved as a stream, then times
# emit-firefox on that stream RUNS times for --format json and jslb, and `perf script` on the
# same capture for scale.  Prints medians of wall time and peak resident memory:
#
#   firefox: window of 200595 samples, 65536 on the timeline, 3 runs each (median)
#   firefox: emit-firefox json      0.160 s    13.2 MiB    0.3 MB written
#   firefox: emit-firefox jslb      0.080 s    13.2 MiB    0.4 MB written
#   firefox: perf script            0.636 s   (same capture, for scale)
set -eu
. "$(dirname "$0")/common.sh"
bench_init firefox
bench_runs 5
FREQ=${FREQ:-20000}
SECS=${SECONDS_:-8}
[ "$(id -u)" -eq 0 ] || die "run as root (perf record)"
command -v perf >/dev/null || die "perf is not installed"
[ -x /usr/bin/time ] || die "GNU time (/usr/bin/time) is not installed"
busy=$(need_workload busy2)
max=$(cat /proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null || echo 100000)
[ "$FREQ" -le "$max" ] || FREQ=$max

perf record -q -g -e cpu-clock -F "$FREQ" -o "$BENCH_TMP/perf.data" "$busy" "$SECS" \
	>/dev/null 2>&1 || die "perf record failed"
"$RP_BIN/import" --input "$BENCH_TMP/perf.data" | "$RP_BIN/unwind" |
	"$RP_BIN/aggregate" --window 60s >"$BENCH_TMP/window.stream" ||
	die "import | unwind | aggregate failed"
samples=$(python3 - "$BENCH_TMP/window.stream" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
p, n = struct.unpack_from('<H', d, 10)[0], 0
while p + 8 <= len(d):
    t, l = struct.unpack_from('<II', d, p)
    n += t == 23
    p += 8 + l
print(n)
PY
)
[ "$samples" -ge 65536 ] || die "only $samples samples in the window (raise FREQ)"

# run FORMAT: one emit-firefox run; appends "seconds KB bytes" to $BENCH_TMP/FORMAT.t
run() {
	rm -rf "$BENCH_TMP/out" && mkdir "$BENCH_TMP/out"
	/usr/bin/time -f '%e %M' -o "$BENCH_TMP/t" "$RP_BIN/emit-firefox" --format "$1" \
		--output "$BENCH_TMP/out" <"$BENCH_TMP/window.stream" >/dev/null ||
		die "emit-firefox --format $1 failed"
	printf '%s %s\n' "$(cat "$BENCH_TMP/t")" \
		"$(cat "$BENCH_TMP"/out/.firefox-* | wc -c)" >>"$BENCH_TMP/$1.t"
}

run json # the timeline length, read from the JSON itself
timeline=$(gzip -dc "$BENCH_TMP"/out/.firefox-* | jq '.threads | map(.samples.length) | add')
: >"$BENCH_TMP/json.t"
: >"$BENCH_TMP/jslb.t"
: >"$BENCH_TMP/perf.t"
for _ in $(seq "$RUNS"); do
	run json
	run jslb
	t0=$(now_s)
	perf script -i "$BENCH_TMP/perf.data" >/dev/null 2>&1 || die "perf script failed"
	fsub "$(now_s)" "$t0" >>"$BENCH_TMP/perf.t"
done
say "window of $samples samples, $timeline on the timeline, $RUNS runs each (median)"
for f in json jslb; do
	t=$(awk '{ print $1 }' "$BENCH_TMP/$f.t" | median)
	m=$(awk '{ print $2 / 1024 }' "$BENCH_TMP/$f.t" | median)
	b=$(awk '{ print $3 / 1e6 }' "$BENCH_TMP/$f.t" | median)
	say "$(printf 'emit-firefox %-5s %7.3f s %7.1f MiB %6.1f MB written' "$f" "$t" "$m" "$b")"
done
say "$(printf 'perf script        %7.3f s   (same capture, for scale)' \
	"$(median <"$BENCH_TMP/perf.t")")"

#!/bin/sh
# USAGE: [OTLP_STACKS=65536] [RUNS=5] sh bench/otlp.sh
#
# The OTLP export's cost (docs/otlp.md), medians of RUNS runs, against a loopback receiver
# (tests/tools/otlprecv.py):
#
#  1. one window of OTLP_STACKS distinct stacks (tests/tools/streamgen.c distinct): the CPU
#     seconds of emit-pprof writing its gzipped pprof, and of emit-otlp encoding, gzipping
#     and sending its request, each less the same stage without the work (emit-pprof on a
#     window-less stream, emit-otlp without an endpoint: the tee and the window model);
#     sizes of the pprof file and of the request, raw and gzipped;
#  2. the export path's CPU per window against the pipeline's, for a 10 s recording of
#     cpu_split at 499 Hz (as root) and the saved streams of tests/golden, in 100 ms
#     windows: emit-otlp with the endpoint less emit-otlp without, per window sent, against
#     the CPU per window of `rustprofile.sh replay` (every stage, in a cgroup); the goal is
#     below 10% (replay has no collect, so the share of a live run is lower still), and the
#     export's one-time start (its process and libraries) is shown apart.
#
#   otlp: window of 65536 stacks: pprof 0.210 s 1234567 B; otlp encode+gzip+send 0.190 s,
#         request 4567890 B raw, 1345678 B gzip (1.09 x the pprof)
#   otlp: the export's start: 0.010 s once per run (emit-otlp on a stream without windows)
#   otlp: dwarf.stream in 100 ms windows (20): pipeline 5.000 ms a window, export 0.300 ms
#         a window sent: 6.0% (goal < 10%)
set -eu
. "$(dirname "$0")/common.sh"
bench_init otlp
n=${OTLP_STACKS:-65536}
bench_runs 5
for s in emit-pprof emit-otlp; do
	[ -x "$RP_BIN/$s" ] || die "'$RP_BIN/$s' missing: run 'make'"
done
[ -x /usr/bin/time ] || die "/usr/bin/time missing: install the time package"

gen=$BENCH_TMP/streamgen
cc -std=c17 -D_GNU_SOURCE -O2 -I"$ROOT/lib" -o "$gen" "$ROOT/tests/tools/streamgen.c" \
	"$RP_BIN/../lib/librp.a" -lz -lm || die "cannot build streamgen"
"$gen" distinct "$n" >"$BENCH_TMP/big.stream"
"$gen" empty >"$BENCH_TMP/empty.stream"

recv=$BENCH_TMP/recv
mkdir -p "$recv"
python3 "$ROOT/tests/tools/otlprecv.py" "$recv" &
BENCH_PIDS="$BENCH_PIDS $!"
i=0
while [ ! -s "$recv/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
[ -s "$recv/port" ] || die "the receiver did not start"
url=http://127.0.0.1:$(cat "$recv/port")

# cpu OUT CMD...: CPU seconds (user + system) of CMD reading IN ($in), output to /dev/null.
cpu() {
	o=$1
	shift
	rm -rf "$o" && mkdir -p "$o"
	/usr/bin/time -f '%U %S' -o "$BENCH_TMP/t" "$@" --output "$o" <"$in" >/dev/null \
		2>"$BENCH_TMP/err" || die "$1 failed: $(tail -n 1 "$BENCH_TMP/err")"
	awk '{ printf "%.6f\n", $1 + $2 }' "$BENCH_TMP/t"
}

: >"$BENCH_TMP/pp" && : >"$BENCH_TMP/ot"
r=1
while [ $r -le "$RUNS" ]; do
	in=$BENCH_TMP/empty.stream
	p0=$(cpu "$BENCH_TMP/o" "$RP_BIN/emit-pprof")
	in=$BENCH_TMP/big.stream
	o0=$(cpu "$BENCH_TMP/o" "$RP_BIN/emit-otlp")
	p1=$(cpu "$BENCH_TMP/o" "$RP_BIN/emit-pprof")
	psize=$(stat -c %s "$BENCH_TMP"/o/.cpu-*)
	o1=$(cpu "$BENCH_TMP/o" "$RP_BIN/emit-otlp" --endpoint "$url")
	fsub "$p1" "$p0" >>"$BENCH_TMP/pp"
	fsub "$o1" "$o0" >>"$BENCH_TMP/ot"
	r=$((r + 1))
done
last=-1
for f in "$recv"/req-*.pb; do [ -e "$f" ] && last=$((last + 1)); done
[ "$last" -ge 0 ] || die "the receiver got no request"
raw=$(stat -c %s "$recv/req-$last.pb")
wire=$(awk '$1 == "wire-bytes" { print $2 }' "$recv/req-$last.meta")
pp=$(median <"$BENCH_TMP/pp") ot=$(median <"$BENCH_TMP/ot")
say "window of $n stacks: pprof $pp s $psize B; otlp encode+gzip+send $ot s ($(ratio "$ot" "$pp") x the pprof's), request $raw B raw, $wire B gzip ($(ratio "$wire" "$psize") x the pprof)"

# The export's one-time start (libcurl, OpenSSL, its thread) on a stream without windows,
# counted in a cgroup (microseconds, where time(1) counts 10 ms ticks).
export BENCH_IN="$BENCH_TMP/empty.stream"
: >"$BENCH_TMP/st" && : >"$BENCH_TMP/sd"
r=1
while [ $r -le "$RUNS" ]; do
	rm -rf "$BENCH_TMP/o" && mkdir -p "$BENCH_TMP/o"
	# shellcheck disable=SC2016 # expanded by the inner sh
	a=$(cg_run "$BENCH_TMP/log" sh -c 'exec "$0" "$@" <"$BENCH_IN"' "$RP_BIN/emit-otlp" \
		--output "$BENCH_TMP/o") || die "emit-otlp failed"
	# shellcheck disable=SC2016
	b=$(cg_run "$BENCH_TMP/log" sh -c 'exec "$0" "$@" <"$BENCH_IN"' "$RP_BIN/emit-otlp" \
		--output "$BENCH_TMP/o" --endpoint "$url") || die "emit-otlp failed"
	echo "$b" >>"$BENCH_TMP/st"
	fsub "$b" "$a" >>"$BENCH_TMP/sd"
	r=$((r + 1))
done
# The whole stage on a stream without windows: its process, libcurl's and OpenSSL's
# loading and start, its thread: paid once per run, whatever the windows.
start=$(median <"$BENCH_TMP/st")
# What the endpoint adds to that start (libcurl, OpenSSL, the thread), taken off below.
delta=$(awk '{ printf "%.6f\n", $1 * 1000 }' "$BENCH_TMP/sd" | median)
say "the export's start: $start s once per run (emit-otlp on a stream without windows), $delta ms of it for the export itself"

# The pipeline with and without the export, whole replays counted in a cgroup: a 10 s
# recording of cpu_split at 499 Hz (as root), in 1 s windows, else the saved streams.
streams="$ROOT/tests/golden/dwarf.stream $ROOT/tests/golden/fp.stream"
if [ "$(id -u)" -eq 0 ] && [ -x "$RP_WORKLOADS/cpu_split" ]; then
	"$RP_WORKLOADS/cpu_split" 14 3>&- &
	w=$!
	mkdir -p "$BENCH_TMP/rec" && chmod 777 "$BENCH_TMP/rec"
	"$RP_DRIVER" record --pid "$w" --duration 10s --window 1s --cpu-frequency 499 \
		--output "$BENCH_TMP/rec" --save-stream "$BENCH_TMP/live.stream" >/dev/null 3>&- ||
		die "cannot record cpu_split"
	kill "$w" 2>/dev/null || true
	cp -r "$BENCH_TMP/rec/.modules" "$BENCH_TMP/.modules"
	streams="$BENCH_TMP/live.stream $streams"
fi
# pace: $BENCH_IN on stdout 2 KiB every 10 ms, as a live pipeline hands windows on over
# time, so that the queue keeps up and every window is sent.
pace() {
	python3 -c 'import os, sys, time
d = open(os.environ["BENCH_IN"], "rb").read()
for i in range(0, len(d), 2048):
    sys.stdout.buffer.write(d[i:i + 2048]); sys.stdout.flush(); time.sleep(0.01)'
}

# stage_cpu OUT ARGS...: CPU seconds of emit-otlp ARGS on $BENCH_IN, paced, in a cgroup
# (the pacer outside it).
stage_cpu() {
	rm -rf "$1" && mkdir -p "$1"
	pace | cg_run "$BENCH_TMP/log" "$RP_BIN/emit-otlp" --output "$@" || die "emit-otlp failed"
}

for s in $streams; do
	# The stream's windows as aggregate writes them (100 ms: many windows), so that the
	# export can be counted alone: emit-otlp with the endpoint less emit-otlp without, less
	# its start, per window sent, against the pipeline's CPU per window (the replay without
	# export, every stage, in a cgroup).
	mods=$(dirname "$s")/.modules
	"$RP_BIN/unwind" --module-cache "$mods" <"$s" | "$RP_BIN/aggregate" --window 100ms \
		>"$BENCH_TMP/agg.stream" || die "cannot aggregate $s"
	export BENCH_IN="$BENCH_TMP/agg.stream"
	: >"$BENCH_TMP/a" && : >"$BENCH_TMP/b"
	r=1
	while [ $r -le "$RUNS" ]; do
		rm -rf "$BENCH_TMP/r" && mkdir -p "$BENCH_TMP/r" && chmod 777 "$BENCH_TMP/r"
		p=$(cg_run "$BENCH_TMP/log" "$RP_DRIVER" replay --input "$s" --window 100ms \
			--output "$BENCH_TMP/r") || die "replay failed"
		w=0
		for f in "$BENCH_TMP/r"/diagnostics-*; do w=$((w + 1)); done
		awk -v p="$p" -v w="$w" 'BEGIN { printf "%.6f\n", p * 1000 / w }' >>"$BENCH_TMP/a"
		n0=0
		for f in "$recv"/req-*.pb; do [ -e "$f" ] && n0=$((n0 + 1)); done
		off=$(stage_cpu "$BENCH_TMP/o") on=$(stage_cpu "$BENCH_TMP/o" --endpoint "$url")
		n1=0
		for f in "$recv"/req-*.pb; do [ -e "$f" ] && n1=$((n1 + 1)); done
		awk -v a="$off" -v b="$on" -v s="$delta" -v n=$((n1 - n0)) \
			'BEGIN { printf "%.6f\n", ((b - a) * 1000 - s) / n }' \
			>>"$BENCH_TMP/b"
		r=$((r + 1))
	done
	a=$(median <"$BENCH_TMP/a") b=$(median <"$BENCH_TMP/b")
	say "$(basename "$s") in 100 ms windows ($w): pipeline $a ms a window, export $b ms a window sent: $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f%%", b * 100 / a }') (goal < 10%)"
done

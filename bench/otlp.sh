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
#  2. the export path's CPU per window against the pipeline's: `rustprofile.sh replay` of
#     the saved DWARF and frame-pointer streams of tests/golden with and without
#     --otlp-endpoint, every stage counted in a cgroup; the goal is an extra below 10% of
#     the pipeline (replay has no collect, so the share of a live run is lower still).
#
#   otlp: window of 65536 stacks: pprof 0.210 s 1234567 B; otlp encode+gzip+send 0.190 s,
#         request 4567890 B raw, 1345678 B gzip (1.09 x the pprof)
#   otlp: dwarf replay: pipeline 1.234 s, with export 1.250 s: +1.3% (goal < 10%)
set -eu
. "$(dirname "$0")/common.sh"
bench_init otlp
n=${OTLP_STACKS:-65536}
RUNS=${RUNS:-5}
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
: >"$BENCH_TMP/st"
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
	r=$((r + 1))
done
# The whole stage on a stream without windows: its process, libcurl's and OpenSSL's
# loading and start, its thread: paid once per run, whatever the windows.
start=$(median <"$BENCH_TMP/st")
say "the export's start: $start s once per run (emit-otlp on a stream without windows)"

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
for s in $streams; do
	: >"$BENCH_TMP/a" && : >"$BENCH_TMP/b"
	r=1
	while [ $r -le "$RUNS" ]; do
		rm -rf "$BENCH_TMP/r" && mkdir -p "$BENCH_TMP/r" && chmod 777 "$BENCH_TMP/r"
		cg_run "$BENCH_TMP/log" "$RP_DRIVER" replay --input "$s" \
			--output "$BENCH_TMP/r" >>"$BENCH_TMP/a" || die "replay failed"
		rm -rf "$BENCH_TMP/r" && mkdir -p "$BENCH_TMP/r" && chmod 777 "$BENCH_TMP/r"
		cg_run "$BENCH_TMP/log" "$RP_DRIVER" replay --input "$s" \
			--output "$BENCH_TMP/r" --otlp-endpoint "$url" >>"$BENCH_TMP/b" ||
			die "replay with export failed"
		r=$((r + 1))
	done
	a=$(median <"$BENCH_TMP/a") b=$(median <"$BENCH_TMP/b")
	w=$(ls "$BENCH_TMP/r"/diagnostics-* | wc -l)
	say "$(basename "$s") replay ($w windows): pipeline $a s, with export $b s: $(awk -v a="$a" -v b="$b" -v s="$start" -v w="$w" 'BEGIN { printf "%+.1f%% in all, %+.1f%% per window without the start (%.4f s a window; goal < 10%%)", (b - a) * 100 / a, (b - a - s) * 100 / a, (b - a - s) / w }')"
done

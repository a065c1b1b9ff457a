#!/bin/sh
# USAGE: [RP_BIN=.output/bin] [RP_WORKLOADS=.output/workloads] sh bench/run.sh
#
# Runs every benchmark present, in order: overhead.sh (target slowdown), cost.sh (profiler
# CPU per recorded second), startup.sh (the fixed CPU of a recording), symbolize.sh
# (symbolization speed), svg.sh, firefox.sh (a 65,536-sample Firefox window), import.sh
# (perf.data import against perf script and perf report), unwind_dwarf.sh (DWARF unwinding
# of saved 8 s and 30 s streams against perf script), offcpu.sh (off-CPU collector against
# offcputime), otlp.sh (the OTLP export's encoding and CPU per window), host.sh (record --host
# against perf record -a -g at 99 Hz).  A failing
# benchmark does not stop the others; the exit status is non-zero if any failed.  `make
# bench` calls this with RP_BIN, RP_WORKLOADS and RP_BENCH_BIN set (the drivers
# bench/*_driver.c are built by `make`).  Run as root.  The goals each checks are in
# README.md, "Benchmarks".
#
#   bench: overhead.sh
#   ...
#   bench: 9 run, 0 failed
# shellcheck disable=SC2086 # word lists (flags, fields) are split on purpose
set -u
dir=$(cd "$(dirname "$0")" && pwd)
ran=0
bad=""
for b in overhead cost startup symbolize svg firefox import unwind_dwarf offcpu heap otlp host; do
	[ -f "$dir/$b.sh" ] || continue
	echo "bench: $b.sh"
	ran=$((ran + 1))
	sh "$dir/$b.sh" || bad="$bad $b.sh"
done
set -- $bad
echo "bench: $ran run, $# failed${bad:+:$bad}"
[ $# -eq 0 ]

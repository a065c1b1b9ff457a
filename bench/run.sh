#!/bin/sh
# USAGE: [RP_BIN=.output/bin] [RP_WORKLOADS=.output/workloads] sh bench/run.sh
#
# Runs every benchmark present, in order: overhead.sh (target slowdown), cost.sh (profiler
# CPU), symbolize.sh (symbolization speed), svg.sh, firefox.sh (a 65,536-sample Firefox
# window), import.sh (perf.data import against
# perf script and perf report), offcpu.sh (off-CPU collector against offcputime).  A failing
# benchmark does not stop the others; the exit status is non-zero if any failed.  `make bench`
# calls this with RP_BIN and RP_WORKLOADS set.  Run as root.
#
#   bench: overhead.sh
#   ...
#   bench: 3 run, 0 failed
# shellcheck disable=SC2086 # word lists (flags, fields) are split on purpose
set -u
dir=$(cd "$(dirname "$0")" && pwd)
ran=0
bad=""
for b in overhead cost symbolize svg firefox import unwind_dwarf offcpu; do
	[ -f "$dir/$b.sh" ] || continue
	echo "bench: $b.sh"
	ran=$((ran + 1))
	sh "$dir/$b.sh" || bad="$bad $b.sh"
done
set -- $bad
echo "bench: $ran run, $# failed${bad:+:$bad}"
[ $# -eq 0 ]

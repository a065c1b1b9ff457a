#!/bin/sh
# USAGE: sh workloads/three_workers.sh [-s N] PROGRAM [ARGS...]
#
# A shell script whose work happens in its descendants: starts PROGRAM ARGS three times in
# the background, prints "worker PID" for each (the launch tests look for these pids in the
# profile), waits for all three and exits 0 when all three did.  With -s N the script itself
# also counts to N in shell arithmetic first, so the launched process has CPU time of its own.
#
#   $ sh workloads/three_workers.sh .output/workloads/fixedjob 50
#   worker 4711
#   worker 4712
#   worker 4713
set -eu
spin=0
if [ "${1:-}" = -s ]; then
	[ $# -ge 2 ] || { echo "three_workers.sh: -s needs a count" >&2; exit 2; }
	spin=$2
	shift 2
fi
[ $# -ge 1 ] || { echo "usage: three_workers.sh [-s N] PROGRAM [ARGS...]" >&2; exit 2; }
pids=
for i in 1 2 3; do
	"$@" >/dev/null &
	echo "worker $!"
	pids="$pids $!"
done
i=0
while [ "$i" -lt "$spin" ]; do
	i=$((i + 1))
done
for p in $pids; do
	wait "$p"
done

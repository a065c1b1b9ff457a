#!/bin/bash
# USAGE (root, at the top of the tree, after make all workloads):
#   bash tests/golden/record.sh && bash tests/golden/replay.sh "$(mktemp -d)" >tests/golden/SHA256SUMS
#
# Records the three saved streams of tests/golden.bats, 2 s each in 1 s windows, and the
# module copies they need: fp.stream (cpu_split, --unwind fp, 199 Hz), dwarf.stream
# (deep_nofp, --unwind dwarf, 49 Hz), offcpu.stream (offcpu_pipe half, --profiles
# cpu,off-cpu, --unwind fp, 99 Hz).  .modules keeps only .build-id: what the windows of the
# three recordings refer to, as commit's retention left it.  A new recording has other
# samples, so its digests are made anew, as above.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$top/tests/golden
wl=${RP_WORKLOADS:-$top/.output/workloads}
rp=${RP_BIN:-$top/.output/bin}/rustprofile.sh
work=$(mktemp -d)
trap 'rm -rf -- "$work"' EXIT

# one NAME WORKLOAD ARGS -- RECORD OPTIONS
one() {
	local name=$1 w=$2 args=() p
	shift 2
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	"$wl/$w" "${args[@]}" 3>&- &
	p=$!
	sleep 0.5
	"$rp" record --pid "$p" --duration 2s --window 1s "$@" --output "$work/$name" \
		--save-stream "$dir/$name.stream" >/dev/null
	kill "$p"
	wait "$p" || true
	cp -r "$work/$name/.modules/.build-id/." "$dir/.modules/.build-id/"
}

rm -rf "$dir/.modules" "$dir"/*.stream
mkdir -p "$dir/.modules/.build-id"
one fp cpu_split 30 -- --unwind fp --cpu-frequency 199
one dwarf deep_nofp 30 -- --unwind dwarf --cpu-frequency 49
one offcpu offcpu_pipe 30 half -- --profiles cpu,off-cpu --unwind fp --cpu-frequency 99
chmod -R a+rX,go-w "$dir"

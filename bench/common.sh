# shellcheck shell=sh
# Sourced by the benchmark scripts (POSIX sh): locations, clocks and medians.
#
#   . "$(dirname "$0")/common.sh"
#   bench_init overhead          # sets ROOT, RP_BIN, RP_WORKLOADS, RP_BENCH_BIN, RP_DRIVER,
#                                # BENCH_TMP
#   t0=$(now_s); ...; t1=$(now_s); elapsed=$(fsub "$t1" "$t0")
#   printf '%s\n' 3.1 2.9 3.0 | median      -> 3.0

# bench_init NAME: NAME prefixes every message; a temp dir is made and removed at exit.
bench_init() {
	BENCH=$1
	ROOT=$(cd "$(dirname "$0")/.." && pwd)
	RP_BIN=${RP_BIN:-$ROOT/.output/bin}
	RP_WORKLOADS=${RP_WORKLOADS:-$ROOT/.output/workloads}
	# The benchmark drivers (bench/*_driver.c), built by `make` beside bin/.
	RP_BENCH_BIN=${RP_BENCH_BIN:-$(dirname "$RP_BIN")/bench}
	RP_DRIVER=$RP_BIN/rustprofile.sh
	BENCH_TMP=$(mktemp -d "${TMPDIR:-/tmp}/rp-bench-$BENCH.XXXXXX")
	# rustprofile's unprivileged stages (nobody, or the sudo caller) write profiles below it.
	chmod 755 "$BENCH_TMP"
	BENCH_PIDS=""
	trap 'bench_cleanup' EXIT
	trap 'exit 130' INT TERM
}

bench_cleanup() {
	for p in $BENCH_PIDS; do
		kill "$p" 2>/dev/null || true
	done
	rm -rf "$BENCH_TMP"
}

say() { printf '%s: %s\n' "$BENCH" "$*"; }
die() { say "$*" >&2; exit 1; }

# bench_runs DEFAULT: RUNS from the environment (DEFAULT when unset), a positive integer.
bench_runs() {
	RUNS=${RUNS:-$1}
	case $RUNS in '' | *[!0-9]* | 0) die "RUNS must be a positive integer, not '$RUNS'" ;; esac
}

# need_workload NAME: the path of a built workload, or exits saying how to build it.
need_workload() {
	[ -x "$RP_WORKLOADS/$1" ] || die "workload '$RP_WORKLOADS/$1' missing: run 'make workloads'"
	printf '%s\n' "$RP_WORKLOADS/$1"
}

have_driver() { [ -x "$RP_DRIVER" ]; }

# need_bench_driver NAME: the path of a built benchmark driver, or exits saying how to build it.
need_bench_driver() {
	[ -x "$RP_BENCH_BIN/$1" ] || die "benchmark driver '$RP_BENCH_BIN/$1' missing: run 'make'"
	printf '%s\n' "$RP_BENCH_BIN/$1"
}

now_s() { date +%s.%N; }

fsub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f\n", a - b }'; }

# run_interleaved: RUNS rounds of one run_variant VARIANT ROUND (the caller's) for each of
# $VARIANTS in turn, so every variant sees the same drift of a shared machine.  Non-zero when
# a run failed.
run_interleaved() {
	rc=0
	i=1
	while [ "$i" -le "$RUNS" ]; do
		for v in $VARIANTS; do
			run_variant "$v" "$i" || rc=1
		done
		i=$((i + 1))
	done
	return $rc
}

# cg_root: the cgroup v2 tree (/sys/fs/cgroup itself, or the hybrid layout's unified/ beside
# v1), or nothing.
cg_root() {
	for d in /sys/fs/cgroup /sys/fs/cgroup/unified; do
		if [ -f "$d/cgroup.procs" ] && [ -f "$d/cgroup.controllers" ]; then
			echo "$d"
			return
		fi
	done
}

# cg_run LOG CMD...: runs CMD in a fresh cgroup v2 group, which counts every process it
# starts, waited for or not, stdout and stderr to LOG.out and LOG.err; prints the group's
# CPU seconds (user + system).  Non-zero when CMD failed or no group could be made.
cg_run() {
	log=$1
	shift
	root=$(cg_root)
	[ -n "$root" ] || { say "no writable cgroup v2 tree" >&2; return 1; }
	g=$root/rp-bench-$BENCH-$$-$(date +%s%N)
	mkdir "$g" || return 1
	# The inner sh joins the group, then becomes CMD.
	sh -c 'echo $$ >"$1/cgroup.procs" || exit 125; shift; exec "$@"' sh "$g" "$@" \
		>"$log.out" 2>"$log.err"
	rc=$?
	usec=$(awk '$1 == "usage_usec" { print $2 }' "$g/cpu.stat")
	rmdir "$g" 2>/dev/null || say "cgroup '$g' still busy: left in place" >&2
	[ $rc -eq 0 ] || { say "failed (exit $rc): $(tail -n 1 "$log.err")" >&2; return 1; }
	awk -v u="$usec" 'BEGIN { printf "%.6f\n", u / 1e6 }'
}

# ratio A B: A/B with three decimals, or "n/a" when either is missing or B is zero.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a == "" || b == "" || a == "n/a" || b == "n/a" || b + 0 == 0) print "n/a"
		else printf "%.3f\n", a / b }'
}

# median: reads one number a line, prints the median ("n/a" for no input).
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "n/a"; exit }
		if (NR % 2) printf "%.3f\n", v[(NR + 1) / 2]
		else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

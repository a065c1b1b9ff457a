# Shared helpers for the BATS suite (bats 1.8.2 on Debian 12).
bats_require_minimum_version 1.5.0
bats_load_library bats-support
bats_load_library bats-assert

ROOT=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
RP_BIN=${RP_BIN:-$ROOT/.output/bin}
RP_WORKLOADS=${RP_WORKLOADS:-$ROOT/.output/workloads}
RP="$RP_BIN/rustprofile.sh"
export RP_BIN
# Each test its own debug cache (docs/debug-cache.md): none reads what another one kept.
export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/xdg-cache

# The unprivileged stages must reach the test's files: bats makes its temp dirs 0700.
open_tmpdirs() {
	chmod a+rx "$BATS_RUN_TMPDIR" "$BATS_TEST_TMPDIR" 2>/dev/null || true
	chmod a+rx "$(dirname "$BATS_TEST_TMPDIR")" 2>/dev/null || true
	chmod a+rx "$(dirname "$(dirname "$BATS_TEST_TMPDIR")")" 2>/dev/null || true
}

require_root() {
	[ "$(id -u)" -eq 0 ] || skip "needs root for perf events"
}

# go tool pprof with a private cache, so it runs as root without touching $HOME.
pprof() {
	HOME=$BATS_TEST_TMPDIR GOCACHE=$BATS_TEST_TMPDIR/gocache go tool pprof "$@" 2>/dev/null
}

# cum_share FUNC FILE: cumulative CPU share (percent, no sign) of a function in a profile.
cum_share() {
	pprof -top -cum -nodecount=1000 -sample_index=cpu "$2" |
		awk -v f="$1" '$6 == f || ($6" "$7) == f { sub("%", "", $5); print $5; found=1; exit }
			END { if (!found) print 0 }'
}

# kernel_at_least MAJOR MINOR: the running kernel is Linux MAJOR.MINOR or newer.
kernel_at_least() {
	local r maj min
	r=$(uname -r)
	maj=${r%%.*}
	min=${r#*.}
	min=${min%%[!0-9]*}
	[ "$maj" -gt "$1" ] || { [ "$maj" -eq "$1" ] && [ "${min:-0}" -ge "$2" ]; }
}

# within A B TOL: |A - B| <= TOL, on decimals.
within() {
	awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'
}

# start_workload NAME ARGS...: starts a bundled workload in the background; sets $wpid.
start_workload() {
	local name=$1
	shift
	"$RP_WORKLOADS/$name" "$@" 3>&- &
	wpid=$!
}

stop_workload() {
	[ -z "${wpid:-}" ] || { kill "$wpid" 2>/dev/null; wait "$wpid" 2>/dev/null; } || true
}

# The files of one kind in an output dir, oldest window first.
outputs() {
	ls "$1" | grep -E "^$2-[0-9a-f]{16}-[0-9]{6}-[0-9]+\.$3\$" | sort || true
}

# truth FILE KEY: the last value a workload printed for KEY ("KEY N" lines).
truth() {
	awk -v k="$2" '$1 == k { v = $2 } END { print v + 0 }' "$1"
}

# near A B PERCENT: A within PERCENT% of B (B > 0).
near() {
	awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d
		exit !(b > 0 && d <= b * p / 100) }'
}

#!/bin/bash
# USAGE: RP_BIN=.output/bin RP_WORKLOADS=.output/workloads bash tests/soak.sh   (make soak)
#
# The churn soak: `launch` of a command that starts 100 short-lived children a second
# (workloads/forkchurn, each child a new image) for SOAK_SECONDS (1800), sampled at
# SOAK_HZ (49, the default of record and launch) with SOAK_WINDOW windows (10s), and every
# stage's VmRSS read every SOAK_EVERY seconds (10).  After the first minute, while the
# windows and the symbol tables settle, every stage must stay flat: no sample may exceed
# the largest RSS of the stage's second minute by more than SOAK_SLACK_KB (2048) KB.  What
# a stage keeps for all processes alike (the kernel's locations and functions the samples
# reach, a module's DWARF units) still grows a little as rare paths come in, more the higher
# SOAK_HZ (docs/churn.md); what it kept for each process would be megabytes a minute.
# Prints one line per sample and a verdict per stage; exits 1 when a stage grew.  Needs
# root and a cgroup v2 hierarchy.  SOAK_SECONDS=150 tries it briefly.
#
#   $ SOAK_SECONDS=150 make soak
#   soak: 150 s, 100 children/s, 49 Hz, window 10s, RSS every 10 s
#   t=10 children=900 collect=14980 unwind=23124 aggregate=1620 emit-pprof=2676 commit=1800
#   ...
#   soak: unwind flat: 23512 KB in the second minute, at most 23540 KB after it
set -eu

bin=${RP_BIN:?set RP_BIN to the directory of the stages}
wl=${RP_WORKLOADS:?set RP_WORKLOADS to the directory of the workloads}
seconds=${SOAK_SECONDS:-1800}
every=${SOAK_EVERY:-10}
slack=${SOAK_SLACK_KB:-2048}
window=${SOAK_WINDOW:-10s}
hz=${SOAK_HZ:-49}
rate=100
[ "$(id -u)" -eq 0 ] || { echo "soak: needs root (perf events)" >&2; exit 1; }
[ "$seconds" -ge 130 ] || { echo "soak: SOAK_SECONDS must be at least 130" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/rp-soak.XXXXXX")
chmod 755 "$work"
mkdir "$work/out"
chown nobody: "$work/out"
driver=
cleanup() {
	[ -z "$driver" ] || kill -INT "$driver" 2>/dev/null || true
	[ -z "$driver" ] || wait "$driver" 2>/dev/null || true
	rm -rf -- "$work"
}
trap cleanup EXIT

echo "soak: $seconds s, $rate children/s, $hz Hz, window $window, RSS every $every s"
# The command ends by itself after about SOAK_SECONDS, which ends the recording.
"$bin/rustprofile.sh" launch --unwind fp --duration 0 --window "$window" \
	--cpu-frequency "$hz" --output "$work/out" \
	-- "$wl/forkchurn" "$rate" $((rate * seconds)) "$work/progress" \
	>"$work/log" 2>&1 &
driver=$!

declare -A base=() peak=()
start=$(date +%s)
next=$((start + every))
while kill -0 "$driver" 2>/dev/null; do
	now=$(date +%s)
	if [ "$now" -lt "$next" ]; then
		sleep 1
		continue
	fi
	next=$((next + every))
	t=$((now - start))
	line="t=$t children=$(cat "$work/progress" 2>/dev/null || echo 0)"
	for p in $(pgrep -P "$driver"); do
		name=$(cat "/proc/$p/comm" 2>/dev/null) || continue
		kb=$(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status" 2>/dev/null) || continue
		[ -n "$kb" ] || continue
		line="$line $name=$kb"
		if [ "$t" -ge 60 ] && [ "$t" -lt 120 ]; then
			[ "${base[$name]:-0}" -ge "$kb" ] || base[$name]=$kb
		elif [ "$t" -ge 120 ]; then
			[ "${peak[$name]:-0}" -ge "$kb" ] || peak[$name]=$kb
		fi
	done
	echo "$line"
done
set +e
wait "$driver"
rc=$?
set -e
driver=
[ "$rc" -eq 0 ] || { echo "soak: the run failed (exit status $rc):" >&2; cat "$work/log" >&2; exit 1; }
grep '^children ' "$work/log" || true
status=0
for name in "${!base[@]}"; do
	b=${base[$name]} p=${peak[$name]:-${base[$name]}}
	if [ "$p" -le $((b + slack)) ]; then
		echo "soak: $name flat: $b KB in the second minute, at most $p KB after it"
	else
		echo "soak: $name grew: $b KB in the second minute, $p KB after it" >&2
		status=1
	fi
done
[ "${#base[@]}" -gt 0 ] || { echo "soak: no stage was measured" >&2; exit 1; }
exit $status

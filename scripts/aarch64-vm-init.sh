#!/bin/sh
# The init (PID 1) of the aarch64 VM of scripts/aarch64-vm.sh, installed as /rp/init in its
# initramfs: mounts what the profiler uses, runs the live cases below with the cross-built
# stages (make install in /usr/local) and the workloads in /rp/workloads, prints one line a
# case and the output directories (pprof and diagnostics files, no module cache) as a
# base64 tar between two marker lines on the console, and powers the machine off.
#
#   rp-case: launch-fp ok 41 s
#   rp-case: record-pid FAIL 12 s (exit 1)
#   rp-cases: 4 passed, 1 failed
export PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t tmpfs tmp /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
# As systemd does at boot: until cgroup.subtree_control of the root is first written, the
# kernel gives new cgroups no perf_event state (an implicit v2 controller), and a cgroup
# perf event on launch's cgroup fails with ENOENT.
echo +pids >/sys/fs/cgroup/cgroup.subtree_control
W=/rp/workloads O=/rp/out L=/rp/log
mkdir -p "$O" "$L"
chmod 755 /rp "$O"
pass=0 fail=0

# case NAME CMD...: runs CMD, its output in $L/NAME.log, and says how it went
case_() {
	name=$1
	shift
	t0=$(date +%s)
	"$@" >"$L/$name.log" 2>&1
	rc=$?
	t=$(($(date +%s) - t0))
	if [ $rc -eq 0 ]; then
		pass=$((pass + 1))
		echo "rp-case: $name ok $t s"
	else
		fail=$((fail + 1))
		echo "rp-case: $name FAIL $t s (exit $rc)"
		tail -n 5 "$L/$name.log" | sed 's/^/rp-log: /'
	fi
}

# record_pid OUT: record a running cpu_split for 6 s, frame pointers
record_pid() {
	"$W/cpu_split" 20 &
	p=$!
	sleep 1
	rustprofile record --pid "$p" --duration 6s --window 3s --unwind fp \
		--cpu-frequency 99 --output "$1"
	rc=$?
	kill "$p"
	wait "$p"
	return $rc
}

echo "rp-kernel: $(uname -srm)"
echo "rp-cgroups: v2 controllers: $(cat /sys/fs/cgroup/cgroup.controllers);" \
	"compiled: $(awk 'NR > 1 { printf "%s ", $1 }' /proc/cgroups)"
case_ check rustprofile check --pid 1
case_ launch-fp rustprofile launch --duration 6s --window 3s --unwind fp --cpu-frequency 99 \
	--output "$O/launch-fp" -- "$W/cpu_split" 6
case_ launch-dwarf rustprofile launch --duration 6s --window 6s --unwind dwarf \
	--cpu-frequency 99 --output "$O/launch-dwarf" -- "$W/deep_nofp" 6
case_ record-pid record_pid "$O/record-pid"
case_ launch-offcpu rustprofile launch --duration 6s --window 6s --unwind fp \
	--profiles cpu,off-cpu --cpu-frequency 99 --output "$O/launch-offcpu" -- "$W/cpu_split" 6
echo "rp-cases: $pass passed, $fail failed"
echo "=====BEGIN rp-out====="
tar czf - -C /rp --exclude=.modules out log | base64
echo "=====END rp-out====="
sync
echo o >/proc/sysrq-trigger
sleep 10

#!/usr/bin/env bats
# record --host (every process of the machine, sampled by CPU), --cpuid (the CPUs sampled,
# for CPU samples and off-CPU switch-outs) and the CPU event source (cycles, or the CPU
# clock without a PMU; --require-hardware-pmu), read back with go tool pprof and jq.

load helper

setup() {
	require_root
	open_tmpdirs
	out=$BATS_TEST_TMPDIR/out
	w1='' w2=''
}

teardown() {
	stop_workload
	for p in $w1 $w2; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
}

# samples_of PROFILE PID THREAD: the samples of PID whose thread is called THREAD.
samples_of() {
	pprof -raw "$1" | awk -v pid="$2" -v name="$3" '
		/^ +[0-9]+ +[0-9]+:/ { n = $1 }
		/thread.name:/ { t = $0 }
		/process.pid:/ { if (index($0, "process.pid:[" pid " pid]") && index(t, "[" name "]"))
					 s += n }
		END { print s + 0 }'
}

# total PROFILE: every sample of the profile.
total() {
	pprof -raw "$1" | awk '/^ +[0-9]+ +[0-9]+:/ { s += $1 } END { print s + 0 }'
}

@test "host: two unrelated workloads under their own pids and thread names" {
	"$RP_WORKLOADS/cpu_split" 12 3>&- & w1=$!
	"$RP_WORKLOADS/busy2" 12 3>&- & w2=$!
	sleep 0.3
	run "$RP" record --host --duration 3s --cpu-frequency 99 --output "$out"
	assert_success
	cpu=$(ls "$out"/cpu-*.pb.gz)
	a=$(samples_of "$cpu" "$w1" rp-worker)
	b=$(samples_of "$cpu" "$w2" rp-busy-1)
	c=$(samples_of "$cpu" "$w2" rp-busy-2)
	echo "cpu_split $a, busy2 $b + $c of $(total "$cpu")"
	[ "$a" -ge 20 ]
	[ "$b" -ge 20 ]
	[ "$c" -ge 20 ]
	pprof -traces "$cpu" | grep -q hot_a
	pprof -traces "$cpu" | grep -q busy_spin
	d=$(ls "$out"/diagnostics-*.json)
	[ "$(jq -r .target.kind "$d")" = host ]
	[ "$(jq -r .scope.effective "$d")" = host ]
	[ "$(jq -r .pid "$d")" = null ]
	[ "$(jq -r .requested_profiles[0] "$d")" = cpu ]
}

@test "host: one line for what it cannot do" {
	run "$RP" record --host --pid 1 --duration 1s --output "$out"
	assert_failure
	assert_output --partial "exactly one target selector"
	run "$RP_BIN/collect" --host --profiles cpu,heap --duration 1s
	assert_failure
	assert_output "collect: --host records the cpu profile only (--profiles cpu)"
	# Without --profiles, collect's default drops heap, which has no target here.
	run -0 --separate-stderr "$RP_BIN/collect" --host --duration 1s
	[ "${#output}" -gt 0 ]
	run "$RP" replay --host --input /dev/null
	assert_failure
	[ "${#lines[@]}" -eq 1 ]
}

@test "cpuid: a workload pinned to another CPU is not sampled, one pinned to a listed CPU all" {
	taskset -c 1 "$RP_WORKLOADS/cpu_split" 12 3>&- & w1=$!
	sleep 0.3
	# cpu_samples CPU: the samples of a recording of the workload on CPU alone.
	cpu_samples() {
		"$RP" record --pid "$w1" --cpuid "$1" --unwind fp --profiles cpu --duration 2s \
			--output "$out/$1" >/dev/null || return 1
		[ "$(jq -r .cpu.cpuid "$out/$1"/diagnostics-*.json)" = "$1" ] || return 1
		jq -r .cpu.samples "$out/$1"/diagnostics-*.json
	}
	n0=$(cpu_samples 0)
	n1=$(cpu_samples 1)
	echo "cpu 0: $n0, cpu 1: $n1"
	[ "$n0" -eq 0 ]
	# 49 Hz for 2 s of one busy thread: about 98 samples.
	[ "$n1" -ge 50 ]
}

@test "cpuid: host-wide, only the listed CPU's samples" {
	taskset -c 1 "$RP_WORKLOADS/busy2" 12 3>&- & w1=$!
	taskset -c 0 "$RP_WORKLOADS/cpu_split" 12 3>&- & w2=$!
	sleep 0.3
	run "$RP" record --host --cpuid 0 --cpu-frequency 99 --duration 2s --output "$out"
	assert_success
	cpu=$(ls "$out"/cpu-*.pb.gz)
	[ "$(samples_of "$cpu" "$w1" rp-busy-1)" -eq 0 ]
	[ "$(samples_of "$cpu" "$w1" rp-busy-2)" -eq 0 ]
	[ "$(samples_of "$cpu" "$w2" rp-worker)" -ge 50 ]
}

@test "cpuid: off-CPU intervals that start with a switch-out on a listed CPU" {
	taskset -c 1 "$RP_WORKLOADS/offcpu_pipe" 12 half 3>&- & w1=$!
	sleep 0.3
	run "$RP" record --pid "$w1" --cpuid 0 --profiles off-cpu --duration 2s --output "$out/0"
	assert_success
	[ "$(jq -r .off_cpu.intervals "$out"/0/diagnostics-*.json)" -eq 0 ]
	run "$RP" record --pid "$w1" --cpuid 1 --profiles off-cpu --duration 2s --output "$out/1"
	assert_success
	# The reader blocks about 50 times a second, the writer as often.
	[ "$(jq -r .off_cpu.intervals "$out"/1/diagnostics-*.json)" -ge 50 ]
}

@test "cpuid: bad lists are one-line errors" {
	for bad in '' 3-1 abc 1,,2 '1,' 4095 0-9999; do
		run "$RP" record --pid $$ --cpuid "$bad" --duration 1s --output "$out"
		assert_failure
		echo "'$bad': $output"
		[ "${#lines[@]}" -eq 1 ]
		[[ "$output" == *--cpuid* ]]
	done
	run "$RP" record --pid $$ --cpuid 3-1 --duration 1s --output "$out"
	assert_output --partial "reversed range 3-1"
	run "$RP" record --pid $$ --cpuid 4095 --duration 1s --output "$out"
	assert_output --partial "CPU 4095 is not present or not online"
	[ ! -e "$out" ]
}

@test "event: without a PMU the CPU clock, said in diagnostics; --require-hardware-pmu fails" {
	perf stat -e cycles -x, true 2>&1 | grep -q 'not supported\|<not counted>' ||
		skip "this machine has a hardware PMU"
	"$RP_WORKLOADS/cpu_split" 12 3>&- & w1=$!
	sleep 0.3
	run "$RP" record --pid "$w1" --profiles cpu --duration 1s --output "$out"
	assert_success
	d=$(ls "$out"/diagnostics-*.json)
	[ "$(jq -r .cpu.event "$d")" = cpu-clock ]
	jq -r .cpu.event_reason "$d" | grep -q "no hardware PMU"
	run "$RP" record --pid "$w1" --profiles cpu --duration 1s --require-hardware-pmu \
		--output "$out/hw"
	assert_failure
	[ "${#lines[@]}" -eq 1 ]
	assert_output --partial "--require-hardware-pmu: the hardware cycles event cannot be opened"
	[ ! -e "$out/hw" ]
}

#!/usr/bin/env bats
# record --docker-container against a real Docker engine the tests start (tests/docker.bash):
# the container's processes are profiled with its identity, a restart is followed into a new
# window of the same session, a removed container ends the recording, and the Engine API's
# refusals and the control-plane bounds are one line each (manual: "record", "Docker and
# Kubernetes deployment", "Target lifecycle, signals, and partial mode").

load helper
load docker

setup_file() {
	docker_start
}

teardown_file() {
	docker_stop
}

setup() {
	require_root
	open_tmpdirs
	out=$BATS_TEST_TMPDIR/out
}

teardown() {
	"$DOCKER_CLI" rm -f "rp-$BATS_TEST_NUMBER" >/dev/null 2>&1 || true
}

# Two processes of the container burn CPU in hot_a/hot_b/hot_c.
start_two() {
	run_container "rp-$BATS_TEST_NUMBER" "$RP_IMAGE" /bin/sh -c \
		'/bin/cpu_split 120 & /bin/cpu_split 120 & wait'
	sleep 0.5
}

# Every sample of the profile carries the container's ID and name.
labels_everywhere() {
	local f=$1 id=$2 name=$3 n m
	n=$(pprof -raw "$f" | grep -c 'process.pid:')
	m=$(pprof -raw "$f" | grep -c "container.id:\[$id\] container.name:\[$name\]")
	[ "$n" -gt 0 ] && [ "$n" -eq "$m" ] || { echo "samples $n, labelled $m"; return 1; }
}

@test "docker: record by name profiles every process of the container, with its identity" {
	start_two
	run -0 "$RP" record --profiles cpu --docker-container "rp-$BATS_TEST_NUMBER" --duration 3s --window 3s \
		--output "$out"
	cpu=$out/$(outputs "$out" cpu pb.gz | head -n 1)
	labels_everywhere "$cpu" "$cid" "rp-$BATS_TEST_NUMBER"
	# Both workers: two process.pid values, each a process of the container.
	pids=$(pprof -raw "$cpu" | grep -o 'process.pid:\[[0-9]*' | grep -o '[0-9]*$' | sort -u)
	inside=$(container_pids "rp-$BATS_TEST_NUMBER")
	n=0
	for p in $pids; do grep -qx "$p" <<<"$inside" && n=$((n + 1)); done
	[ "$n" -ge 2 ] || { echo "pids $pids, container: $inside"; false; }
	[ "$(cum_share hot_a "$cpu" | cut -d. -f1)" -gt 20 ]
	d=$out/$(outputs "$out" diagnostics json | head -n 1)
	run -0 jq -e --arg id "$cid" --arg n "rp-$BATS_TEST_NUMBER" '.target.kind == "docker" and
		.target.container.id == $id and .target.container.name == $n and
		.target.container.runtime == "docker" and (.target.container.started_at | length > 0)
		and .scope.effective == "cgroup" and (.scope.cgroup | contains($id))' "$d"
}

@test "docker: record by ID (full and short) gives the same identity" {
	start_two
	run -0 "$RP" record --profiles cpu --docker-container "$cid" --duration 2s --window 2s --output "$out"
	labels_everywhere "$out/$(outputs "$out" cpu pb.gz | head -n 1)" "$cid" "rp-$BATS_TEST_NUMBER"
	run -0 "$RP" record --profiles cpu --docker-container "${cid:0:12}" --duration 1s --window 1s \
		--output "$out/short"
	d=$out/short/$(outputs "$out/short" diagnostics json | head -n 1)
	run -0 jq -e --arg id "$cid" '.target.container.id == $id' "$d"
}

@test "docker: off-CPU time of every process of the container, with its identity" {
	# The shell waits for each sleep it starts: both block, in two processes.
	run_container "rp-$BATS_TEST_NUMBER" "$RP_IMAGE" /bin/sh -c 'while :; do sleep 0.05; done'
	sleep 0.5
	run -0 "$RP" record --docker-container "rp-$BATS_TEST_NUMBER" --profiles cpu,off-cpu \
		--unwind fp --duration 3s --window 3s --output "$out"
	off=$out/$(outputs "$out" off-cpu pb.gz | head -n 1)
	labels_everywhere "$off" "$cid" "rp-$BATS_TEST_NUMBER"
	[ "$(pprof -raw "$off" | grep -o 'process.pid:\[[0-9]*' | sort -u | wc -l)" -ge 3 ]
	d=$out/$(outputs "$out" diagnostics json | head -n 1)
	run -0 jq -e '.off_cpu.intervals > 20 and .scope.effective == "cgroup"' "$d"
}

@test "docker: a restart mid-recording is followed into a new window of the same session" {
	start_two
	old=$("$DOCKER_CLI" inspect -f '{{.State.Pid}} {{.State.StartedAt}}' "rp-$BATS_TEST_NUMBER")
	"$RP" record --profiles cpu --docker-container "rp-$BATS_TEST_NUMBER" --duration 9s --window 1s \
		--output "$out" >"$BATS_TEST_TMPDIR/rec.log" 2>&1 &
	rec=$!
	sleep 3
	"$DOCKER_CLI" restart -t 0 "rp-$BATS_TEST_NUMBER" >/dev/null
	new=$("$DOCKER_CLI" inspect -f '{{.State.Pid}} {{.State.StartedAt}}' "rp-$BATS_TEST_NUMBER")
	wait "$rec" || { cat "$BATS_TEST_TMPDIR/rec.log"; false; }
	[ "${old%% *}" != "${new%% *}" ]
	grep -q 'cannot' "$BATS_TEST_TMPDIR/rec.log" && { cat "$BATS_TEST_TMPDIR/rec.log"; false; }
	# One session: every file has the same session id.
	[ "$(ls "$out" | cut -d- -f2 | sort -u | wc -l)" -eq 1 ]
	cat "$out"/diagnostics-*.json | jq -s -e --arg op "${old%% *}" --arg np "${new%% *}" \
		--arg ns "${new#* }" '
		(map(select(.target.pid == ($op | tonumber))) | length > 0) and
		(map(select(.target.pid == ($np | tonumber) and .target.container.started_at == $ns
			and .cpu.samples > 0)) | length > 0) and
		(map(.warnings[]) | any(test("restarted: pid " + $np)))'
	# The new processes' samples carry the identity too.
	last=$out/$(outputs "$out" cpu pb.gz | tail -n 2 | head -n 1)
	labels_everywhere "$last" "$cid" "rp-$BATS_TEST_NUMBER"
	now=$(container_pids "rp-$BATS_TEST_NUMBER")
	pprof -raw "$last" | grep -o 'process.pid:\[[0-9]*' | grep -o '[0-9]*$' | sort -u |
		grep -qxF "$now"
}

@test "docker: after a restart off-CPU goes on, its eBPF program bound to the new cgroup" {
	run_container "rp-$BATS_TEST_NUMBER" "$RP_IMAGE" /bin/sh -c 'while :; do sleep 0.05; done'
	sleep 0.5
	"$RP" record --docker-container "rp-$BATS_TEST_NUMBER" --profiles cpu,off-cpu --unwind fp \
		--duration 6s --window 1s --output "$out" >"$BATS_TEST_TMPDIR/rec.log" 2>&1 &
	rec=$!
	sleep 2.5
	"$DOCKER_CLI" restart -t 0 "rp-$BATS_TEST_NUMBER" >/dev/null
	new=$("$DOCKER_CLI" inspect -f '{{.State.Pid}}' "rp-$BATS_TEST_NUMBER")
	wait "$rec" || { cat "$BATS_TEST_TMPDIR/rec.log"; false; }
	# Windows of the new process (after the one it started in) have their intervals.
	cat "$out"/diagnostics-*.json | jq -s -e --argjson p "$new" '
		[.[] | select(.target.pid == $p)] | .[1:] | length >= 2 and
		all(.[]; .off_cpu.intervals > 5)'
}

@test "docker: rm -f ends an open-ended recording cleanly" {
	start_two
	"$RP" record --profiles cpu --docker-container "rp-$BATS_TEST_NUMBER" --duration 0 --window 1s \
		--output "$out" >"$BATS_TEST_TMPDIR/rec.log" 2>&1 &
	rec=$!
	sleep 3
	"$DOCKER_CLI" rm -f "rp-$BATS_TEST_NUMBER" >/dev/null
	for ((i = 0; i < 100; i++)); do kill -0 "$rec" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$rec" 2>/dev/null && { kill "$rec"; false; }
	wait "$rec" || { cat "$BATS_TEST_TMPDIR/rec.log"; false; }
	last=$out/$(outputs "$out" diagnostics json | tail -n 1)
	run -0 jq -e '.final_window == true and (.warnings | any(test("was removed")))' "$last"
}

@test "docker: an unknown name fails with the API's reason in one line" {
	run -1 "$RP" record --profiles cpu --docker-container no-such-rp --duration 1s --output "$out"
	assert_output "collect: docker: No such container: no-such-rp"
	[ ! -e "$out" ] || [ -z "$(ls "$out")" ]
}

@test "docker: a stopped container is refused, and a name that is no name" {
	run_container "rp-$BATS_TEST_NUMBER" "$RP_IMAGE" /bin/true
	"$DOCKER_CLI" wait "rp-$BATS_TEST_NUMBER" >/dev/null
	run -1 "$RP" record --profiles cpu --docker-container "rp-$BATS_TEST_NUMBER" --duration 1s --output "$out"
	assert_output --regexp "^collect: docker container rp-$BATS_TEST_NUMBER \([0-9a-f]{12}\) is not running \(status exited\)\$"
	run -1 "$RP" record --profiles cpu --docker-container '../x' --duration 1s --output "$out"
	assert_output "collect: --docker-container '../x' is not a container ID or name"
}

@test "docker: no engine at the socket is one line naming the socket" {
	DOCKER_HOST=unix://$BATS_TEST_TMPDIR/none.sock run -1 "$RP" record --profiles cpu \
		--docker-container x --duration 1s --output "$out"
	assert_output --regexp "^collect: cannot reach the Docker Engine API at $BATS_TEST_TMPDIR/none.sock: .+\$"
	[ "${#lines[@]}" -eq 1 ]
}

@test "docker: heap follows the container's init process (scope mixed_process_and_cgroup) with the default profiles" {
	[ -x "$RP_WORKLOADS/heap_mix_musl" ] || skip "heap_mix_musl was not built (musl-tools)"
	run_container "rp-$BATS_TEST_NUMBER" "$RP_IMAGE" /bin/heap_mix 120
	sleep 0.5
	# The probes attach when the unwind mode is known: no calibration (docs/heap.md).
	run -0 "$RP" record --docker-container "rp-$BATS_TEST_NUMBER" --duration 3s --window 3s \
		--unwind fp --alloc-interval 16KiB --output "$out"
	heap=$out/$(outputs "$out" heap pb.gz | tail -n 1)
	[ -f "$heap" ]
	run -0 pprof -raw "$heap"
	assert_output --partial "inuse_space/bytes"
	labels_everywhere "$heap" "$cid" "rp-$BATS_TEST_NUMBER"
	d=$out/$(outputs "$out" diagnostics json | tail -n 1)
	run -0 jq -e '.heap.scope == "mixed_process_and_cgroup" and .scope.effective == "cgroup" and
		.allocator_probe.detected == "system" and .allocator_probe.complete and
		(.allocator_probe.module | endswith("heap_mix")) and .heap.alloc_objects > 0' "$d"
}

@test "docker: check --docker-container resolves the container, its init process and cgroup; the JSON validates" {
	start_two
	j=$BATS_TEST_TMPDIR/check.json
	run -0 "$RP" check --docker-container "rp-$BATS_TEST_NUMBER" --json
	printf '%s\n' "$output" >"$j"
	run -0 /usr/bin/python3 "$BATS_TEST_DIRNAME/tools/validate_json.py" \
		"$BATS_TEST_DIRNAME/../docs/check-report.schema.json" "$j"
	init=$("$DOCKER_CLI" inspect -f '{{.State.Pid}}' "rp-$BATS_TEST_NUMBER")
	run -0 jq -e --arg id "$cid" --argjson pid "$init" --arg n "rp-$BATS_TEST_NUMBER" '
		.target.selector == "docker-container" and .target.pid == $pid and
		.target.container.id == $id and .target.container.name == $n and
		.target.container.kind == "docker" and
		.capabilities.container_cgroup.status == "ok" and
		(.capabilities.container_cgroup.detail | contains($id)) and
		.target.executable == "/bin/busybox" and .errors == []' "$j"
	# An unknown name: the API's reason in errors, exit 1, still a valid report.
	run -1 "$RP" check --docker-container no-such-rp --json
	printf '%s\n' "$output" >"$j"
	run -0 /usr/bin/python3 "$BATS_TEST_DIRNAME/tools/validate_json.py" \
		"$BATS_TEST_DIRNAME/../docs/check-report.schema.json" "$j"
	run -0 jq -r '.errors[0], .target.pid, .capabilities.container_cgroup.status' "$j"
	assert_output --partial "No such container: no-such-rp"
	assert_line null
	assert_line unavailable
}

@test "docker: the OTLP export names the container in its resource attributes" {
	start_two
	local recv=$BATS_TEST_TMPDIR/recv dec=$BATS_TEST_TMPDIR/otlpdecode
	${CC:-cc} -std=c17 -D_GNU_SOURCE -I"$RP_BIN/../gen" ${LDFLAGS:-} -o "$dec" \
		"$BATS_TEST_DIRNAME/tools/otlpdecode.c" "$RP_BIN/../gen/libotlppb.a" -lprotobuf-c
	mkdir -p "$recv"
	python3 "$BATS_TEST_DIRNAME/tools/otlprecv.py" "$recv" &
	local rpid=$!
	for _ in $(seq 100); do [ -s "$recv/port" ] && break; sleep 0.05; done
	run -0 "$RP" record --profiles cpu --docker-container "rp-$BATS_TEST_NUMBER" --duration 2s \
		--window 2s --output "$out" --otlp-endpoint "http://127.0.0.1:$(cat "$recv/port")"
	kill "$rpid"
	wait "$rpid" 2>/dev/null || true
	run -0 "$dec" <"$recv/req-0.pb"
	assert_line "resource container.id=$cid"
	assert_line "resource container.name=rp-$BATS_TEST_NUMBER"
	assert_line "resource container.runtime=docker"
	assert_line "resource rustprofile.target.kind=docker"
}

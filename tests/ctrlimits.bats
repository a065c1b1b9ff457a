#!/usr/bin/env bats
# The control-plane bounds of container targets on the Docker side (manual: "Docker inspect
# and Kubernetes Pod API control-plane requests use a 5-second timeout and reject responses
# larger than 4 MiB"), against a stand-in of the Engine API on a unix socket
# (tests/tools/enginestub.py); tests/k8s.bats has the same for the Pod API.

load helper

setup() {
	require_root
	open_tmpdirs
	out=$BATS_TEST_TMPDIR/out
	sock=$(mktemp -u /tmp/rp-engine.XXXXXX)
}

teardown() {
	[ -z "${stub:-}" ] || { kill "$stub" 2>/dev/null; wait "$stub" 2>/dev/null; } || true
	rm -f "$sock"
}

# engine MODE: the stand-in listening on $sock.
engine() {
	rm -f "$sock"
	python3 "$ROOT/tests/tools/enginestub.py" "$sock" "$1" 3>&- &
	stub=$!
	for ((i = 0; i < 100; i++)); do [ -S "$sock" ] && return 0; sleep 0.05; done
	return 1
}

@test "docker bounds: an inspect answer over 4 MiB is refused, with or without its length" {
	engine big
	DOCKER_HOST=unix://$sock run -1 "$RP" record --docker-container web --duration 1s --output "$out"
	assert_output "collect: docker inspect web: the answer is larger than 4194304 bytes (the limit of control-plane responses)"
	kill "$stub"; wait "$stub" 2>/dev/null || true
	engine chunked
	DOCKER_HOST=unix://$sock run -1 "$RP" record --docker-container web --duration 1s --output "$out"
	assert_output "collect: docker inspect web: the answer is larger than 4194304 bytes (the limit of control-plane responses)"
}

@test "docker bounds: an engine that does not answer within 5 s is given up on" {
	engine slow
	t0=$(date +%s%N)
	DOCKER_HOST=unix://$sock run -1 "$RP" record --docker-container web --duration 1s --output "$out"
	t1=$(date +%s%N)
	assert_output "collect: docker inspect web: no complete answer within 5000 ms (the control-plane timeout)"
	ms=$(((t1 - t0) / 1000000))
	[ "$ms" -ge 5000 ]
	[ "$ms" -lt 6900 ]
}

@test "docker bounds: an answer that is not JSON, and a DOCKER_HOST that is not a socket" {
	engine notjson
	DOCKER_HOST=unix://$sock run -1 "$RP" record --docker-container web --duration 1s --output "$out"
	assert_output --regexp '^collect: docker inspect web: not JSON: .+$'
	DOCKER_HOST=tcp://127.0.0.1:2375 run -1 "$RP" record --docker-container web --duration 1s \
		--output "$out"
	assert_output "collect: DOCKER_HOST 'tcp://127.0.0.1:2375': only a unix:// socket is supported"
}

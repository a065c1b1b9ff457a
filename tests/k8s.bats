#!/usr/bin/env bats
# record --k8s-pod against a loopback TLS stand-in of the Kubernetes Pod API
# (tests/tools/podapi.py, a CA made here by openssl) whose Pod objects name real Docker
# containers (tests/docker.bash) placed in the kubelet's cgroupfs layout for a BestEffort
# Pod (kubepods/besteffort/pod<uid>/<id>): the same-node check, the container selection
# rules, restart following and the control-plane bounds (manual: "Docker and Kubernetes
# deployment", "Target lifecycle, signals, and partial mode").

load helper
load docker

setup_file() {
	docker_start
	command -v openssl >/dev/null || skip "openssl is needed for the test CA"
	API=$DK/api
	SA=$DK/sa
	mkdir -p "$API/pods" "$SA"
	# The test CA and the API server's certificate for 127.0.0.1.
	openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=rp-test-ca \
		-keyout "$API/ca.key" -out "$SA/ca.crt" 2>/dev/null
	openssl req -newkey rsa:2048 -nodes -subj /CN=kubernetes -keyout "$API/server.key" \
		-out "$API/server.csr" 2>/dev/null
	printf 'subjectAltName=IP:127.0.0.1\n' >"$API/san.ext"
	openssl x509 -req -in "$API/server.csr" -CA "$SA/ca.crt" -CAkey "$API/ca.key" \
		-CAcreateserial -days 1 -extfile "$API/san.ext" -out "$API/server.crt" 2>/dev/null
	echo "rp-test-token-$RANDOM" >"$SA/token"
	cp "$SA/token" "$API/token"
	python3 "$ROOT/tests/tools/podapi.py" "$API" "$API/port" 3>&- &
	echo $! >"$API/pid"
	for ((i = 0; i < 100; i++)); do [ -s "$API/port" ] && break; sleep 0.1; done
	[ -s "$API/port" ]
	export API SA
}

teardown_file() {
	local u d uids
	uids=$(cat "${API:-/nonexistent}/uids" 2>/dev/null || true)
	[ -z "${API:-}" ] || kill "$(cat "$API/pid")" 2>/dev/null || true
	docker_stop
	# The Pod cgroups docker made for the tests' Pods (only those), in every hierarchy; the
	# parents go only when empty.
	for u in $uids; do
		for d in /sys/fs/cgroup/kubepods/besteffort/pod"$u" /sys/fs/cgroup/*/kubepods/besteffort/pod"$u"; do
			[ -d "$d" ] && rmdir "$d" 2>/dev/null || true
		done
	done
	for d in /sys/fs/cgroup/kubepods/besteffort /sys/fs/cgroup/*/kubepods/besteffort \
		/sys/fs/cgroup/kubepods /sys/fs/cgroup/*/kubepods; do
		[ -d "$d" ] && rmdir "$d" 2>/dev/null || true
	done
}

setup() {
	require_root
	open_tmpdirs
	out=$BATS_TEST_TMPDIR/out
	rm -f "$API/mode"
	export KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT
	KUBERNETES_SERVICE_PORT=$(cat "$API/port")
	export RUSTPROFILE_K8S_SERVICEACCOUNT_DIR=$SA NODE_NAME=node-a
	uid=$(cat /proc/sys/kernel/random/uuid)
}

teardown() {
	local ids
	ids=$("$DOCKER_CLI" ps -aq --filter "label=rp-test=$BATS_TEST_NUMBER" 2>/dev/null || true)
	[ -z "$ids" ] || "$DOCKER_CLI" rm -f $ids >/dev/null 2>&1 || true
}

# pod_container POD_UID NAME: a container of that Pod as the kubelet would place it;
# prints its ID.
pod_container() {
	echo "$1" >>"$API/uids"
	"$DOCKER_CLI" run -d --network none --label "rp-test=$BATS_TEST_NUMBER" \
		--cgroup-parent "/kubepods/besteffort/pod$1" --name "k8s_$2_$BATS_TEST_NUMBER_$RANDOM" \
		"$RP_IMAGE" /bin/sh -c '/bin/cpu_split 120 & /bin/cpu_split 120 & wait'
}

# pod_write NS NAME UID NODE APP:ID...: the Pod object the API answers with, shaped like the
# API server's: an init container that has completed, the application containers (an empty
# ID: still creating), and an ephemeral debug container targeting the first one.
pod_write() {
	local ns=$1 name=$2 puid=$3 node=$4 apps='[]' st='[]' a n c s
	shift 4
	for a in "$@"; do
		n=${a%%:*} c=${a#*:}
		apps=$(jq -c --arg n "$n" '. + [{name: $n, image: "rptest:1",
			resources: {}, imagePullPolicy: "IfNotPresent"}]' <<<"$apps")
		if [ -n "$c" ]; then
			s=$("$DOCKER_CLI" inspect -f '{{.State.StartedAt}}' "$c" | cut -c1-19)Z
			st=$(jq -c --arg n "$n" --arg c "docker://$c" --arg s "$s" '. + [{name: $n,
				ready: true, started: true, restartCount: 0, image: "rptest:1",
				imageID: "docker-pullable://rptest@sha256:00", containerID: $c,
				state: {running: {startedAt: $s}}, lastState: {}}]' <<<"$st")
		else
			st=$(jq -c --arg n "$n" '. + [{name: $n, ready: false, started: false,
				restartCount: 0, image: "rptest:1", imageID: "",
				state: {waiting: {reason: "ContainerCreating"}}, lastState: {}}]' <<<"$st")
		fi
	done
	mkdir -p "$API/pods/$ns"
	jq -n --arg ns "$ns" --arg name "$name" --arg uid "$puid" --arg node "$node" \
		--argjson apps "$apps" --argjson st "$st" '{apiVersion: "v1", kind: "Pod",
		metadata: {name: $name, namespace: $ns, uid: $uid, resourceVersion: "4711",
			labels: {app: $name}, creationTimestamp: "2026-12-02T05:00:00Z"},
		spec: {nodeName: $node, restartPolicy: "Always",
			initContainers: [{name: "init-db", image: "rptest:1"}],
			containers: $apps,
			ephemeralContainers: [{name: "debugger", image: "rptest:1",
				targetContainerName: $apps[0].name}]},
		status: {phase: "Running", qosClass: "BestEffort", hostIP: "10.0.0.1",
			podIP: "10.1.0.7",
			initContainerStatuses: [{name: "init-db", ready: true, restartCount: 0,
				image: "rptest:1", imageID: "",
				containerID: "docker://0000000000000000000000000000000000000000000000000000000000000000",
				state: {terminated: {exitCode: 0, reason: "Completed",
					startedAt: "2026-12-02T05:00:01Z", finishedAt: "2026-12-02T05:00:02Z"}}}],
			containerStatuses: $st,
			ephemeralContainerStatuses: [{name: "debugger", ready: false, restartCount: 0,
				image: "rptest:1", imageID: "", state: {waiting: {reason: "ContainerCreating"}}}]}}' \
		>"$API/pods/$ns/$name.json.tmp"
	mv "$API/pods/$ns/$name.json.tmp" "$API/pods/$ns/$name.json"
}

@test "k8s: a Pod's container on this node is profiled with its Kubernetes identity" {
	c=$(pod_container "$uid" app)
	pod_write shop web "$uid" node-a "app:$c"
	run -0 "$RP" record --profiles cpu --k8s-pod shop/web --duration 3s --window 3s --output "$out"
	cpu=$out/$(outputs "$out" cpu pb.gz | head -n 1)
	n=$(pprof -raw "$cpu" | grep -c 'process.pid:')
	m=$(pprof -raw "$cpu" | grep -c "container.id:\[$c\] k8s.container.name:\[app\] k8s.namespace.name:\[shop\] k8s.pod.name:\[web\] k8s.pod.uid:\[$uid\]")
	[ "$n" -gt 0 ] && [ "$n" -eq "$m" ] || { pprof -raw "$cpu" | head -20; false; }
	[ "$(cum_share hot_a "$cpu" | cut -d. -f1)" -gt 20 ]
	d=$out/$(outputs "$out" diagnostics json | head -n 1)
	run -0 jq -e --arg c "$c" --arg u "$uid" '.target.kind == "kubernetes" and
		.target.container.id == $c and .target.container.runtime == "docker" and
		.target.kubernetes == {namespace: "shop", pod: "web", pod_uid: $u, container: "app"}
		and (.scope.cgroup | endswith("/kubepods/besteffort/pod" + $u + "/" + $c))' "$d"
	# The API saw the service account's token: every request was answered.
	grep -q "GET /api/v1/namespaces/shop/pods/web" "$API/requests.log"
}

@test "k8s: check --k8s-pod resolves the Pod's container on this node; another node is an error" {
	c=$(pod_container "$uid" app)
	pod_write shop web "$uid" node-a "app:$c"
	j=$BATS_TEST_TMPDIR/check.json
	run -0 "$RP" check --k8s-pod shop/web --json
	printf '%s\n' "$output" >"$j"
	run -0 /usr/bin/python3 "$BATS_TEST_DIRNAME/tools/validate_json.py" \
		"$BATS_TEST_DIRNAME/../docs/check-report.schema.json" "$j"
	run -0 jq -e --arg c "$c" --arg u "$uid" '.target.selector == "k8s-pod" and
		.target.container == {kind: "kubernetes", runtime: "docker", id: $c, name: "app",
			status: .target.container.status, started_at: .target.container.started_at,
			cgroup: .target.container.cgroup, namespace: "shop", pod: "web",
			pod_uid: $u, node: "node-a"} and
		.capabilities.container_cgroup.status == "ok" and .errors == []' "$j"
	pod_write shop far "$uid" node-b "app:$c"
	run -1 "$RP" check --k8s-pod shop/far --json
	printf '%s\n' "$output" >"$j"
	run -0 jq -e '(.errors | length) == 1 and .target.pid == null' "$j"
}

@test "k8s: a Pod on another node is rejected" {
	c=$(pod_container "$uid" app)
	pod_write shop far "$uid" node-b "app:$c"
	run -1 "$RP" record --profiles cpu --k8s-pod shop/far --duration 1s --output "$out"
	assert_output "collect: Pod shop/far runs on node node-b, not on this node (node-a): cross-node targets are rejected"
	NODE_NAME='' run -1 "$RP" record --profiles cpu --k8s-pod shop/far --duration 1s --output "$out"
	assert_output --partial "NODE_NAME is not set"
}

@test "k8s: a multi-container Pod needs --container; init and ephemeral containers are never selected" {
	c1=$(pod_container "$uid" app)
	c2=$(pod_container "$uid" sidecar)
	pod_write shop two "$uid" node-a "app:$c1" "sidecar:$c2"
	run -1 "$RP" record --profiles cpu --k8s-pod shop/two --duration 1s --output "$out"
	assert_output "collect: kubernetes: Pod shop/two has 2 application containers (app, sidecar): pass --container NAME"
	run -1 "$RP" record --profiles cpu --k8s-pod shop/two --container init-db --duration 1s --output "$out"
	assert_output "collect: kubernetes: container 'init-db' of Pod shop/two is an init container: init and ephemeral containers are not selected"
	run -1 "$RP" record --profiles cpu --k8s-pod shop/two --container debugger --duration 1s --output "$out"
	assert_output "collect: kubernetes: container 'debugger' of Pod shop/two is an ephemeral container: init and ephemeral containers are not selected"
	run -1 "$RP" record --profiles cpu --k8s-pod shop/two --container nope --duration 1s --output "$out"
	assert_output "collect: kubernetes: Pod shop/two has no application container 'nope' (it has: app, sidecar)"
	run -1 "$RP" record --profiles cpu --pid 1 --container app --duration 1s --output "$out"
	assert_output "rustprofile: --container is only valid with --k8s-pod"
	run -0 "$RP" record --profiles cpu --k8s-pod shop/two --container sidecar --duration 2s --window 2s \
		--output "$out"
	d=$out/$(outputs "$out" diagnostics json | head -n 1)
	run -0 jq -e --arg c "$c2" '.target.container.id == $c and
		.target.kubernetes.container == "sidecar"' "$d"
}

@test "k8s: a restart of the same Pod UID is followed; a replaced Pod is not" {
	c1=$(pod_container "$uid" app)
	pod_write shop web "$uid" node-a "app:$c1"
	"$RP" record --profiles cpu --k8s-pod shop/web --duration 0 --window 1s --output "$out" \
		>"$BATS_TEST_TMPDIR/rec.log" 2>&1 &
	rec=$!
	sleep 3
	# The kubelet restarts the container: a new container ID in the same Pod.
	c2=$(pod_container "$uid" app)
	pod_write shop web "$uid" node-a "app:$c2"
	p2=$("$DOCKER_CLI" inspect -f '{{.State.Pid}}' "$c2")
	"$DOCKER_CLI" rm -f "$c1" >/dev/null
	sleep 3
	# The Pod is deleted and created again: a new UID, not followed.
	uid2=$(cat /proc/sys/kernel/random/uuid)
	c3=$(pod_container "$uid2" app)
	pod_write shop web "$uid2" node-a "app:$c3"
	"$DOCKER_CLI" rm -f "$c2" >/dev/null
	for ((i = 0; i < 100; i++)); do kill -0 "$rec" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$rec" 2>/dev/null && { kill "$rec"; cat "$BATS_TEST_TMPDIR/rec.log"; false; }
	wait "$rec" || { cat "$BATS_TEST_TMPDIR/rec.log"; false; }
	cat "$out"/diagnostics-*.json | jq -s -e --arg c1 "$c1" --arg c2 "$c2" --arg c3 "$c3" \
		--arg u "$uid" --argjson p2 "$p2" '
		all(.[]; .target.kubernetes.pod_uid == $u and .target.container.id != $c3) and
		any(.[]; .target.container.id == $c1 and .cpu.samples > 0) and
		any(.[]; .target.container.id == $c2 and .target.pid == $p2 and .cpu.samples > 0) and
		(last | .final_window and (.warnings | any(test("was replaced")))) and
		(map(.warnings[]) | any(test("restarted: pid " + ($p2 | tostring))))'
	# One session throughout.
	[ "$(ls "$out" | cut -d- -f2 | sort -u | wc -l)" -eq 1 ]
}

@test "k8s: a deleted Pod is refused with the API's reason; a wrong token too" {
	run -1 "$RP" record --profiles cpu --k8s-pod shop/gone --duration 1s --output "$out"
	assert_output 'collect: kubernetes: pods "gone" not found (HTTP status 404)'
	echo wrong >"$BATS_TEST_TMPDIR/token"
	cp "$SA/ca.crt" "$BATS_TEST_TMPDIR/ca.crt"
	RUSTPROFILE_K8S_SERVICEACCOUNT_DIR=$BATS_TEST_TMPDIR run -1 "$RP" record --profiles cpu \
		--k8s-pod shop/gone --duration 1s --output "$out"
	assert_output 'collect: kubernetes: Unauthorized (HTTP status 401)'
	KUBERNETES_SERVICE_HOST='' run -1 "$RP" record --profiles cpu --k8s-pod shop/gone --duration 1s --output "$out"
	assert_output "collect: --k8s-pod needs in-cluster execution: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set"
	run -1 "$RP" record --profiles cpu --k8s-pod 'shop/../x' --duration 1s --output "$out"
	assert_output "collect: --k8s-pod 'shop/../x' is not NAMESPACE/NAME"
}

@test "k8s: an answer larger than 4 MiB and one later than 5 s are refused, each in one line" {
	echo big >"$API/mode"
	run -1 "$RP" record --profiles cpu --k8s-pod shop/web --duration 1s --output "$out"
	assert_output "collect: kubernetes: GET pod shop/web: the answer is larger than 4194304 bytes (the limit of control-plane responses)"
	echo slow >"$API/mode"
	t0=$(date +%s%N)
	run -1 "$RP" record --profiles cpu --k8s-pod shop/web --duration 1s --output "$out"
	t1=$(date +%s%N)
	assert_output "collect: kubernetes: GET pod shop/web: no complete answer within 5000 ms (the control-plane timeout)"
	# Both collect --check (the driver's preflight) and nothing else waited: 5 s, not 7.
	[ $(((t1 - t0) / 1000000)) -lt 6900 ]
}

@test "k8s: the server's certificate is checked against the service account's CA" {
	openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=other -keyout /dev/null \
		-out "$BATS_TEST_TMPDIR/ca.crt" 2>/dev/null
	cp "$SA/token" "$BATS_TEST_TMPDIR/token"
	RUSTPROFILE_K8S_SERVICEACCOUNT_DIR=$BATS_TEST_TMPDIR run -1 "$RP" record --profiles cpu \
		--k8s-pod shop/web --duration 1s --output "$out"
	assert_output --regexp '^collect: kubernetes: GET pod shop/web: .*(certificate|SSL).*$'
	[ "${#lines[@]}" -eq 1 ]
}

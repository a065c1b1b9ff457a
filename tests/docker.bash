# A real Docker engine for tests/docker.bats and tests/k8s.bats: dockerd (Debian docker.io)
# with its data root, exec root, containerd and unix socket in a temporary directory, no
# bridge, no iptables; an image imported from a tarball made here (busybox-static and a
# static build of workloads/cpu_split), no registry.  docker_start skips, with the reason,
# only where no engine can run.

DOCKERD=${DOCKERD:-/usr/sbin/dockerd}
# The CLI of docker.io; another one earlier in PATH (/usr/local/bin) may not match the engine.
DOCKER_CLI=${DOCKER_CLI:-/usr/bin/docker}
RP_IMAGE=rptest:1

# docker_start: sets DK (the directory), DOCKER_HOST, and starts the engine; in setup_file.
docker_start() {
	[ "$(id -u)" -eq 0 ] || skip "needs root to run a Docker engine"
	[ -x "$DOCKERD" ] || skip "no Docker engine: $DOCKERD not found (Debian docker.io)"
	[ -x "$DOCKER_CLI" ] || skip "no Docker CLI: $DOCKER_CLI not found (Debian docker.io)"
	[ -x /bin/busybox ] && file_static /bin/busybox ||
		skip "no static busybox for the test image (Debian busybox-static)"
	# Unix socket paths are short (108 bytes): the engine lives under /tmp.
	DK=$(mktemp -d /tmp/rp-dk.XXXXXX)
	export DK DOCKER_HOST=unix://$DK/docker.sock
	mkdir -p "$DK/data" "$DK/exec"
	"$DOCKERD" --data-root "$DK/data" --exec-root "$DK/exec" -H "$DOCKER_HOST" \
		--pidfile "$DK/dockerd.pid" --iptables=false --ip6tables=false \
		--ip-forward=false --bridge=none --containerd-namespace "rptest-${DK##*.}" \
		--containerd-plugins-namespace "rptest-p-${DK##*.}" >"$DK/dockerd.log" 2>&1 3>&- &
	echo $! >"$DK/dockerd.bg"
	local i
	for ((i = 0; i < 150; i++)); do
		"$DOCKER_CLI" version >/dev/null 2>&1 && break
		kill -0 "$(cat "$DK/dockerd.bg")" 2>/dev/null || break
		sleep 0.2
	done
	if ! "$DOCKER_CLI" version >/dev/null 2>&1; then
		local why
		why=$(grep -E 'level=(error|fatal)' "$DK/dockerd.log" | tail -n 1)
		docker_stop
		skip "no Docker engine can run here: ${why:-dockerd did not answer within 30 s}"
	fi
	build_image
}

file_static() {
	! LC_ALL=C readelf -l "$1" 2>/dev/null | grep -q 'Requesting program interpreter'
}

# The image: busybox for the shell, cpu_split (hot_a, hot_b, hot_c) built static.
build_image() {
	local root=$DK/rootfs
	mkdir -p "$root/bin"
	cp /bin/busybox "$root/bin/busybox"
	for t in sh sleep true; do ln -s busybox "$root/bin/$t"; done
	cc -static -O1 -g -D_GNU_SOURCE -fno-omit-frame-pointer -pthread -I"$ROOT/workloads" \
		-o "$root/bin/cpu_split" "$ROOT/workloads/cpu_split.c" -lm
	# A statically linked (musl) allocator workload: heap follows the container's init.
	[ ! -x "$RP_WORKLOADS/heap_mix_musl" ] || cp "$RP_WORKLOADS/heap_mix_musl" "$root/bin/heap_mix"
	tar -C "$root" -cf "$DK/image.tar" .
	"$DOCKER_CLI" import "$DK/image.tar" "$RP_IMAGE" >/dev/null
}

# docker_stop: every container, then the engine and its mounts; in teardown_file.
docker_stop() {
	[ -n "${DK:-}" ] && [ -d "$DK" ] || return 0
	local ids pid
	ids=$("$DOCKER_CLI" ps -aq 2>/dev/null || true)
	[ -z "$ids" ] || "$DOCKER_CLI" rm -f $ids >/dev/null 2>&1 || true
	pid=$(cat "$DK/dockerd.bg" 2>/dev/null || true)
	if [ -n "$pid" ]; then
		kill -TERM "$pid" 2>/dev/null || true
		for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null || true
	fi
	# What the engine left mounted beneath its directories.
	grep -o " ${DK}[^ ]*" /proc/self/mounts | sort -r | while read -r m; do
		umount -l "$m" 2>/dev/null || true
	done
	rm -rf "$DK" 2>/dev/null || true
}

# run_container NAME ARGS...: docker run -d --network none; sets $cid (the full ID).
run_container() {
	local name=$1
	shift
	cid=$("$DOCKER_CLI" run -d --network none --name "$name" "$@")
}

# The pids of the processes of a container, as the engine sees them.
container_pids() {
	"$DOCKER_CLI" top "$1" -o pid | tail -n +2
}

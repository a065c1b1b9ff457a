#!/usr/bin/env bats
# The release image (Dockerfile) built by a real Docker engine the tests start
# (tests/docker.bash) from a Debian 12 base made here with debootstrap and `docker import`
# (no registry): it holds the stages, the driver and their libraries, the layout of
# `make install`, and `rustprofile check --pid 1` and a recording work inside it.

load helper
load docker

IMAGE=rustprofile:test
# The manual runs the image --privileged.  That asks for every capability, which fails where
# the engine itself lacks one (this machine's bounding set has no CAP_SYS_RESOURCE): the
# capabilities rustprofile uses are given by name instead, with seccomp unconfined as the
# DaemonSet has it (Debian's Docker 20.10 knows no CAP_PERFMON or CAP_BPF: CAP_SYS_ADMIN covers both).
PRIV=(--cap-add SYS_ADMIN --cap-add SYS_PTRACE
	--cap-add DAC_READ_SEARCH --cap-add IPC_LOCK --security-opt seccomp=unconfined
	--security-opt apparmor=unconfined --network none)

setup_file() {
	docker_start
	command -v debootstrap >/dev/null || skip "no debootstrap (Debian debootstrap) for the base"
	local base=$DK/base
	debootstrap --variant=minbase bookworm "$base" http://deb.debian.org/debian \
		>"$DK/debootstrap.log" 2>&1 ||
		skip "debootstrap cannot reach Debian's archive: $(tail -n 1 "$DK/debootstrap.log")"
	tar -C "$base" -c . | "$DOCKER_CLI" import - rp-debian:12 >/dev/null
	rm -rf "$base"
	# The build stage installs its compilers with apt: the host's network.
	"$DOCKER_CLI" build -q --network host --build-arg BASE=rp-debian:12 -t "$IMAGE" "$ROOT" \
		>"$DK/build.log" 2>&1 || { tail -n 30 "$DK/build.log" >&3; false; }
}

teardown_file() {
	docker_stop
}

setup() {
	require_root
	open_tmpdirs
}

@test "image: check --pid 1 inside the image reports without error; the JSON validates" {
	run -0 "$DOCKER_CLI" run --rm "${PRIV[@]}" "$IMAGE" check --pid 1 --json
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/check.json"
	run -0 /usr/bin/python3 "$BATS_TEST_DIRNAME/tools/validate_json.py" \
		"$BATS_TEST_DIRNAME/../docs/check-report.schema.json" "$BATS_TEST_TMPDIR/check.json"
	run -0 jq -e '.errors == [] and .target.executable == "/usr/libexec/rustprofile/check" and
		.capabilities.perf.status == "ok" and .capabilities.off_cpu_ebpf.status == "ok"' \
		"$BATS_TEST_TMPDIR/check.json"
}

@test "image: the runtime stage is make install's layout and the libraries, with no compiler" {
	local dest=$BATS_TEST_TMPDIR/dest
	run -0 make -C "$ROOT" -s install OUT="$(dirname "$RP_BIN")" PREFIX=/usr DESTDIR="$dest"
	want=$(cd "$dest" && find . \( -type f -o -type l \) | sed 's|^\.||' | sort)
	run -0 "$DOCKER_CLI" run --rm --network none --entrypoint /bin/sh "$IMAGE" -c \
		'for f in $(find /usr/libexec/rustprofile /usr/bin/rustprofile \
			/usr/share/man/man1/rustprofile.1 \
			/usr/share/bash-completion/completions/rustprofile); do
			[ -d "$f" ] || echo "$f"; done | sort
		 ! command -v cc && ! command -v clang && ! [ -e /usr/include/stdio.h ]'
	[ "$output" = "$want" ] || { diff <(echo "$want") <(echo "$output"); false; }
	# every stage starts: its libraries are there
	for s in collect unwind aggregate emit-pprof emit-otlp serve check commit; do
		run -0 "$DOCKER_CLI" run --rm --network none --entrypoint "/usr/libexec/rustprofile/$s" \
			"$IMAGE" --help
	done
}

@test "image: a recording from the image of a host process, as the manual runs it" {
	"$RP_WORKLOADS/cpu_split" 30 3>&- &
	local w=$!
	mkdir -p "$BATS_TEST_TMPDIR/profiles"
	run "$DOCKER_CLI" run --rm "${PRIV[@]}" --pid=host \
		--mount "type=bind,src=$BATS_TEST_TMPDIR/profiles,dst=/profiles" "$IMAGE" \
		record --pid "$w" --profiles cpu --duration 2s --window 2s --output /profiles
	kill "$w"
	wait "$w" 2>/dev/null || true
	assert_success
	cpu=$BATS_TEST_TMPDIR/profiles/$(outputs "$BATS_TEST_TMPDIR/profiles" cpu pb.gz | head -n 1)
	run -0 pprof -top "$cpu"
	assert_output --partial hot_a
}

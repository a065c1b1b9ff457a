#!/bin/sh
# USAGE: scripts/install-deps.sh            (as root, on Debian 12)
#
# Installs every Debian package that building, testing (make check, check-asan, fuzz) and
# benchmarking (make bench) need.  Idempotent: a package already installed is only reported,
# and `apt-get update` runs only when something is missing.
#
#   $ sudo scripts/install-deps.sh
#   install-deps: have build-essential
#   ...
#   install-deps: installing linux-perf bats
#   install-deps: done
#
# Exits non-zero with one line saying why when a package cannot be installed.
set -eu

# Why each one: compilers and headers for the stages (pkg-config libelf libdw zlib libcap-ng,
# -liberty); clang + libclang-rt-dev for check-asan and the libFuzzer targets; the workloads
# need g++, rustc and golang-go; libdeflate-dev (optional) speeds up reading compressed debug
# files; binutils/elfutils make the stripped and build-id workloads;
# bats* run tests/; linux-perf is Debian 12's name for perf (the peer in benchmarks);
# util-linux gives setpriv, procps gives ps/pgrep, time gives /usr/bin/time for bench/cost.sh;
# bpftool (vmlinux.h, skeletons) and libbpf-dev build the eBPF programs of bpf/ with clang, and
# libbpf-tools has offcputime, the off-CPU peer of tests/offcpu.bats and bench/offcpu.sh;
# and the shellcheck package keeps the shell scripts clean (tests/driver.bats);
# python3-jsonschema validates check's JSON against docs/check-report.schema.json;
# libyaml-dev reads the Kubernetes manifests in tests/deploy.bats (tests/tools/yamlpaths.c);
# libcurl4-openssl-dev and libjansson-dev let collect ask the Docker Engine API (unix socket)
# and the Kubernetes Pod API (TLS) for a container target and parse their JSON answers;
# docker.io is the real engine tests/docker.bats and tests/k8s.bats start (own data root and
# socket, no bridge), busybox-static the shell of the image they build, and openssl makes the
# test CA of the Pod API stand-in; musl-tools (musl-gcc) builds the statically linked heap
# workload whose allocator is in the executable (tests/heap.bats); bpfcc-tools (memleak) and
# heaptrack are the heap peers of bench/heap.sh; serve answers HTTP with libmicrohttpd-dev,
# disassembles for /asm/v1 with libcapstone-dev, names profiles by SHA-256 with nettle-dev,
# and unwind and serve fetch debug files from an explicit --debuginfod URL with
# libdebuginfod-dev (the debuginfod server is the test's peer); chromium renders serve's
# gallery page for tests/serve.bats (--headless --dump-dom); emit-otlp: protobuf-c-compiler
# (protoc-c generates C from proto/ at build time) and libprotobuf-c-dev (its runtime),
# libcurl4-openssl-dev for the HTTP(S) POST, the OpenSSL flavour so --otlp-ca (CURLOPT_CAINFO
# beside the system roots) and libssl-dev's RAND_bytes (profile ids) use one TLS library;
# protobuf-compiler gives `protoc --decode`, the independent reader of the requests in
# tests/otlp.bats; debootstrap makes the Debian 12 base tests/image.bats builds the
# Dockerfile's release image from; bash-builtins gives the driver mkdir, mkfifo and rm as
# loadable builtins (no process of their own at each start; without it the commands run).
PKGS="bash-builtins build-essential pkg-config clang llvm libclang-rt-dev libelf-dev libdw-dev
zlib1g-dev libiberty-dev libcap-ng-dev libzstd-dev libdeflate-dev elfutils binutils g++ rustc
golang-go bats bats-support bats-assert linux-perf util-linux procps python3 jq xxd debuginfod time
libxml2-utils bpftool libbpf-dev libbpf-tools shellcheck python3-jsonschema libyaml-dev
libcurl4-openssl-dev libjansson-dev docker.io busybox-static openssl musl-tools bpfcc-tools heaptrack
libmicrohttpd-dev libcapstone-dev libdebuginfod-dev nettle-dev chromium protobuf-c-compiler
libprotobuf-c-dev libssl-dev protobuf-compiler debootstrap"

# aarch64 (make check-aarch64, part of make check): the cross compiler, qemu-user and the
# arm64 -dev packages of the libraries the stages link, which need arm64 as a foreign dpkg
# architecture.
CROSS_PKGS="gcc-aarch64-linux-gnu qemu-user libelf-dev:arm64 libdw-dev:arm64 zlib1g-dev:arm64
libcap-ng-dev:arm64 libzstd-dev:arm64 libbpf-dev:arm64 libiberty-dev:arm64
libcurl4-openssl-dev:arm64 libjansson-dev:arm64 libmicrohttpd-dev:arm64 libcapstone-dev:arm64
libdebuginfod-dev:arm64 nettle-dev:arm64 libprotobuf-c-dev:arm64 libssl-dev:arm64"

say() { printf 'install-deps: %s\n' "$*"; }
die() { say "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root (apt-get install needs it)"
command -v apt-get >/dev/null 2>&1 || die "apt-get not found: this script targets Debian 12"

if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	say "dpkg --add-architecture arm64 (for the aarch64 cross build)"
	dpkg --add-architecture arm64 || die "dpkg --add-architecture arm64 failed"
fi
PKGS="$PKGS $CROSS_PKGS"

# With arm64 as a foreign architecture a name alone may match two packages: a name without
# an architecture means the native one (or, for an Architecture: all package, the only one).
native_arch=$(dpkg --print-architecture)
installed() {
	case $1 in
	*:*) q=$1 ;;
	*) q=$1:$native_arch ;;
	esac
	st=$(dpkg-query -W -f='${db:Status-Status}' "$q" 2>/dev/null) ||
		st=$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null) || st=''
	[ "$st" = installed ]
}

missing=""
for p in $PKGS; do
	if installed "$p"; then
		say "have $p"
	else
		missing="$missing $p"
	fi
done

if [ -z "$missing" ]; then
	say "done: nothing to install"
	exit 0
fi

export DEBIAN_FRONTEND=noninteractive
say "apt-get update (missing:$missing)"
apt-get update -qq >/dev/null || die "apt-get update failed"
for p in $missing; do
	cand=$(apt-cache policy "$p" 2>/dev/null | awk '/Candidate:/ { print $2 }')
	if [ -z "$cand" ] || [ "$cand" = "(none)" ]; then
		die "package '$p' has no installable candidate in the configured apt sources"
	fi
done
say "installing$missing"
# shellcheck disable=SC2086 # word splitting of the package list is wanted
apt-get install -y -qq --no-install-recommends $missing >/dev/null \
	|| die "apt-get install failed for:$missing"
for p in $missing; do
	installed "$p" || die "package '$p' still not installed after apt-get install"
done
say "done: installed$missing"

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
# shellcheck keeps the driver clean (tests/driver.bats).
# emit-otlp: protobuf-c-compiler (protoc-c generates C from proto/ at build time) and
# libprotobuf-c-dev (its runtime); libcurl4-openssl-dev for the HTTP(S) POST, the OpenSSL
# flavour so --otlp-ca (CURLOPT_CAINFO beside the system roots) and libssl-dev's RAND_bytes
# (profile ids) use one TLS library; protobuf-compiler gives `protoc --decode`, the
# independent reader of the requests in tests/otlp.bats; openssl makes its test CA.
PKGS="build-essential pkg-config clang llvm libclang-rt-dev libelf-dev libdw-dev zlib1g-dev
libiberty-dev libcap-ng-dev libzstd-dev libdeflate-dev elfutils binutils g++ rustc golang-go bats
bats-support bats-assert linux-perf util-linux procps python3 jq xxd debuginfod time libxml2-utils
bpftool libbpf-dev libbpf-tools shellcheck protobuf-c-compiler libprotobuf-c-dev
libcurl4-openssl-dev libssl-dev protobuf-compiler openssl"

say() { printf 'install-deps: %s\n' "$*"; }
die() { say "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root (apt-get install needs it)"
command -v apt-get >/dev/null 2>&1 || die "apt-get not found: this script targets Debian 12"

# One line per installed architecture (a multiarch system may hold amd64 and arm64 copies):
# installed when any line says so.
installed() {
	dpkg-query -W -f='${db:Status-Status}\n' "$1" 2>/dev/null | grep -qx installed
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

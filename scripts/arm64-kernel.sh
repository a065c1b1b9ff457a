#!/bin/sh
# USAGE: scripts/arm64-kernel.sh DIR
#
# Debian 12's arm64 kernel package (linux-image-cloud-arm64's current image), fetched from
# Debian's archive with apt-get download and unpacked into DIR (DIR/boot/vmlinuz-*), once:
# a DIR that holds a kernel already is left as it is.  Prints the kernel's path.  No arm64
# machine is needed; `dpkg --add-architecture arm64` must have been run (install-deps.sh).
# scripts/arm64-btf.sh cuts the BTF of the eBPF cross build out of it, and
# scripts/aarch64-vm.sh boots it under qemu-system-aarch64.
#
#   $ scripts/arm64-kernel.sh .output-aarch64/kernel
#   .output-aarch64/kernel/boot/vmlinuz-6.1.0-50-cloud-arm64
#
# Exits non-zero with one line when the package cannot be fetched or holds no kernel.
set -eu
dir=$1
die() { printf 'arm64-kernel: %s\n' "$*" >&2; exit 1; }

# kernel: the unpacked image, if any
kernel() {
	for f in "$dir"/boot/vmlinuz-*; do [ -f "$f" ] && echo "$f" && return 0; done
	return 1
}

kernel && exit 0
pkg=$(apt-cache depends linux-image-cloud-arm64:arm64 2>/dev/null |
	awk '/Depends: linux-image-[0-9]/ { sub(":arm64", "", $2); print $2; exit }')
[ -n "$pkg" ] || die "no linux-image-cloud-arm64 in the apt sources (dpkg --add-architecture arm64)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download -qq "$pkg:arm64" >/dev/null 2>&1) || die "cannot download $pkg:arm64"
mkdir -p "$dir"
dpkg-deb -x "$tmp"/*.deb "$dir"
kernel || die "$pkg has no /boot/vmlinuz"

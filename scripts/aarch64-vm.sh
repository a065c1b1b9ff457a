#!/bin/sh
# USAGE: scripts/aarch64-vm.sh AARCH64_OUT
#
# The live aarch64 tests (make check-aarch64-vm): boots Debian 12's arm64 kernel
# (scripts/arm64-kernel.sh) under qemu-system-aarch64 (TCG: no arm64 host needed) on an
# initramfs holding a Debian 12 arm64 root file system made by debootstrap, the stages
# cross-built into AARCH64_OUT (make install DESTDIR, done by make before this script) and
# two workloads cross-built here, and runs scripts/aarch64-vm-init.sh there as PID 1:
# check, launch and record with frame pointers, DWARF and off-CPU.  The VM's output
# directories come back over its console, and each case's pprof files are read here with
# `go tool pprof`, which must name the workload's hot functions.
#
#   $ sh scripts/aarch64-vm.sh .output-aarch64
#   aarch64-vm: Linux 6.1.0-57-cloud-arm64 aarch64
#   aarch64-vm: check ok 1 s
#   ...
#   check-aarch64-vm: 5 cases passed, 0 failed in the VM; 4 profiles named their workload, 0 did not; 52 s
#
# The root file system is made once, into AARCH64_OUT/vm/base.cpio.gz: debootstrap --foreign (no
# second stage: that would run arm64 maintainer scripts, which needs binfmt_misc on the
# host; the VM only needs the packages' files) and every downloaded package unpacked.
# A whole arm64 system under emulation (about a minute on two cores once the root file
# system is made, much more on a loaded host): not part of make check.
# VM_TIMEOUT (seconds, default 3600) bounds the run; VM_MIRROR is the Debian mirror.
set -eu
A=$1
V=$A/vm
MIRROR=${VM_MIRROR:-http://deb.debian.org/debian}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
say() { printf 'aarch64-vm: %s\n' "$*"; }
die() { say "$*" >&2; exit 1; }

for t in qemu-system-aarch64 debootstrap aarch64-linux-gnu-gcc cpio go; do
	command -v "$t" >/dev/null ||
		die "needs $t (qemu-system-arm, debootstrap, gcc-aarch64-linux-gnu, cpio, golang-go)"
done
[ -x "$V/stage/usr/local/bin/rustprofile" ] ||
	die "no aarch64 stages in $V/stage (make check-aarch64-vm installs them)"
start=$(date +%s)
kernel=$(sh "$ROOT/scripts/arm64-kernel.sh" "$A/kernel")

# The stages' run-time libraries (readelf -d NEEDED of the aarch64 build) and the tools the
# driver and the init use.
PKGS=bash,gzip,procps,libbpf1,libcap-ng0,libcapstone4,libssl3,libcurl4,libdw1,libelf1
PKGS=$PKGS,libjansson4,libmicrohttpd12,libnettle8,libprotobuf-c1,zlib1g,libzstd1
if [ ! -f "$V/base.cpio.gz" ]; then
	rm -rf "$V/rootfs.tmp"
	debootstrap --foreign --arch=arm64 --variant=minbase --include="$PKGS" bookworm \
		"$V/rootfs.tmp" "$MIRROR" >"$V/debootstrap.log" 2>&1 ||
		die "debootstrap failed: see $V/debootstrap.log"
	for d in "$V"/rootfs.tmp/var/cache/apt/archives/*.deb; do dpkg-deb -x "$d" "$V/rootfs.tmp"; done
	# the one alternative a maintainer script would have made that the init uses
	[ -e "$V/rootfs.tmp/usr/bin/awk" ] || ln -s mawk "$V/rootfs.tmp/usr/bin/awk"
	rm -rf "$V"/rootfs.tmp/var/cache/apt/archives/*.deb "$V/rootfs.tmp/debootstrap"
	(cd "$V/rootfs.tmp" && find . | cpio -o -H newc --quiet | gzip -1) >"$V/base.cpio.gz.tmp"
	mv "$V/base.cpio.gz.tmp" "$V/base.cpio.gz"
	rm -rf "$V/rootfs.tmp"
fi

# The run's own files: the stages, the workloads, the init; a second cpio after the first
# (the kernel unpacks both, in order).
rm -rf "$V/overlay"
mkdir -p "$V/overlay/rp/workloads"
cp -a "$V/stage/." "$V/overlay/"
FP="-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls"
aarch64-linux-gnu-gcc -std=c17 -O1 -g $FP -D_GNU_SOURCE -I"$ROOT/workloads" -pthread \
	-o "$V/overlay/rp/workloads/cpu_split" "$ROOT/workloads/cpu_split.c"
aarch64-linux-gnu-gcc -std=c17 -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls \
	-D_GNU_SOURCE -I"$ROOT/workloads" -o "$V/overlay/rp/workloads/deep_nofp" \
	"$ROOT/workloads/deep_chain.c"
install -m 755 "$ROOT/scripts/aarch64-vm-init.sh" "$V/overlay/rp/init"
(cd "$V/overlay" && find . | cpio -o -H newc --quiet | gzip -1) >"$V/overlay.cpio.gz"
cat "$V/base.cpio.gz" "$V/overlay.cpio.gz" >"$V/initrd.gz"

say "booting $(basename "$kernel") under qemu-system-aarch64 (TCG), console in $V/console.log"
timeout "${VM_TIMEOUT:-3600}" qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on -smp 2 \
	-m 3072 -nographic -no-reboot -kernel "$kernel" -initrd "$V/initrd.gz" \
	-append "console=ttyAMA0 rdinit=/rp/init panic=-1 quiet" </dev/null >"$V/console.log" 2>&1 ||
	say "qemu-system-aarch64 exited with $? (timeout: VM_TIMEOUT=${VM_TIMEOUT:-3600})"
tr -d '\r' <"$V/console.log" >"$V/console.txt"
sed -n 's/^\(rp-[a-z]*: .*\)/\1/p' "$V/console.txt" | sed 's/^rp-[a-z]*: /aarch64-vm: /'

# The VM's outputs, read here: each profiling case's last CPU profile names its workload.
rm -rf "$V/result"
mkdir -p "$V/result"
sed -n '/^=====BEGIN rp-out=====$/,/^=====END rp-out=====$/p' "$V/console.txt" |
	sed '1d;$d' | base64 -d | tar xzf - -C "$V/result" || die "no outputs came back from the VM"
named=0 unnamed=0
for c in launch-fp:hot_a launch-dwarf:chain_6 record-pid:hot_a launch-offcpu:hot_a; do
	d=$V/result/out/${c%%:*}
	f=$(ls "$d"/cpu-*.pb.gz 2>/dev/null | sort | tail -n 1 || true)
	if [ -n "$f" ] && HOME=$V GOCACHE=$V/gocache go tool pprof -top "$f" 2>/dev/null |
		grep -qw "${c#*:}"; then
		named=$((named + 1))
		say "${c%%:*}: $(basename "$f") names ${c#*:}"
	else
		unnamed=$((unnamed + 1))
		say "${c%%:*}: no CPU profile naming ${c#*:}"
	fi
done
line=$(grep '^rp-cases: ' "$V/console.txt" || echo 'rp-cases: 0 passed, 1 failed')
p=$(echo "$line" | sed 's/.* \([0-9]*\) passed.*/\1/')
f=$(echo "$line" | sed 's/.* \([0-9]*\) failed.*/\1/')
echo "check-aarch64-vm: $p cases passed, $f failed in the VM; $named profiles named their" \
	"workload, $unnamed did not; $(($(date +%s) - start)) s"
[ "$f" -eq 0 ] && [ "$unnamed" -eq 0 ]

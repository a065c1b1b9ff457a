#!/bin/sh
# USAGE: scripts/arm64-btf.sh OUT.btf
#
# The BTF of Debian 12's arm64 kernel, which the aarch64 cross build of the eBPF programs
# needs for vmlinux.h (bpf/*.bpf.c are CO-RE: the types' names and fields, relocated at load
# time on the running kernel).  No arm64 machine is needed: the kernel package is fetched
# from Debian's archive with apt-get download, and the BTF blob is cut out of its Image
# (CONFIG_DEBUG_INFO_BTF puts it there whole: a struct btf_header, magic 0xeb9f, then the
# type and string sections whose offsets and lengths the header gives).
#
#   $ scripts/arm64-btf.sh .output-aarch64/vmlinux-arm64.btf
#   arm64-btf: linux-image-6.1.0-50-cloud-arm64-unsigned: 4214189 bytes of BTF
#
# Exits non-zero with one line when the package cannot be fetched or holds no BTF.
set -eu
out=$1
say() { printf 'arm64-btf: %s\n' "$*"; }
die() { say "$*" >&2; exit 1; }

[ -s "$out" ] && exit 0
pkg=$(apt-cache depends linux-image-cloud-arm64:arm64 2>/dev/null |
	awk '/Depends: linux-image-[0-9]/ { sub(":arm64", "", $2); print $2; exit }')
[ -n "$pkg" ] || die "no linux-image-cloud-arm64 in the apt sources (dpkg --add-architecture arm64)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download -qq "$pkg:arm64" >/dev/null 2>&1) || die "cannot download $pkg:arm64"
dpkg-deb -x "$tmp"/*.deb "$tmp/x"
image=''
for f in "$tmp"/x/boot/vmlinuz-*; do [ -f "$f" ] && image=$f && break; done
[ -n "$image" ] || die "$pkg has no /boot/vmlinuz"
mkdir -p "$(dirname "$out")"
python3 - "$image" "$out.tmp" <<'PY' || die "no BTF in $image"
import struct, sys, gzip
data = open(sys.argv[1], "rb").read()
if data[:2] == b"\x1f\x8b":
    data = gzip.decompress(data)
# magic, version 1, flags 0, hdr_len 24
start = 0
while True:
    i = data.find(b"\x9f\xeb\x01\x00\x18\x00\x00\x00", start)
    if i < 0:
        sys.exit(1)
    _, _, _, hdr, toff, tlen, soff, slen = struct.unpack_from("<HBBIIIII", data, i)
    size = hdr + max(toff + tlen, soff + slen)
    if tlen > (1 << 20) and i + size <= len(data):
        open(sys.argv[2], "wb").write(data[i:i + size])
        sys.exit(0)
    start = i + 1
PY
mv "$out.tmp" "$out"
say "$pkg: $(wc -c <"$out") bytes of BTF"

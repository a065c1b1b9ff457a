#!/bin/sh
# USAGE: scripts/arm64-btf.sh OUT.btf
#
# The BTF of Debian 12's arm64 kernel, which the aarch64 cross build of the eBPF programs
# needs for vmlinux.h (bpf/*.bpf.c are CO-RE: the types' names and fields, relocated at load
# time on the running kernel).  No arm64 machine is needed: the kernel package is fetched
# from Debian's archive with apt-get download, and the BTF blob is cut out of its Image
# (CONFIG_DEBUG_INFO_BTF puts it there whole: a struct btf_header, magic 0xeb9f, then the
# type and string sections whose offsets and lengths the header gives).  The package is
# scripts/arm64-kernel.sh's, unpacked beside OUT.
#
#   $ scripts/arm64-btf.sh .output-aarch64/vmlinux-arm64.btf
#   arm64-btf: vmlinuz-6.1.0-50-cloud-arm64: 4214189 bytes of BTF
#
# Exits non-zero with one line when the package cannot be fetched or holds no BTF.
set -eu
out=$1
say() { printf 'arm64-btf: %s\n' "$*"; }
die() { say "$*" >&2; exit 1; }

[ -s "$out" ] && exit 0
image=$(sh "$(dirname "$0")/arm64-kernel.sh" "$(dirname "$out")/kernel")
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
say "$(basename "$image"): $(wc -c <"$out") bytes of BTF"

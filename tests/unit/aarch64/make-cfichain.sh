#!/bin/sh
# USAGE: sh tests/unit/aarch64/make-cfichain.sh
#
# Rebuilds tests/unit/aarch64/cfichain, the aarch64 ELF file of cfichain.S that
# tests/unit/cfi_aarch64_test.c unwinds a hand-made stack through.  The file is committed
# (about 1 KiB): the unit test then needs no cross compiler, on x86_64 as under qemu-user.
# Needs Debian's gcc-aarch64-linux-gnu (scripts/install-deps.sh installs it); when
# qemu-aarch64 is there too the program is run once, as a check that it is a sound program
# (it exits 0).
#
#   $ sh tests/unit/aarch64/make-cfichain.sh
#   cfichain: 5 FDEs, written tests/unit/aarch64/cfichain
#
# readelf --debug-dump=frames-interp tests/unit/aarch64/cfichain shows its rows.
set -eu
D=$(cd "$(dirname "$0")" && pwd)
CC=${CC:-aarch64-linux-gnu-gcc}
command -v "$CC" >/dev/null || { echo "make-cfichain: no $CC" >&2; exit 1; }
"$CC" -nostdlib -static -Wl,--build-id=sha1 -Wl,-z,noexecstack -o "$D/cfichain.tmp" \
	"$D/cfichain.S"
if command -v qemu-aarch64 >/dev/null; then
	qemu-aarch64 "$D/cfichain.tmp" || { echo "make-cfichain: the program failed" >&2; exit 1; }
fi
n=$(aarch64-linux-gnu-readelf --debug-dump=frames "$D/cfichain.tmp" | grep -c ' FDE ')
mv "$D/cfichain.tmp" "$D/cfichain"
echo "cfichain: $n FDEs, written tests/unit/aarch64/cfichain"

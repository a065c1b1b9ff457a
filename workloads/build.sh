#!/bin/sh
# USAGE: sh workloads/build.sh OUTDIR
#
# Builds every bundled workload into OUTDIR (make calls it with .output/workloads):
#   cpu_split syscall_heavy cpp_workload rust_workload busy2 fixedjob threads_later
#   offcpu_pipe many_threads forkchurn heap_mix alloc_rate phys_pages
#   debuglink/stripped  debuglink/stripped.debug        (symbols via .gnu_debuglink)
#   buildid/stripped_bid  symdir/.build-id/xx/rest.debug (symbols via build ID; pass
#                                                        --symbol-dir OUTDIR/symdir)
#   zbuildid/stripped_z  zsymdir/.build-id/xx/rest.debug (the same, its DWARF compressed)
# All are built with frame pointers.  rust_workload is skipped, with a message, when no
# rustc is found ($RUSTC, else Debian's /usr/bin/rustc, else rustc on PATH).
#
#   $ sh workloads/build.sh .output/workloads
#   workloads: built 10 programs in .output/workloads
# shellcheck disable=SC2086 # word lists (flags, fields) are split on purpose
set -e

[ $# -eq 1 ] || { echo "usage: sh workloads/build.sh OUTDIR" >&2; exit 2; }
OUT=$1
SRC=$(cd "$(dirname "$0")" && pwd)
CC=${CC:-cc}
CXX=${CXX:-c++}

# GCC 12 drops the frame pointer of leaf functions even with these flags, so the workloads
# keep their hot functions non-leaf; -mno-omit-leaf-frame-pointer helps compilers that honour it.
FP="-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls"
COMMON="-O1 -g $FP -D_GNU_SOURCE -Wall -Wextra -Werror -Wl,--build-id"
CFLAGS_WL="-std=c17 $COMMON"
CXXFLAGS_WL="-std=c++17 $COMMON"

mkdir -p "$OUT" "$OUT/debuglink" "$OUT/buildid" "$OUT/symdir"
n=0

cc_one() {	# cc_one NAME [extra flags...]: OUT/NAME from SRC/NAME.c
	name=$1
	shift
	$CC $CFLAGS_WL -I"$SRC" "$@" -o "$OUT/$name" "$SRC/$name.c" -pthread
	n=$((n + 1))
}

for w in cpu_split syscall_heavy busy2 fixedjob threads_later offcpu_pipe many_threads forkchurn \
	heap_mix alloc_rate phys_pages; do
	cc_one "$w"
done

$CXX $CXXFLAGS_WL -I"$SRC" -o "$OUT/cpp_workload" "$SRC/cpp_workload.cc"
n=$((n + 1))

# rustc's std has no frame pointers, but our frames have them: the chain reaches main.
RUSTC=${RUSTC:-$(command -v /usr/bin/rustc || command -v rustc || true)}
if [ -n "$RUSTC" ]; then
	"$RUSTC" --edition 2021 -C force-frame-pointers=yes -C opt-level=1 -g \
		-o "$OUT/rust_workload" "$SRC/rust_workload.rs"
	n=$((n + 1))
else
	rm -f "$OUT/rust_workload"
	echo "workloads: no rustc found, skipping rust_workload" >&2
fi

# DWARF workloads: the same six-deep chain without frame pointers, with them, and with no
# unwind tables at all (the sections crt files bring are removed too); qsort through libc.
NOFP="-std=c17 -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -D_GNU_SOURCE -Wall -Wextra -Werror -Wl,--build-id"
$CC $NOFP -I"$SRC" -o "$OUT/deep_nofp" "$SRC/deep_chain.c"
$CC $CFLAGS_WL -I"$SRC" -o "$OUT/deep_fp" "$SRC/deep_chain.c"
$CC $NOFP -fno-asynchronous-unwind-tables -fno-unwind-tables -I"$SRC" \
	-o "$OUT/deep_nounwind" "$SRC/deep_chain.c"
objcopy --remove-section .eh_frame --remove-section .eh_frame_hdr \
	--remove-section .debug_frame "$OUT/deep_nounwind"
$CC $NOFP -I"$SRC" -o "$OUT/qsort_cb" "$SRC/qsort_cb.c"
$CC $CFLAGS_WL -I"$SRC" -o "$OUT/exec_later" "$SRC/exec_later.c"
# good frame-pointer stacks first, then a hot loop whose frame pointer is garbage
$CC $CFLAGS_WL -I"$SRC" -o "$OUT/fp_degrade" "$SRC/fp_degrade.c"
n=$((n + 6))

# build_id FILE: prints the hex build ID of FILE's NT_GNU_BUILD_ID note.
build_id() {
	readelf -n "$1" | awk '/Build ID:/ { print $3; exit }'
}

# debuglink layout: the stripped binary points at the .debug file beside it by name.
D=$OUT/debuglink
$CC $CFLAGS_WL -I"$SRC" -DLAYOUT='"debuglink"' -o "$D/stripped" "$SRC/stripped.c"
objcopy --only-keep-debug "$D/stripped" "$D/stripped.debug"
strip --strip-all "$D/stripped"
(cd "$D" && objcopy --add-gnu-debuglink=stripped.debug stripped)
n=$((n + 1))

# bid_layout LAYOUT BINARY SYMDIR [OBJCOPY OPTIONS]: stripped.c built as BINARY (LAYOUT sets
# its build ID apart), stripped, its debug file only in SYMDIR/.build-id/xx/rest.debug.
bid_layout() {
	lay=$1 bin=$2 sym=$3
	shift 3
	mkdir -p "$(dirname "$bin")"
	$CC $CFLAGS_WL -I"$SRC" -DLAYOUT="\"$lay\"" -o "$bin" "$SRC/stripped.c"
	id=$(build_id "$bin")
	[ ${#id} -gt 2 ] || { echo "workloads: no build ID in $bin" >&2; exit 1; }
	rm -rf "$sym/.build-id"
	dir=$sym/.build-id/$(echo "$id" | cut -c1-2)
	mkdir -p "$dir"
	objcopy --only-keep-debug "$@" "$bin" "$dir/$(echo "$id" | cut -c3-).debug"
	strip --strip-all "$bin"
	n=$((n + 1))
}

# build-ID layout: no debuglink and nothing beside the binary; the debug file lives only in
# symdir/.build-id/xx/rest.debug.
bid_layout buildid "$OUT/buildid/stripped_bid" "$OUT/symdir"
# The same with the debug file's DWARF compressed, as distributions ship it
# (zsymdir/.build-id/xx/rest.debug): the debug cache keeps it inflated.
bid_layout zbuildid "$OUT/zbuildid/stripped_z" "$OUT/zsymdir" --compress-debug-sections=zlib

# Heap: the same allocations in a static musl executable (its allocator is its own code, the
# system family in the executable), when musl-gcc is there; and a static, stripped program
# with an allocator of its own and no allocator symbol.
if command -v musl-gcc >/dev/null 2>&1; then
	musl-gcc -static -std=c17 -O1 -g $FP -D_GNU_SOURCE -Wall -Wextra -Werror -I"$SRC" \
		-o "$OUT/heap_mix_musl" "$SRC/heap_mix.c"
	n=$((n + 1))
else
	rm -f "$OUT/heap_mix_musl"
	echo "workloads: no musl-gcc found, skipping heap_mix_musl" >&2
fi
$CC $CFLAGS_WL -static -I"$SRC" -o "$OUT/own_alloc" "$SRC/own_alloc.c"
strip --strip-all "$OUT/own_alloc"
n=$((n + 1))

echo "workloads: built $n programs in $OUT"

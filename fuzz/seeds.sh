#!/bin/sh
# Rebuilds the seed corpora of fuzz/corpus/ from real data of this machine: system ELF files,
# /proc files, objects compiled from workloads/ and recordings of the bundled workloads.
#
#   sh fuzz/seeds.sh files      ELF, CFI, /proc seeds (any user)
#   sh fuzz/seeds.sh streams    saved streams of the workloads (root: it records them)
#
# Run from the top of the tree after `make all workloads`.  Each file stays small (the
# repository carries them): sections and /proc files are cut, streams keep a few samples.
set -eu
OUT=${OUT:-.output}
C=fuzz/corpus
W=$OUT/workloads
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# le64 N: N as 8 bytes, little-endian
le64() {
	v=$1 i=0
	while [ $i -lt 8 ]; do
		printf "\\$(printf '%03o' $((v & 255)))"
		v=$((v >> 8)) i=$((i + 1))
	done
}

# section FILE NAME: the section's address (or 0) and contents into $T/sec
section() {
	objcopy -O binary --only-section="$2" "$1" "$T/sec" 2>/dev/null || return 1
	[ -s "$T/sec" ] || return 1
	addr=$(readelf -SW "$1" | awk -v n="$2" '$0 ~ " "n" " { for (i = 1; i <= NF; i++)
		if ($i == n) { print "0x" $(i + 2); exit } }')
	addr=$((${addr:-0}))
}

# cfi_seed NAME MODE FILE SECTION: the mode byte, the address, the section (cut to 16 KiB)
cfi_seed() {
	section "$3" "$4" || return 0
	{ printf "\\$(printf '%03o' "$2")"; le64 "$addr"; head -c 16384 "$T/sec"; } \
		>"$C/cfi_parse/$1"
}

files() {
	mkdir -p "$C/cfi_parse" "$C/elf_note" "$C/proc_maps" "$C/kallsyms"
	cat >"$T/leaf.c" <<'SRC'
int g(int);
int f(int x) { int a[8]; for (int i = 0; i < 8; i++) a[i] = g(x + i); return a[x & 7]; }
int h(int x, int y) { return f(x) + f(y) * g(y); }
SRC
	cc -O2 -c -o "$T/leaf-x86.o" "$T/leaf.c"
	cc -O0 -g -fno-asynchronous-unwind-tables -c -o "$T/leaf-dbg.o" "$T/leaf.c"
	clang --target=aarch64-linux-gnu -O2 -c -o "$T/leaf-a64.o" "$T/leaf.c"
	so=$(ls /usr/lib/x86_64-linux-gnu/libcap-ng.so.0.* | head -n 1)
	# mode: 1 .eh_frame (else .debug_frame), 2 aarch64, 4 a whole ELF file
	cfi_seed eh-true 1 /bin/true .eh_frame
	cfi_seed eh-libcap-ng 1 "$so" .eh_frame
	cfi_seed eh-deep_nofp 1 "$W/deep_nofp" .eh_frame
	cfi_seed eh-cpp_workload 1 "$W/cpp_workload" .eh_frame
	cfi_seed eh-leaf-x86 1 "$T/leaf-x86.o" .eh_frame
	cfi_seed eh-leaf-a64 3 "$T/leaf-a64.o" .eh_frame
	cfi_seed debug-frame-leaf 0 "$T/leaf-dbg.o" .debug_frame
	for f in "$W/deep_nofp" "$W/qsort_cb" "$T/leaf-a64.o" "$T/leaf-dbg.o"; do
		{ printf '\004'; cat "$f"; } >"$C/cfi_parse/elf-$(basename "$f")"
	done
	# No section headers: the table is found through PT_GNU_EH_FRAME.
	{ printf '\004'; head -c 16384 "$W/deep_nofp"; } >"$C/cfi_parse/elf-cut-deep_nofp"
	cp /bin/true "$C/elf_note/true"
	cp "$so" "$C/elf_note/libcap-ng.so"
	cp "$W/deep_nofp" "$C/elf_note/deep_nofp"
	cp "$T/leaf-a64.o" "$C/elf_note/leaf-a64.o"
	objcopy --remove-section=.note.gnu.build-id "$W/qsort_cb" "$C/elf_note/no-build-id"
	cat /proc/self/maps >"$C/proc_maps/self"
	head -n 60 /proc/$$/maps >"$C/proc_maps/shell"
	# A few hundred lines from the start, the middle and the end (module symbols).
	n=$(wc -l </proc/kallsyms)
	{ head -n 150 /proc/kallsyms; sed -n "$((n / 2)),$((n / 2 + 149))p" /proc/kallsyms
	  tail -n 100 /proc/kallsyms; } >"$C/kallsyms/kallsyms"
	head -n 40 /proc/kallsyms | sed 's/^[0-9a-f]*/0000000000000000/' >"$C/kallsyms/hidden"
}

case ${1:-} in
files) files ;;
streams) streams ;;
*) echo "usage: sh fuzz/seeds.sh files|streams" >&2; exit 2 ;;
esac

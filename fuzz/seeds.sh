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
	# the debug cache: debug files with compressed and with plain DWARF
	mkdir -p "$C/debug_cache"
	cp "$C/symbolize_elf/exe_zdebug" "$C/symbolize_elf/exe_link.debug" "$C/debug_cache/"
	cat /proc/self/maps >"$C/proc_maps/self"
	head -n 60 /proc/$$/maps >"$C/proc_maps/shell"
	# A few hundred lines from the start, the middle and the end (module symbols).
	n=$(wc -l </proc/kallsyms)
	{ head -n 150 /proc/kallsyms; sed -n "$((n / 2)),$((n / 2 + 149))p" /proc/kallsyms
	  tail -n 100 /proc/kallsyms; } >"$C/kallsyms/kallsyms"
	head -n 40 /proc/kallsyms | sed 's/^[0-9a-f]*/0000000000000000/' >"$C/kallsyms/hidden"
}

# rec NAME ARGS...: a 2 s launch of a workload in 1 s windows, its stream kept
rec() {
	name=$1
	shift
	"$RP" launch --duration 2s --window 1s --output "$T/$name" \
		--save-stream "$T/$name.rps" "$@" >"$T/$name.log" 2>&1 || true
	# the workload's own ELF file, by build id, for the unwind target (libraries are large
	# and are found at their paths)
	(cd "$T/$name/.modules" && find .build-id -type f -size -64k) | while read -r f; do
		mkdir -p "fuzz/modules/$(dirname "$f")"
		cp "$T/$name/.modules/$f" "fuzz/modules/$f"
	done
}

streams() {
	[ "$(id -u)" = 0 ] || { echo "seeds.sh streams: recording needs root" >&2; exit 1; }
	RP=$(pwd)/$OUT/bin/rustprofile.sh
	B=$OUT/bin
	TOOLS=$OUT/fuzz-tools
	make -s "$TOOLS/trimstream" "$TOOLS/offcpuseed" "$TOOLS/ringdump"
	chmod 755 "$T"
	rec fp --unwind fp --cpu-frequency 99 -- "$W/cpu_split" 2
	rec dwarf --unwind dwarf -- "$W/deep_nofp" 2
	rec cpp --unwind dwarf -- "$W/cpp_workload" 2
	rec off --profiles cpu,off-cpu --unwind fp -- "$W/offcpu_pipe" 3 half
	rec pingpong --profiles off-cpu --unwind fp -- "$W/offcpu_pipe" 3 pingpong
	rec auto --unwind auto --duration 3s --cpu-frequency 99 -- "$W/fp_degrade" 1 3
	names="fp dwarf cpp off pingpong auto"
	# Captures other tools made (symbols of the capture: FR_USYM).
	F=${FIXTURES:-/work/shared/fixtures/captures}
	for c in simpleperf-x86_64-dumped-symbols.data simpleperf-x86_64-dwarf-small.data \
		x86_64-dwarf-zstd-parallel-perf5.18.perf.data; do
		[ -r "$F/$c" ] || continue
		n=imp-${c%%.*}
		"$B/import" --input "$F/$c" >"$T/$n.rps" 2>/dev/null || continue
		names="$names $n"
	done
	mkdir -p "$C/unwind_stream" "$C/stage_aggregate" "$C/stage_pprof" "$C/stage_svg" \
		"$C/stage_collapsed" "$C/stage_json" "$C/stage_firefox" "$C/stage_fanout" "$C/stage_commit" \
		"$C/stream_decode" "$C/bpf_ring" "$C/perf_ring"
	mkdir -p "$T/o"
	for n in $names; do
		"$TOOLS/trimstream" 12 3072 <"$T/$n.rps" >"$T/$n.trim"
		"$B/unwind" --module-cache fuzz/modules <"$T/$n.trim" >"$T/$n.unw"
		"$B/aggregate" --window 1s <"$T/$n.unw" >"$T/$n.agg"
		"$B/emit-pprof" --output "$T/o" <"$T/$n.agg" >"$T/$n.pprof"
		"$B/emit-svg" --output "$T/o" <"$T/$n.agg" >"$T/$n.svg"
		"$B/emit-firefox" --output "$T/o" <"$T/$n.agg" >/dev/null
		cp "$T/$n.trim" "$C/unwind_stream/$n"
		"$TOOLS/trimstream" 12 3072 <"$T/$n.unw" >"$C/stage_aggregate/$n"
		for s in pprof svg collapsed json firefox; do
			"$TOOLS/trimstream" 24 0 <"$T/$n.agg" >"$C/stage_$s/$n"
		done
		"$TOOLS/trimstream" 24 0 <"$T/$n.pprof" >"$C/stage_fanout/$n"
		"$TOOLS/trimstream" 24 0 <"$T/$n.pprof" >"$C/stage_commit/$n"
		"$TOOLS/trimstream" 24 0 <"$T/$n.svg" >"$C/stage_commit/$n-svg"
		for s in trim unw agg pprof; do
			"$TOOLS/trimstream" 6 1024 <"$T/$n.$s" >"$C/stream_decode/$n-$s"
		done
	done
	# unwind --debuginfod's counts, set into the fp stream as unwind places them (one frame
	# before the others, one after a query): recording them would need a server, the frames
	# do not.
	cc -std=c17 -D_GNU_SOURCE -O1 -Ilib -o "$T/streamgen" tests/tools/streamgen.c \
		"$OUT/lib/librp.a" -lz -lm
	"$T/streamgen" unpack <"$C/stage_aggregate/fp" | awk 'NR == 3 { print "debuginfod" }
		NR == 40 { print "debuginfod queried=2 requests=2 fetched=1 not_found=1" \
			" bytes_fetched=18352" } { print }' | "$T/streamgen" pack >"$T/dbg"
	cp "$T/dbg" "$C/stage_aggregate/debuginfod"
	# A block in use whose mapping unwind forgot (a plugin unloaded): aggregate holds the
	# forget back until its free (aggregate/pins.h).
	"$T/streamgen" pack >"$C/stage_aggregate/heap-plugin" <<-EOT
	header clockid=1 e_machine=62 clock_offset_ns=1700000000000000000 session_id=0x00c0ffee12345678
	target pid=100 cpu_frequency=100 flags=2 kind=launch exe=/usr/bin/app comm=app profiles=heap window_nanos=1000000000
	mapping id=3 pid=100 start=0x400000 limit=0x500000 offset=0x1000 flags=30 build_id=4f1c3b path=/usr/bin/app
	mapping id=7 pid=100 start=0x7f0000000000 limit=0x7f0000100000 offset=0x1000 flags=30 build_id=7a7a7a path=/usr/lib/plugin.so
	function id=1 start_line=10 name=main filename=app.c
	function id=7 start_line=70 name=plugin_alloc filename=plugin.c
	location id=2 mapping_id=3 address=0x401100 lines=1:12
	location id=7 mapping_id=7 address=0x7f0000001100 lines=7:71
	comm pid=100 tid=100 comm=app
	heap-stack time=2000 pid=100 tid=100 addr=0x1000 size=100 weight=1 stack_flags=1 locs=7,2
	forget ids=7
	round time=5000
	round time=1000002000
	heap-stack time=1000003000 pid=100 tid=100 addr=0x2000 size=10 weight=1 stack_flags=1 locs=2
	heap-free time=1000003500 pid=100 tid=100 addr=0x1000
	round time=1000004000
	round time=2000002000
	end time=3000000000 reason=4
	EOT
	"$TOOLS/trimstream" 6 1024 <"$T/dbg" >"$C/stream_decode/debuginfod"
	# FlameGraph folded text for emit-svg --folded: what emit-collapsed wrote.
	"$B/emit-collapsed" --output "$T/o" <"$T/fp.agg" >/dev/null
	i=0
	for f in "$T"/o/.*collapsed*; do
		[ -s "$f" ] || continue
		i=$((i + 1))
		head -c 16384 "$f" >"$C/stage_svg/folded-$i"
	done
	for n in off pingpong; do
		"$TOOLS/offcpuseed" 24 <"$T/$n.rps" >"$C/bpf_ring/$n"
	done
	# Raw perf rings: frame-pointer and DWARF samples, and a target that executes a new image.
	"$W/cpu_split" 4 &
	p=$!
	sleep 0.3
	"$TOOLS/ringdump" $p 1 fp 24000 "$T/ring-fp"
	"$TOOLS/ringdump" $p 1 dwarf 40000 "$T/ring-dwarf"
	wait $p || true
	"$W/exec_later" 1 "$W/threads_later" 2 &
	p=$!
	sleep 0.2
	"$TOOLS/ringdump" $p 2 fp 30000 "$T/ring-exec"
	wait $p || true
	for r in fp dwarf exec; do
		f=$(ls -S "$T"/ring-$r-cpu* 2>/dev/null | head -n 1)
		[ -n "$f" ] && cp "$f" "$C/perf_ring/$r"
	done
}

case ${1:-} in
files) files ;;
streams) streams ;;
*) echo "usage: sh fuzz/seeds.sh files|streams" >&2; exit 2 ;;
esac

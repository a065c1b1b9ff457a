#!/usr/bin/env bats
# The module cache (docs/module-cache.md): OUTPUT/.modules keeps, by build id, only what the
# stages read of each module, shared by the sessions of the output directory, pruned with
# retention and capped by --max-module-cache.

load helper

setup_file() {
	local root="$BATS_TEST_DIRNAME/.."
	export STREAMMAPS="$BATS_FILE_TMPDIR/streammaps"
	${CC:-cc} -std=c17 -D_GNU_SOURCE -I"$root/lib" ${LDFLAGS:-} -o "$STREAMMAPS" \
		"$root/tests/tools/streammaps.c" "$RP_BIN/../lib/librp.a" -lz -lm
}

setup() {
	require_root
	open_tmpdirs
	out=$BATS_TEST_TMPDIR/out
	mkdir -p "$out"
	chown nobody: "$out"
	cgroot=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
	[ -n "$cgroot" ] || skip "no cgroup v2 hierarchy is mounted"
}

# project DIR: a small C project, a few files that take gcc some seconds each at -O2.
project() {
	local d=$1 i f
	mkdir -p "$d"
	for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
		{
			for f in $(seq 150); do
				echo "int f${i}_$f(int x) { int s = 0; for (int k = 0; k < x; k++)" \
					"s += (k * $f) ^ (s >> 3); return s % ($f + 7); }"
			done
			echo "int m$i(int s) {"
			for f in $(seq 150); do echo "s += f${i}_$f(s & 255);"; done
			echo "return s; }"
		} >"$d/u$i.c"
	done
	{
		for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo "int m$i(int);"; done
		echo "int main(void) { int s = 1;"
		for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo "s = m$i(s);"; done
		echo "return s == 42; }"
	} >"$d/main.c"
	printf '%s\n' 'OBJS := $(patsubst %.c,%.o,$(wildcard *.c))' 'CFLAGS := -O2' \
		'prog: $(OBJS)' '	$(CC) -o $@ $(OBJS)' >"$d/Makefile"
}

# collapsed DIR: every collapsed file of DIR, concatenated in window order.
collapsed() {
	local f
	for f in $(outputs "$1" cpu collapsed); do cat "$1/$f"; done
}

@test "launch -- make -j2: the module cache holds a tenth of what make ran, and a replay from it names every frame the live run named" {
	# The project's make must not inherit this suite's make variables: check-asan's CC and
	# CFLAGS travel in MAKEFLAGS and the environment, and the test looks for gcc's cc1.
	project "$BATS_TEST_TMPDIR/proj"
	chown -R nobody: "$BATS_TEST_TMPDIR/proj"
	run -0 --separate-stderr "$RP" launch --unwind dwarf --duration 0 --window 2s \
		--cpu-frequency 199 --collapsed --save-stream "$BATS_TEST_TMPDIR/rec" \
		--output "$out" -- env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u CC -u CFLAGS -u LDFLAGS make -j2 -C "$BATS_TEST_TMPDIR/proj"
	echo "$stderr"
	# Every module, the short-lived compilers' too, went into the cache.
	[ -z "$(echo "$stderr" | grep "module cache")" ]
	[ -x "$BATS_TEST_TMPDIR/proj/prog" ]

	# What make ran: the distinct ELF files the recording mapped.
	"$STREAMMAPS" "$BATS_TEST_TMPDIR/rec" >"$BATS_TEST_TMPDIR/maps"
	full=0 files=0
	while read -r bid path; do
		[ "$bid" != - ] && [ -f "$path" ] || continue
		[ "$(head -c 4 "$path" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
		echo "$path"
	done <"$BATS_TEST_TMPDIR/maps" | xargs readlink -f | sort -u >"$BATS_TEST_TMPDIR/elfs"
	while read -r path; do
		full=$((full + $(stat -c %s "$path"))) files=$((files + 1))
	done <"$BATS_TEST_TMPDIR/elfs"
	grep -q '/cc1$' "$BATS_TEST_TMPDIR/elfs"
	cache=$(du -sB1 "$out/.modules" | cut -f1)
	echo "$files files, $full bytes; module cache $cache bytes"
	[ "$files" -ge 8 ]
	[ "$cache" -le $((full / 10)) ]
	# The windows' lists name exactly what the cache holds, cc1 among them.
	cat "$out/.modules/.refs"/* | sort -u >"$BATS_TEST_TMPDIR/refs"
	(cd "$out/.modules/.build-id" && find . -type f | sed 's|^\./\(..\)/|\1|' | sort) \
		>"$BATS_TEST_TMPDIR/cached"
	cmp "$BATS_TEST_TMPDIR/refs" "$BATS_TEST_TMPDIR/cached"
	grep -qx "$(grep '/cc1$' "$BATS_TEST_TMPDIR/maps" | cut -d' ' -f1 | head -n 1)" \
		"$BATS_TEST_TMPDIR/refs"
	# Only modules, no copy being written, and no session still listed.
	[ -z "$(find "$out/.modules/.build-id" -name '*.tmp.*' -o -name '.*prune*')" ]
	[ -z "$(ls "$out/.modules/.sessions")" ]

	# The replay reads the cache: the files of the toolchain are out of its sight.
	mkdir "$BATS_TEST_TMPDIR/replay" "$BATS_TEST_TMPDIR/full" "$BATS_TEST_TMPDIR/empty"
	chown nobody: "$BATS_TEST_TMPDIR/replay" "$BATS_TEST_TMPDIR/full" "$BATS_TEST_TMPDIR/empty"
	hide=$(grep -E '/(cc1|collect2|lto-wrapper|make|[^/]*-(as|ld\.bfd|gcc-12))$|/lib(bfd|opcodes|ctf|sframe|isl|mpc|mpfr|gmp)' \
		"$BATS_TEST_TMPDIR/elfs" | tr '\n' ' ')
	echo "hidden: $hide"
	[ -n "$hide" ]
	run -0 unshare -m sh -c 'for f in $0; do mount --bind /dev/null "$f" || exit 1; done
		exec "$@"' "$hide" "$RP" replay --input "$BATS_TEST_TMPDIR/rec" --window 2s --collapsed \
		--module-cache "$out/.modules" --output "$BATS_TEST_TMPDIR/replay"
	# The originals themselves, with no cache at all: the names the full files give.
	run -0 "$RP" replay --input "$BATS_TEST_TMPDIR/rec" --window 2s --collapsed \
		--module-cache "$BATS_TEST_TMPDIR/empty" --output "$BATS_TEST_TMPDIR/full"
	collapsed "$out" >"$BATS_TEST_TMPDIR/live.txt"
	collapsed "$BATS_TEST_TMPDIR/replay" >"$BATS_TEST_TMPDIR/replay.txt"
	collapsed "$BATS_TEST_TMPDIR/full" >"$BATS_TEST_TMPDIR/full.txt"
	wc -l "$BATS_TEST_TMPDIR"/*.txt
	# cc1's exported functions are named (from .dynsym: cc1 has no .symtab, so its static
	# functions are "[cc1]" in all three), and the three agree line for line.
	[ "$(grep -c ';toplev::main(int, char\*\*);' "$BATS_TEST_TMPDIR/live.txt")" -ge 50 ]
	cmp "$BATS_TEST_TMPDIR/live.txt" "$BATS_TEST_TMPDIR/replay.txt"
	cmp "$BATS_TEST_TMPDIR/live.txt" "$BATS_TEST_TMPDIR/full.txt"
}

# bid_of FILE: the GNU build id of an ELF file.
bid_of() {
	readelf -n "$1" | awk '/Build ID:/ { print $3; exit }'
}

cached() {
	[ -e "$out/.modules/.build-id/${1:0:2}/${1:2}" ]
}

not_cached() {
	[ ! -e "$out/.modules/.build-id/${1:0:2}/${1:2}" ]
}

@test "retention: a module no kept window of any session refers to goes, the others stay" {
	split=$(bid_of "$RP_WORKLOADS/cpu_split") seq=$(bid_of "$(readlink -f /usr/bin/seq)")
	churn=$(bid_of "$RP_WORKLOADS/forkchurn")
	# Session A: cpu_split in every window it keeps.
	run -0 "$RP" launch --unwind fp --duration 0 --window 1s --cpu-frequency 499 \
		--output "$out" -- "$RP_WORKLOADS/cpu_split" 3
	cached "$split"
	# A pass that died left it set aside: the next pass puts it back under its name.
	mv "$out/.modules/.build-id/${split:0:2}/${split:2}" \
		"$out/.modules/.build-id/${split:0:2}/.${split:2}.prune.2147483646"
	# Session B: seq and cpu_split at first, then only forkchurn; it keeps its last window.
	run -0 "$RP" launch --unwind fp --duration 0 --window 1s --cpu-frequency 499 \
		--keep-windows 1 --output "$out" -- sh -c 'for i in $(seq 3000); do :; done
		"$0" 1; sleep 1.5; "$1" 50 150' "$RP_WORKLOADS/cpu_split" "$RP_WORKLOADS/forkchurn"
	cached "$split"         # A's windows refer to it
	[ -z "$(find "$out/.modules" -name '*.prune.*')" ]
	cached "$churn"         # B's kept window does
	not_cached "$seq"       # only B's removed windows did
	# Every window's list is there; the ended sessions' lists are gone.
	for d in $(outputs "$out" diagnostics json); do
		[ -s "$out/.modules/.refs/$d" ]
	done
	[ "$(ls "$out/.modules/.refs" | wc -l)" -eq "$(outputs "$out" diagnostics json | wc -l)" ]
	[ -z "$(ls "$out/.modules/.sessions")" ]
	# A window without a list (written by hand, or by an older version) stands for every
	# module: nothing is pruned while it stays.
	rm "$out/.modules/.refs/$(outputs "$out" diagnostics json | head -n 1)"
	run -0 "$RP" launch --unwind fp --duration 0 --window 1s --keep-windows 1 \
		--output "$out" -- sh -c 'for i in $(seq 3000); do :; done; sleep 1.5; true'
	cached "$seq"
	cached "$split"
	cached "$churn"
}

@test "--max-module-cache: once full, one warning, and the modules stay out of the cache" {
	run -0 --separate-stderr "$RP" launch --unwind fp --duration 0 --window 1s \
		--max-module-cache 1 --output "$out" -- "$RP_WORKLOADS/forkchurn" 50 50
	echo "$stderr"
	[ "$(echo "$stderr" | grep -c "module cache full")" -eq 1 ]
	echo "$stderr" | grep -qF "collect: module cache full: '$out/.modules' holds 0 bytes, --max-module-cache 1;"
	[ -z "$(find "$out/.modules/.build-id" -type f 2>/dev/null)" ]
	d=$out/$(outputs "$out" diagnostics json | head -n 1)
	run -0 jq -e '[.warnings[] | select(startswith("module cache full"))] | length == 1' "$d"
	# A bad value stops the run before anything starts.
	run -1 "$RP" launch --max-module-cache lots --output "$out" -- touch "$BATS_TEST_TMPDIR/ran"
	[[ "$output" == "collect: --max-module-cache: "* ]]
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
}

@test "vDSO: its image is filed by build id, so its frames are named live and after a replay" {
	# clock_gettime in a loop: most samples end inside the vDSO, which is no file anywhere.
	run -0 "$RP" launch --unwind fp --duration 2s --window 60s --collapsed --output "$out" \
		--save-stream "$BATS_TEST_TMPDIR/s.rps" -- "$RP_WORKLOADS/syscall_heavy" 2 vdso
	run -0 collapsed "$out"
	echo "$output" | grep -qE ';vdso_loop;.*__vdso_clock_gettime [0-9]+$'
	# The cache holds the image, under the build id of its note.
	vdso=
	for f in "$out"/.modules/.build-id/*/*; do
		readelf -z -p .dynstr "$f" 2>/dev/null | grep -q __vdso_clock_gettime && vdso=$f
	done
	[ -n "$vdso" ]
	bid=$(readelf -n "$vdso" | awk '/Build ID/ { print $3 }')
	[ "$vdso" = "$out/.modules/.build-id/${bid:0:2}/${bid:2}" ]
	run -0 "$RP" replay --input "$BATS_TEST_TMPDIR/s.rps" --module-cache "$out/.modules" \
		--window 60s --collapsed --output "$BATS_TEST_TMPDIR/replay"
	run -0 collapsed "$BATS_TEST_TMPDIR/replay"
	echo "$output" | grep -qE ';vdso_loop;.*__vdso_clock_gettime [0-9]+$'
}

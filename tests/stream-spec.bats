#!/usr/bin/env bats
# The stream specification and the code must not drift apart.

bats_require_minimum_version 1.5.0

# streamgen (tests/tools/streamgen.c), built once for the file.
setup_file() {
	local root
	root=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
	export RP_BIN=${RP_BIN:-$root/.output/bin}
	export STREAMGEN=$BATS_FILE_TMPDIR/streamgen
	local build=(-std=c17 -Wall -Wextra -Werror -D_GNU_SOURCE -O1 -g -I "$root/lib"
		-o "$STREAMGEN" "$root/tests/tools/streamgen.c" "$RP_BIN/../lib/librp.a" -lz -lm)
	"${CC:-cc}" "${build[@]}" 2>/dev/null || clang -fsanitize=address,undefined "${build[@]}"
}

# doc_layouts: "NAME (TYPE) FIELDS" for each field list of each frame section of the spec: the
# code spans that start with a typed field ("u32 pid") or records ("n × (").
doc_layouts() {
	awk '
		/^#+ / { if (name != "") print name "\t" text; name = ""; text = "" }
		/^### [a-z-]+ \([0-9]+\)$/ { name = $2 " " $3; next }
		name != "" { text = text " " $0 }
		END { if (name != "") print name "\t" text }
	' "$BATS_TEST_DIRNAME/../docs/stream-format.md" | while IFS=$'\t' read -r name text; do
		grep -o '`[^`]*`' <<<"$text" | tr -d '`' | sed -E 's/ +/ /g; s/^ //; s/ $//' |
			grep -E '^((u8|u16|u32|u64|i32|str|bid) [a-z_]+|[a-z_]+ × \()' |
			sed "s/^/$name /"
	done
}

# by_type: lines "NAME (TYPE) ..." ordered by type, each type's lines in their order
by_type() {
	sort -s -t'(' -k2,2n
}

@test "every frame type of the frame table has a section in docs/stream-format.md" {
	cd "$BATS_TEST_DIRNAME/.."
	names=$("$STREAMGEN" layout | sed 's/ (.*//' | uniq)
	[ -n "$names" ]
	for n in $names; do
		grep -qE "^### $n \([0-9]+\)$" docs/stream-format.md || {
			echo "frame '$n' is not documented"
			return 1
		}
	done
	[ "$(echo "$names" | wc -l)" -eq "$(grep -cE "^\s+FR_[A-Z_]+ = [0-9]+," lib/stream.h)" ]
}

@test "documented frame numbers match lib/stream.h" {
	cd "$BATS_TEST_DIRNAME/.."
	grep -E '^### [a-z-]+ \([0-9]+\)$' docs/stream-format.md | while read -r _ name num; do
		num=${num//[()]/}
		enum=$(echo "FR_$name" | tr 'a-z-' 'A-Z_')
		grep -qE "^\s+$enum = $num,$" lib/stream.h || {
			echo "$name ($num) does not match lib/stream.h"
			return 1
		}
	done
}

@test "every frame's fields in docs/stream-format.md are the frame table's: names, types, order" {
	"$STREAMGEN" layout | by_type >"$BATS_TEST_TMPDIR/table"
	doc_layouts | by_type >"$BATS_TEST_TMPDIR/doc"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/table")" -gt 30 ]
	diff "$BATS_TEST_TMPDIR/table" "$BATS_TEST_TMPDIR/doc"
	# The check sees a field out of place: a layout with two fields swapped differs.
	sed -i '0,/u32 pid, u32 tid/s//u32 tid, u32 pid/' "$BATS_TEST_TMPDIR/doc"
	! diff -q "$BATS_TEST_TMPDIR/table" "$BATS_TEST_TMPDIR/doc" || fail "line 69: the negated check succeeded"
}

# ---- the text form: streamgen pack and unpack ----

@test "unpack prints a frame by its fields, leaving out those at their default" {
	printf '%s\n' 'window-stack 0 100 101 3 30000000 2,3' \
		'location id=7 mapping_id=3 address=0x401300 lines=4:10,5:0' \
		'comm 1000 100 101 0 a\x20b' 'target-exit 1500 100 -1' |
		"$STREAMGEN" pack >"$BATS_TEST_TMPDIR/s"
	run -0 "$STREAMGEN" unpack <"$BATS_TEST_TMPDIR/s"
	[ "${lines[0]}" = "header clockid=1 e_machine=62 clock_offset_ns=1700000000000000000 session_id=0x00c0ffee12345678" ]
	[ "${lines[1]}" = "window-stack pid=100 tid=101 count=3 nanos=30000000 locs=2,3" ]
	[ "${lines[2]}" = "location id=7 mapping_id=3 address=0x401300 lines=4:10,5:0" ]
	[ "${lines[3]}" = 'comm time=1000 pid=100 tid=101 comm=a\x20b' ]
	[ "${lines[4]}" = "target-exit time=1500 pid=100 status=-1" ]
	[ "${#lines[@]}" -eq 5 ]
}

# round_trip STREAM: unpack, then pack, gives the stream's very bytes
round_trip() {
	"$STREAMGEN" unpack <"$1" >"$BATS_TEST_TMPDIR/text"
	"$STREAMGEN" pack <"$BATS_TEST_TMPDIR/text" | cmp - "$1" ||
		{ echo "$1 does not pack back"; return 1; }
}

@test "pack(unpack(s)) == s: every crafted stream and every saved stream" {
	local n=0
	for fx in "$BATS_TEST_DIRNAME"/streams/*.txt; do
		"$STREAMGEN" pack <"$fx" >"$BATS_TEST_TMPDIR/packed"
		round_trip "$BATS_TEST_TMPDIR/packed"
		n=$((n + 1))
	done
	# Recordings of the workloads (fuzz/seeds.sh), before and after unwind, emit-pprof.
	for s in "$BATS_TEST_DIRNAME"/../fuzz/corpus/{unwind_stream,stage_aggregate,stage_commit}/*; do
		round_trip "$s"
		n=$((n + 1))
	done
	[ "$n" -gt 50 ]
	# Most of a recording reads as fields, not as raw bytes.
	"$STREAMGEN" unpack <"$BATS_TEST_DIRNAME/../fuzz/corpus/stage_commit/off" >"$BATS_TEST_TMPDIR/text"
	[ "$(grep -c '^raw ' "$BATS_TEST_TMPDIR/text")" -lt 5 ]
	[ "$(grep -c '^window-offcpu-stack ' "$BATS_TEST_TMPDIR/text")" -gt 0 ]
	# A stream cut inside a frame keeps its tail as bytes, and packs back too.
	head -c 300 "$BATS_TEST_DIRNAME/../fuzz/corpus/unwind_stream/fp" >"$BATS_TEST_TMPDIR/cut"
	round_trip "$BATS_TEST_TMPDIR/cut"
	grep -q '^bytes ' "$BATS_TEST_TMPDIR/text"
}

@test "pack refuses a line it cannot read, with its number" {
	run -1 --separate-stderr "$STREAMGEN" pack <<<$'end 1 4\nstack time=x'
	[ "$stderr" = "streamgen: line 2: time: not a number of its size" ]
	run -1 --separate-stderr "$STREAMGEN" pack <<<'mmap nosuch=1'
	[ "$stderr" = "streamgen: line 1: nosuch: no such field" ]
	run -1 --separate-stderr "$STREAMGEN" pack <<<'frob 1'
	[ "$stderr" = "streamgen: line 1: unknown frame 'frob'" ]
	run -1 --separate-stderr "$STREAMGEN" pack <<<'stack locs=1,2 period=1 time=2 time=3'
	[ "$stderr" = "streamgen: line 1: time: given twice" ]
}

# ---- crafted streams (tests/streams/README) ----
# Each stage named fails with its one line, and the output directory is byte for byte what it
# was.  As root, every stage runs as nobody: the checks are the stream's, not a privilege's.

# snapshot DIR: every file's content and every entry's name, type, mode, size and time
snapshot() {
	(cd "$1" && find . -type f -exec sha256sum {} + | sort && ls -la --time-style=full-iso .)
}

# as_user CMD...: CMD as nobody when the tests run as root, else as it is
as_user() {
	if [ "$(id -u)" -eq 0 ]; then
		setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all "$@"
	else
		"$@"
	fi
}

# stage_to FILE CMD...: CMD on the crafted stream, as the user, its stream output into FILE
stage_to() {
	local to=$1
	shift
	as_user "$@" <"$BATS_TEST_TMPDIR/stream" >"$to"
}

# fanout_to FILE DIR: fanout on the crafted stream with one derived emitter (emit-collapsed,
# writing into DIR) on two FIFOs, as the driver starts it; its stream output into FILE
fanout_to() {
	local f=$BATS_TEST_TMPDIR/branch rc=0
	mkdir -p "$f" && rm -f "$f/in" "$f/out" && mkfifo -m 666 "$f/in" "$f/out"
	as_user "$RP_BIN/emit-collapsed" --output "$2" <"$f/in" >"$f/out" 2>"$f/branch.err" &
	stage_to "$1" "$RP_BIN/fanout" --branch "emit-collapsed=$f/in,$f/out" || rc=$?
	wait $! || true
	return $rc
}

# crafted FIXTURE: runs the fixture's stages on it
crafted() {
	local fx=$BATS_TEST_DIRNAME/streams/$1.txt stage want dir line
	[ -f "$fx" ]
	"$STREAMGEN" pack <"$fx" >"$BATS_TEST_TMPDIR/stream"
	chmod a+rx "$BATS_TEST_TMPDIR" "$(dirname "$BATS_TEST_TMPDIR")" \
		"$(dirname "$(dirname "$BATS_TEST_TMPDIR")")" 2>/dev/null || true
	for stage in $(sed -n 's/^# stage: //p' "$fx"); do
		dir=$BATS_TEST_TMPDIR/$stage/out
		mkdir -p "$dir"
		echo victim >"$dir/victim.txt"
		echo other >"$dir/other.txt"
		while read -r kind a b; do
			case $kind in
			plant:) printf '%b\n' "${b}" >"$dir/$(printf '%b' "$a")" ;;
			symlink:) ln -s "$b" "$dir/$a" ;;
			hardlink:) ln "$dir/$b" "$dir/$a" ;;
			esac
		done < <(grep -E '^# (plant|symlink|hardlink): ' "$fx" | sed 's/^# //')
		[ "$(id -u)" -ne 0 ] || chown -R -h nobody:nogroup "$BATS_TEST_TMPDIR/$stage"
		touch -h -d '2020-01-01 00:00:00' "$dir" "$dir"/* "$dir"/.[!.]* 2>/dev/null || true
		snapshot "$dir" >"$BATS_TEST_TMPDIR/before"
		# A stage's stream goes to a file; commit's stdout is what it published.
		case $stage in
		unwind) run --separate-stderr stage_to "$BATS_TEST_TMPDIR/out" "$RP_BIN/unwind" \
			--module-cache "$dir" ;;
		aggregate) run --separate-stderr stage_to "$BATS_TEST_TMPDIR/out" "$RP_BIN/aggregate" ;;
		commit) run --separate-stderr stage_to /dev/stdout "$RP_BIN/commit" --output "$dir" ;;
		fanout) run --separate-stderr fanout_to "$BATS_TEST_TMPDIR/out" "$dir" ;;
		*) run --separate-stderr stage_to "$BATS_TEST_TMPDIR/out" "$RP_BIN/$stage" --output "$dir" ;;
		esac
		want=$(sed -n 's/^# error: //p' "$fx")
		want=${want//\$STAGE/$stage}
		want=${want//\$DIR/$dir}
		echo "$stage: status $status, stderr: $stderr"
		[ "$status" -eq 1 ]
		[ "${#stderr_lines[@]}" -eq 1 ]
		[ "${stderr_lines[0]}" = "$want" ] || { echo "expected: $want"; return 1; }
		[ "$stage" = commit ] && [ -n "$output" ] && { echo "published: $output"; return 1; }
		snapshot "$dir" | diff "$BATS_TEST_TMPDIR/before" -
	done
}

@test "crafted: a file frame naming victim.txt does not replace it"   { crafted commit-victim; }
@test "crafted: a file frame naming the window's diagnostics"         { crafted commit-own-diagnostics; }
@test "crafted: a flipped byte in a file name"                        { crafted commit-flipped-byte; }
@test "crafted: a temporary file that is a symbolic link"             { crafted commit-temp-symlink; }
@test "crafted: a temporary file with another link"                   { crafted commit-temp-hardlink; }
@test "crafted: a temporary file not named for its file"              { crafted commit-temp-name; }
@test "crafted: a file kind no emitter announces"                     { crafted commit-kind; }
@test "crafted: a file with another kind's flags"                     { crafted commit-flags; }
@test "crafted: a discarded file of a window still open"              { crafted commit-discard-early; }
@test "crafted: a repeated window-stack frame"                        { crafted window-stack-twice; }
@test "crafted: a repeated end frame, in every stage"                 { crafted end-twice; }
@test "crafted: a frame after the end frame"                          { crafted frame-after-end; }
@test "crafted: a file frame into unwind and aggregate"               { crafted file-into-unwind; }
@test "crafted: a window frame into unwind and aggregate"             { crafted window-into-aggregate; }
@test "crafted: a second window-end of a window"                      { crafted window-end-twice; }
@test "crafted: a window index skipped"                               { crafted window-skipped; }
@test "crafted: a window index going back behind fanout"              { crafted window-backwards; }
@test "crafted: nested windows"                                       { crafted window-nested; }
@test "crafted: a window stack outside its window"                    { crafted window-stack-outside; }
@test "crafted: a window end without its start"                       { crafted window-end-without-start; }
@test "crafted: the end frame inside a window"                        { crafted end-inside-window; }
@test "crafted: two files of one kind in a window"                    { crafted file-kind-twice; }
@test "crafted: a file frame between windows"                         { crafted file-outside-window; }
@test "crafted: a second stream header"                               { crafted header-twice; }
@test "crafted: a page stack outside its window"                      { crafted window-page-stack-outside; }
@test "crafted: a repeated window-page-stack frame"                   { crafted window-page-stack-twice; }
@test "crafted: a page stack of a target without physical profiles"   { crafted page-stack-not-physical; }

# Frames that break a rule of their own (docs/stream-format.md): every stage that decodes them.
@test "corrupt: an end frame cut short"                               { crafted corrupt-end-short; }
@test "corrupt: debuginfod outcomes short of the modules queried"    { crafted corrupt-debuginfod-sum; }
@test "corrupt: a file name outside the output directory"             { crafted corrupt-file-name; }
@test "corrupt: a location line of function 0"                        { crafted corrupt-location-line; }
@test "corrupt: a mapping that wraps around"                          { crafted corrupt-mmap-wraps; }
@test "corrupt: a build id of 21 bytes"                               { crafted corrupt-modules-build-id; }
@test "corrupt: an unknown off-CPU phase"                             { crafted corrupt-offcpu-phase; }
@test "corrupt: a sample with too many addresses"                     { crafted corrupt-sample-addresses; }
@test "corrupt: a span with a frame's flag"                           { crafted corrupt-span-flags; }
@test "corrupt: a stack through location 0"                           { crafted corrupt-stack-location; }
@test "corrupt: a NUL byte in a name"                                 { crafted corrupt-string-nul; }
@test "corrupt: an off-CPU probability over 100 percent"              { crafted corrupt-target-probability; }
@test "corrupt: a window stack through location 0"                    { crafted corrupt-window-stack-location; }
@test "corrupt: a window that ends before it starts"                  { crafted corrupt-window-range; }
@test "corrupt: a page free of order 11"                              { crafted corrupt-page-order; }
@test "corrupt: a window page stack through location 0"               { crafted corrupt-window-page-stack-location; }

@test "every stage that reads a stream has crafted streams" {
	for stage in unwind aggregate emit-pprof emit-svg emit-collapsed emit-firefox fanout commit; do
		[ "$(grep -lE "^# stage: (.* )?$stage( |$)" "$BATS_TEST_DIRNAME"/streams/*.txt |
			wc -l)" -ge 3 ] || { echo "$stage has fewer than 3"; return 1; }
	done
}

@test "every crafted stream has a test" {
	cd "$BATS_TEST_DIRNAME/streams"
	for f in *.txt; do
		grep -q "crafted ${f%.txt};" "$BATS_TEST_DIRNAME/stream-spec.bats" ||
			{ echo "$f is not run"; return 1; }
	done
}

#!/usr/bin/env bats
# The debug cache (docs/debug-cache.md): separate debug files with compressed DWARF are
# kept inflated by build id, read back by later runs, checked, and kept under their limit.

load helper

setup_file() {
	[ "$(id -u)" -eq 0 ] || return 0
	chmod a+rx "$BATS_FILE_TMPDIR" "$(dirname "$BATS_FILE_TMPDIR")" 2>/dev/null || true
	# One recording of the stripped program whose debug file has compressed DWARF; each
	# test replays its saved stream.
	local rec=$BATS_FILE_TMPDIR/rec
	"$RP_WORKLOADS/zbuildid/stripped_z" 30 3>&- &
	local pid=$!
	"$RP" record --pid "$pid" --duration 2s --window 2s --cpu-frequency 499 \
		--profiles cpu --debug-cache none --save-stream "$BATS_FILE_TMPDIR/rec.stream" \
		--output "$rec" >/dev/null 3>&-
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null || true
}

setup() {
	require_root
	open_tmpdirs
	zsym=$RP_WORKLOADS/zsymdir
	id=$(readelf -n "$RP_WORKLOADS/zbuildid/stripped_z" | awk '/Build ID/ { print $3 }')
	[ -n "$id" ]
	dc=$BATS_TEST_TMPDIR/dc
}

# replay_to DIR [OPTIONS...]: replays the saved stream into DIR with collapsed stacks.
replay_to() {
	local d=$1
	shift
	"$RP" replay --input "$BATS_FILE_TMPDIR/rec.stream" --module-cache "$BATS_FILE_TMPDIR/rec/.modules" \
		--collapsed --output "$d" "$@" >/dev/null 3>&-
}

collapsed_of() {
	cat "$1/$(outputs "$1" cpu collapsed | tail -n 1)"
}

@test "debug cache: a compressed debug file is kept inflated under its build id, and read back" {
	replay_to "$BATS_TEST_TMPDIR/a" --symbol-dir "$zsym" --debug-cache "$dc"
	[ -f "$dc/$id.debug" ]
	# the copy is an ELF file of the same build id, its DWARF no longer compressed
	run -0 readelf -n "$dc/$id.debug"
	assert_output --partial "$id"
	run -0 readelf -SW "$dc/$id.debug"
	assert_output --regexp '\.debug_info +PROGBITS'
	run -1 grep -E '\.debug_info .* C ' <<<"$output"
	collapsed_of "$BATS_TEST_TMPDIR/a" >"$BATS_TEST_TMPDIR/a.txt"
	grep -q 'stripped_outer;stripped_hot' "$BATS_TEST_TMPDIR/a.txt"
	# Without the symbol directory the names come from the cache alone, the same stacks.
	touch -d '2 days ago' "$dc/$id.debug"
	replay_to "$BATS_TEST_TMPDIR/b" --debug-cache "$dc"
	collapsed_of "$BATS_TEST_TMPDIR/b" >"$BATS_TEST_TMPDIR/b.txt"
	cmp "$BATS_TEST_TMPDIR/a.txt" "$BATS_TEST_TMPDIR/b.txt"
	# a copy used is marked used: evicted last
	[ "$(stat -c %Y "$dc/$id.debug")" -gt "$(date -d '1 day ago' +%s)" ]
	# and without the cache, nothing names them
	replay_to "$BATS_TEST_TMPDIR/c" --debug-cache none
	run -0 collapsed_of "$BATS_TEST_TMPDIR/c"
	refute_output --partial stripped_hot
}

@test "debug cache: a damaged or foreign copy is a miss, and is written again" {
	mkdir -p "$dc"
	for damage in garbage truncated foreign; do
		case $damage in
		garbage) head -c 5000 /dev/urandom >"$dc/$id.debug" ;;
		truncated) replay_to "$BATS_TEST_TMPDIR/t" --symbol-dir "$zsym" --debug-cache "$dc"
			truncate -s 3000 "$dc/$id.debug" ;;
		foreign) cp "$RP_WORKLOADS/busy2" "$dc/$id.debug" ;;
		esac
		rm -rf "$BATS_TEST_TMPDIR/o"
		replay_to "$BATS_TEST_TMPDIR/o" --debug-cache "$dc"
		run -0 collapsed_of "$BATS_TEST_TMPDIR/o"
		refute_output --partial stripped_hot
		rm -rf "$BATS_TEST_TMPDIR/o"
		replay_to "$BATS_TEST_TMPDIR/o" --symbol-dir "$zsym" --debug-cache "$dc"
		run -0 collapsed_of "$BATS_TEST_TMPDIR/o"
		assert_output --partial stripped_outer
		run -0 readelf -n "$dc/$id.debug"
		assert_output --partial "$id"
	done
}

@test "debug cache: the copy's unit index is kept beside it and read back; a damaged one is written again" {
	replay_to "$BATS_TEST_TMPDIR/a" --symbol-dir "$zsym" --debug-cache "$dc"
	[ -f "$dc/$id.index" ]
	[ "$(head -c 8 "$dc/$id.index")" = RPDBGIX2 ]
	collapsed_of "$BATS_TEST_TMPDIR/a" >"$BATS_TEST_TMPDIR/a.txt"
	grep -q 'stripped_outer;stripped_hot' "$BATS_TEST_TMPDIR/a.txt"
	sum=$(md5sum <"$dc/$id.index")
	# A run that reads the index leaves it as it is: the same stacks, the file not written.
	touch -d '2 days ago' "$dc/$id.index"
	replay_to "$BATS_TEST_TMPDIR/b" --debug-cache "$dc"
	collapsed_of "$BATS_TEST_TMPDIR/b" | cmp - "$BATS_TEST_TMPDIR/a.txt"
	[ "$(stat -c %Y "$dc/$id.index")" -lt "$(date -d '1 day ago' +%s)" ]
	# Damaged, cut short, or of another copy (the copy grew): refused, and written again.
	for damage in garbage truncated copy; do
		case $damage in
		garbage) head -c 5000 /dev/urandom >"$dc/$id.index" ;;
		truncated) truncate -s 100 "$dc/$id.index" ;;
		copy) printf 'RPDBGIX2' >"$BATS_TEST_TMPDIR/x"
			tail -c +9 "$dc/$id.index" >>"$BATS_TEST_TMPDIR/x"
			# the copy's size (bytes 8-15), one more than it is
			size=$(($(stat -c %s "$dc/$id.debug") + 1))
			printf '%016x' "$size" | sed 's/../& /g' |
				awk '{ for (i = NF; i >= 1; i--) printf "\\x%s", $i }' |
				xargs -0 printf | dd of="$BATS_TEST_TMPDIR/x" bs=1 seek=8 conv=notrunc 2>/dev/null
			cp "$BATS_TEST_TMPDIR/x" "$dc/$id.index" ;;
		esac
		rm -rf "$BATS_TEST_TMPDIR/o"
		replay_to "$BATS_TEST_TMPDIR/o" --debug-cache "$dc"
		collapsed_of "$BATS_TEST_TMPDIR/o" | cmp - "$BATS_TEST_TMPDIR/a.txt"
		[ "$(md5sum <"$dc/$id.index")" = "$sum" ] || fail "$damage: the index was not written again"
	done
}

@test "debug cache: kept under --max-debug-cache, least recently used first; stale temporary files go" {
	mkdir -p "$dc"
	for k in 1 2 3; do
		head -c 300000 /dev/urandom >"$dc/0${k}00000000000000000000000000000000000000.debug"
		touch -d "$((10 - k)) days ago" "$dc/0${k}00000000000000000000000000000000000000.debug"
		echo index >"$dc/0${k}00000000000000000000000000000000000000.index"
	done
	echo x >"$dc/.left.123456.tmp"
	touch -d '1 hour ago' "$dc/.left.123456.tmp"
	echo y >"$dc/.fresh.123456.tmp"
	echo z >"$dc/notes.txt"
	replay_to "$BATS_TEST_TMPDIR/o" --symbol-dir "$zsym" --debug-cache "$dc" \
		--max-debug-cache 500KiB
	[ -f "$dc/$id.debug" ]
	# 900 KB of old copies and the new one: the two least recently used go, and 300 KB is
	# under the limit
	[ ! -e "$dc/0100000000000000000000000000000000000000.debug" ]
	[ ! -e "$dc/0200000000000000000000000000000000000000.debug" ]
	[ -f "$dc/0300000000000000000000000000000000000000.debug" ]
	# each copy's index goes with it
	[ ! -e "$dc/0100000000000000000000000000000000000000.index" ]
	[ ! -e "$dc/0200000000000000000000000000000000000000.index" ]
	[ -f "$dc/0300000000000000000000000000000000000000.index" ]
	[ ! -e "$dc/.left.123456.tmp" ]
	[ -f "$dc/.fresh.123456.tmp" ]
	[ -f "$dc/notes.txt" ]
	# a copy larger than the whole limit is not written
	rm -f "$dc/$id.debug"
	replay_to "$BATS_TEST_TMPDIR/p" --symbol-dir "$zsym" --debug-cache "$dc" \
		--max-debug-cache 1KiB
	[ ! -e "$dc/$id.debug" ]
	[ -f "$dc/0300000000000000000000000000000000000000.debug" ]
}

@test "debug cache: by default under XDG_CACHE_HOME for the caller; one that cannot be made is said and skipped" {
	XDG_CACHE_HOME=$BATS_TEST_TMPDIR/xdg replay_to "$BATS_TEST_TMPDIR/a" --symbol-dir "$zsym"
	[ -f "$BATS_TEST_TMPDIR/xdg/rustprofile/debug/$id.debug" ]
	run -0 stat -c %a "$BATS_TEST_TMPDIR/xdg/rustprofile/debug"
	assert_output 700
	# a file in the way: one line, and the run publishes its windows all the same
	touch "$BATS_TEST_TMPDIR/file"
	run -0 --separate-stderr replay_to "$BATS_TEST_TMPDIR/b" --symbol-dir "$zsym" \
		--debug-cache "$BATS_TEST_TMPDIR/file/sub"
	[ "$(printf '%s\n' "$stderr" | grep -c 'going on without it')" -eq 1 ]
	run -0 collapsed_of "$BATS_TEST_TMPDIR/b"
	assert_output --partial stripped_outer
}

@test "debug cache: bad options are one line and exit 1 before anything is written" {
	run -1 "$RP" replay --input "$BATS_FILE_TMPDIR/rec.stream" --output "$BATS_TEST_TMPDIR/o" \
		--max-debug-cache lots
	assert_output --partial "--max-debug-cache"
	[ "${#lines[@]}" -eq 1 ]
	[ ! -e "$BATS_TEST_TMPDIR/o" ]
	run -1 "$RP_BIN/unwind" --debug-cache '' </dev/null
	assert_output "unwind: --debug-cache: empty directory name"
	run -1 "$RP_BIN/unwind" --max-debug-cache 0 </dev/null
	assert_output --partial "--max-debug-cache"
}

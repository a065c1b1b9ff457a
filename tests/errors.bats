#!/usr/bin/env bats
# Bad options and bad streams: one line, non-zero exit, nothing partial in the output dir.

load helper

setup() {
	open_tmpdirs
	out=$BATS_TEST_TMPDIR/out
	mkdir -p "$out"
}

teardown() {
	stop_workload
}

# rejects MESSAGE ARGS...: the driver refuses with MESSAGE on one stderr line and no files.
rejects() {
	local msg=$1
	shift
	run --separate-stderr "$RP" "$@" --output "$out"
	[ "$status" -ne 0 ]
	echo "stderr: $stderr"
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "${stderr_lines[0]}" == *"$msg"* ]]
	[ -z "$(ls -A "$out")" ]
}

@test "options: two selectors"              { rejects "exactly one target selector" record --pid 1 --pid 2; }
@test "options: no selector"                { rejects "exactly one target selector" record; }
@test "options: frequency 0"                { rejects "cpu-frequency" record --pid 1 --cpu-frequency 0; }
@test "options: frequency 1000"             { rejects "cpu-frequency" record --pid 1 --cpu-frequency 1000; }
@test "options: window 0"                   { rejects "greater than zero" record --pid 1 --window 0; }
@test "options: reorder window over window" { rejects "may not exceed --window" record --pid 1 --window 1s --event-reorder-window 2s; }
@test "options: unknown option"             { rejects "unknown option '--frobnicate'" record --pid 1 --frobnicate; }
@test "options: bad duration"               { rejects "invalid duration" record --pid 1 --duration 10; }
@test "options: keep-windows 0"             { rejects "keep-windows" record --pid 1 --keep-windows 0; }
@test "options: allocation interval 0"      { rejects "--alloc-interval" record --pid 1 --alloc-interval 0; }
@test "options: unknown allocator"          { rejects "unknown family 'tcmalloc'" record --pid 1 --allocator tcmalloc; }
@test "options: off-cpu ring buffer size"   { rejects "not a power of two" record --pid 1 --profiles off-cpu --offcpu-ring-buffer 5000; }
@test "options: missing process"            { require_root; rejects "4194304" record --pid 4194304 --duration 1s; }
@test "options: launch without a command"   { rejects "needs a command" launch; }
@test "options: unknown Firefox format"     { rejects "json or jslb" record --pid 1 --firefox-profile xml; }
@test "options: timeline cap 0"             { rejects "max-timeline-samples" record --pid 1 --max-timeline-samples 0; }

# stage_rejects TEXT STAGE ARGS...: the stage exits 1 with one line containing TEXT.
stage_rejects() {
	local text=$1
	shift
	run --separate-stderr "$RP_BIN/$@" </dev/null
	[ "$status" -eq 1 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "${stderr_lines[0]}" == *"$text"* ]]
}

@test "options: collect --window 0"         { stage_rejects "must be above zero" collect --pid 1 --window 0; }
@test "options: unwind --symbol-dir that does not exist" {
	stage_rejects "unwind: --symbol-dir '$BATS_TEST_TMPDIR/none': No such file or directory" \
		unwind --symbol-dir "$BATS_TEST_TMPDIR" --symbol-dir "$BATS_TEST_TMPDIR/none"
	stage_rejects "unwind: --symbol-dir '$BATS_TEST_TMPDIR/none': No such file or directory" \
		unwind --check --symbol-dir "$BATS_TEST_TMPDIR/none"
	: >"$BATS_TEST_TMPDIR/file"
	stage_rejects "unwind: --symbol-dir '$BATS_TEST_TMPDIR/file': not a directory" \
		unwind --symbol-dir "$BATS_TEST_TMPDIR/file"
	# An existing directory passes the check.
	run -0 "$RP_BIN/unwind" --check --symbol-dir "$BATS_TEST_TMPDIR"
}
@test "options: fanout without a branch"    { stage_rejects "no --branch" fanout; }
@test "options: fanout malformed branch"    { stage_rejects "NAME=IN,OUT" fanout --branch svg=onlyin; }
@test "options: fanout --max-pending-windows 0" { stage_rejects "--max-pending-windows: 0 is out of range 1..1000" fanout --branch s=i,o --max-pending-windows 0; }
@test "options: fanout --max-pending-windows x" { stage_rejects "--max-pending-windows: 'x' is not a number" fanout --branch s=i,o --max-pending-windows x; }
@test "options: fanout missing FIFO"        { stage_rejects "cannot open '/nonexistent/in'" fanout --branch s=/nonexistent/in,/nonexistent/out; }

# A saved stream to break in various ways.
make_stream() {
	require_root
	start_workload cpu_split 10
	"$RP" record --pid "$wpid" --duration 3s --window 1s --output "$BATS_TEST_TMPDIR/live" \
		--save-stream "$BATS_TEST_TMPDIR/rec.stream" >/dev/null 3>&-
	stop_workload
	stream=$BATS_TEST_TMPDIR/rec.stream
	size=$(stat -c %s "$stream")
}

# Each stage alone, fed its real input cut in the middle of a frame: one line, non-zero exit.
@test "streams: each stage refuses a truncated stream with one line" {
	make_stream
	t=$BATS_TEST_TMPDIR
	mkdir -p "$t/e"
	"$RP_BIN/unwind" <"$stream" >"$t/unwind.in.next"
	"$RP_BIN/aggregate" --window 1s <"$t/unwind.in.next" >"$t/aggregate.in.next"
	"$RP_BIN/emit-pprof" --output "$t/e" <"$t/aggregate.in.next" >"$t/emit.in.next"
	cp "$stream" "$t/unwind.in"
	cp "$t/unwind.in.next" "$t/aggregate.in"
	cp "$t/aggregate.in.next" "$t/emit-pprof.in"
	cp "$t/emit.in.next" "$t/commit.in"
	for stage in unwind aggregate emit-pprof commit; do
		n=$(stat -c %s "$t/$stage.in")
		head -c $((n * 2 / 3 + 5)) "$t/$stage.in" >"$t/cut"
		case $stage in
		unwind | aggregate) run --separate-stderr "$RP_BIN/$stage" <"$t/cut" ;;
		emit-pprof) run --separate-stderr "$RP_BIN/$stage" --output "$out" <"$t/cut" ;;
		commit) run --separate-stderr "$RP_BIN/$stage" --output "$t/e" <"$t/cut" ;;
		esac
		echo "$stage: $status ${stderr_lines[*]}"
		# 4: the input ended early (lib/stream.h), what the driver reads as an echo.
		[ "$status" -eq 4 ]
		[ "${#stderr_lines[@]}" -eq 1 ]
		[[ "${stderr_lines[0]}" == "$stage: "*truncated* ]]
	done
	# emit-pprof published nothing and removed the file of the window it was writing; the
	# hidden temporaries of earlier windows stay for the commit stage that was told of them.
	[ -z "$(ls "$out")" ]
	# commit published whole windows only: each pprof has its diagnostics.
	for f in $(outputs "$t/e" cpu pb.gz); do
		[ -e "$t/e/$(echo "$f" | sed 's/^cpu-/diagnostics-/; s/\.pb\.gz$/.json/')" ]
	done
}

# The same inputs without their last frame, the 20-byte end frame: a cut at a frame boundary
# is a truncated stream too, for the stages that end on it and for the emitters.
@test "streams: each stage refuses a stream cut just before its end frame" {
	make_stream
	t=$BATS_TEST_TMPDIR
	mkdir -p "$t/e" "$out"
	"$RP_BIN/unwind" <"$stream" >"$t/aggregate.in"
	"$RP_BIN/aggregate" --window 1s <"$t/aggregate.in" >"$t/emit.in"
	"$RP_BIN/emit-pprof" --output "$t/e" <"$t/emit.in" >"$t/commit.in"
	for stage in unwind aggregate emit-pprof emit-svg emit-collapsed emit-firefox commit; do
		case $stage in
		unwind) in=$stream ;;
		aggregate) in=$t/aggregate.in ;;
		commit) in=$t/commit.in ;;
		*) in=$t/emit.in ;;
		esac
		n=$(stat -c %s "$in")
		head -c $((n - 20)) "$in" >"$t/cut"
		case $stage in
		unwind | aggregate) run --separate-stderr "$RP_BIN/$stage" <"$t/cut" ;;
		commit) run --separate-stderr "$RP_BIN/$stage" --output "$t/e" <"$t/cut" ;;
		*) run --separate-stderr "$RP_BIN/$stage" --output "$out" <"$t/cut" ;;
		esac
		echo "$stage: $status ${stderr_lines[*]}"
		# 4: the input ended early (lib/stream.h), what the driver reads as an echo.
		[ "$status" -eq 4 ]
		[ "${#stderr_lines[@]}" -eq 1 ]
		[ "${stderr_lines[0]}" = "$stage: stdin: truncated stream: it ended without an end frame" ]
	done
}

@test "streams: replay of a corrupt stream fails with one line and publishes no partial window" {
	make_stream
	cp "$stream" "$BATS_TEST_TMPDIR/bad"
	# Overwrite the header of the frame that starts nearest the middle with a huge length.
	off=$(python3 - "$stream" <<-'EOF'
		import struct, sys
		data = open(sys.argv[1], "rb").read()
		pos = struct.unpack_from("<H", data, 10)[0]
		while pos + 8 <= len(data) and pos < len(data) // 2:
		    pos += 8 + struct.unpack_from("<I", data, pos + 4)[0]
		print(pos)
	EOF
	)
	printf '\377\377\377\177\377\377\377\177' |
		dd of="$BATS_TEST_TMPDIR/bad" bs=1 seek="$off" conv=notrunc 2>/dev/null
	run --separate-stderr "$RP" replay --input "$BATS_TEST_TMPDIR/bad" --window 1s --output "$out"
	[ "$status" -ne 0 ]
	echo "$stderr"
	[ -z "$(ls -A "$out" | grep tmp)" ]
	# Every published window is complete: each cpu file has its diagnostics.
	for f in $(outputs "$out" cpu pb.gz); do
		[ -e "$out/$(echo "$f" | sed 's/^cpu-/diagnostics-/; s/\.pb\.gz$/.json/')" ]
	done
}

@test "streams: input that is not a stream is refused by every stage" {
	echo "hello" >"$BATS_TEST_TMPDIR/junk"
	for stage in unwind aggregate; do
		run --separate-stderr "$RP_BIN/$stage" <"$BATS_TEST_TMPDIR/junk"
		[ "$status" -ne 0 ]
		[[ "${stderr_lines[0]}" == "$stage: "* ]]
	done
	for stage in emit-pprof commit; do
		run --separate-stderr "$RP_BIN/$stage" --output "$out" <"$BATS_TEST_TMPDIR/junk"
		[ "$status" -ne 0 ]
		[[ "${stderr_lines[0]}" == "$stage: "* ]]
	done
	[ -z "$(ls -A "$out")" ]
}

@test "preflight: a target with more than 1024 threads is refused, whatever --max-threads says" {
	require_root
	start_workload many_threads 30 1100
	for _ in $(seq 100); do
		[ "$(ls "/proc/$wpid/task" | wc -l)" -lt 1100 ] || break
		sleep 0.1
	done
	for limit in '' 2000; do
		run --separate-stderr "$RP" record --pid "$wpid" ${limit:+--max-threads $limit} \
			--duration 1s --output "$out"
		echo "$stderr"
		[ "$status" -ne 0 ]
		[ "${#stderr_lines[@]}" -eq 1 ]
		[ "${stderr_lines[0]}" = "collect: preflight threads: target has 1100 threads, more than the limit 1024" ]
		[ -z "$(ls -A "$out")" ]
	done
	stop_workload
}

@test "--max-threads bounds the threads the perf backend opens events for, with a warning" {
	require_root
	start_workload busy2 10
	sleep 0.3
	out=$BATS_TEST_TMPDIR/rec # made by the driver, for the unprivileged stages
	run -0 --separate-stderr "$RP" record --pid "$wpid" --max-threads 2 --unwind fp \
		--duration 2s --window 2s --output "$out"
	stop_workload
	text="--max-threads 2: perf events opened for 2 of the target's 3 threads; 1 not sampled"
	echo "$stderr"
	echo "$stderr" | grep -qxF "collect: $text"
	d=$out/$(outputs "$out" diagnostics json)
	run -0 jq -e --arg t "$text" '.warnings == [$t]' "$d"
	# The main thread and the first worker are sampled; the second worker is not.
	run -0 pprof -tags "$out/$(outputs "$out" cpu pb.gz)"
	assert_output --partial rp-busy-1
	refute_output --partial rp-busy-2
}

# ---- temporary files: none outlives its run ----

teardown() {
	if [ -n "${full:-}" ] && mountpoint -q "$full"; then umount "$full"; fi
}

# no_temps DIR: DIR holds no temporary output file (".NAME.tmp-XXXXXX")
no_temps() {
	local left
	left=$(find "$1" -name '.*.tmp-*')
	[ -z "$left" ] || { echo "left behind: $left"; return 1; }
}

@test "temporaries: a full disk in a replay with every output leaves one line and no temporary file" {
	make_stream
	full=$BATS_TEST_TMPDIR/full
	mkdir -p "$full"
	mount -t tmpfs -o size=64k,mode=0777 tmpfs "$full" || skip "cannot mount a tmpfs"
	run --separate-stderr "$RP" replay --input "$stream" --window 100ms --svg --collapsed \
		--firefox-profile json --module-cache "$BATS_TEST_TMPDIR/live/.modules" --output "$full"
	echo "status $status, stderr: $stderr"
	ls -la "$full"
	[ "$status" -eq 1 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "${stderr_lines[0]}" == *"No space left on device"* ]]
	no_temps "$full"
	umount "$full"
}

# stall_lib: the LD_PRELOAD library that stalls one stage in the fsync of a temporary file.
stall_lib() {
	stall=$BATS_TEST_TMPDIR/stallfsync.so
	"${CC:-cc}" -std=c17 -Wall -Wextra -Werror -D_GNU_SOURCE -O1 -shared -fPIC -o "$stall" \
		"$BATS_TEST_DIRNAME/tools/stallfsync.c" -ldl
	chmod a+rx "$stall"
}

@test "temporaries: an emitter killed while it writes its file leaves no temporary file" {
	make_stream
	stall_lib
	mkdir -p "$BATS_TEST_TMPDIR/pids"
	chmod 777 "$BATS_TEST_TMPDIR/pids"
	for e in emit-pprof emit-svg emit-collapsed emit-firefox; do
		local o=$BATS_TEST_TMPDIR/kill-$e pidf=$BATS_TEST_TMPDIR/pids/$e
		: >"$pidf"
		RP_STALL_STAGE=$e RP_STALL_FD=9 LD_PRELOAD=$stall \
			"$RP" replay --input "$stream" --window 1s --svg --collapsed \
			--firefox-profile json --module-cache "$BATS_TEST_TMPDIR/live/.modules" \
			--output "$o" >/dev/null 2>"$BATS_TEST_TMPDIR/err" 9>>"$pidf" &
		local drv=$! i
		for i in $(seq 300); do [ -s "$pidf" ] && break; sleep 0.1; done
		[ -s "$pidf" ] || { echo "$e never wrote a temporary file"; kill "$drv"; return 1; }
		# The stage holds its temporary file, stalled: SIGKILL cannot be caught.
		find "$o" -name ".*.tmp-*" | grep -q . || { echo "$e: no temporary file"; return 1; }
		kill -KILL "$(cat "$pidf")"
		local rc=0
		wait "$drv" || rc=$?
		echo "$e: driver status $rc, stderr: $(cat "$BATS_TEST_TMPDIR/err")"
		[ "$rc" -ne 0 ]
		grep -qx "rustprofile: stage $e was killed by signal 9" "$BATS_TEST_TMPDIR/err"
		no_temps "$o"
	done
}

@test "streams: a file frame injected into a saved stream stops at unwind, the output unchanged" {
	make_stream
	local gen=$BATS_TEST_TMPDIR/streamgen o=$BATS_TEST_TMPDIR/victim/out
	# CC/LDFLAGS come from make (check-asan links with the sanitizers).
	"${CC:-cc}" -std=c17 -D_GNU_SOURCE -O1 -I "$BATS_TEST_DIRNAME/../lib" ${LDFLAGS:-} -o "$gen" \
		"$BATS_TEST_DIRNAME/tools/streamgen.c" "$RP_BIN/../lib/librp.a" -lz -lm
	mkdir -p "$o"
	chmod 755 "$o/.."
	chmod 777 "$o"
	echo victim >"$o/victim.txt"
	echo other >"$o/other.txt"
	# After the header (48 bytes): "rename other.txt over victim.txt".
	head -c 48 "$stream" >"$BATS_TEST_TMPDIR/crafted"
	echo 'file 0 1 cpu victim.txt other.txt' | "$gen" pack | tail -c +49 >>"$BATS_TEST_TMPDIR/crafted"
	tail -c +49 "$stream" >>"$BATS_TEST_TMPDIR/crafted"
	before=$(cd "$o" && find . -type f -exec sha256sum {} + | sort; ls -la --time-style=full-iso .)
	run --separate-stderr "$RP" replay --input "$BATS_TEST_TMPDIR/crafted" --window 1s \
		--module-cache "$BATS_TEST_TMPDIR/live/.modules" --output "$o"
	echo "status $status, stderr: $stderr"
	[ "$status" -eq 1 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[ "${stderr_lines[0]}" = "unwind: stdin: file frame in the input of a stage before the emitters: only emitters write file frames" ]
	after=$(cd "$o" && find . -type f -exec sha256sum {} + | sort; ls -la --time-style=full-iso .)
	diff <(echo "$before") <(echo "$after")
}

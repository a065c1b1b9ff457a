#!/usr/bin/env bats
# commit: window publication, diagnostics JSON, retention and cleanup on a bad stream.
# Streams come from tests/tools/commitgen.c, which also creates the emitters' temp files.

bats_require_minimum_version 1.5.0

setup_file() {
	local root
	root=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
	export RP_BIN=${RP_BIN:-$root/.output/bin}
	export COMMITGEN=$BATS_FILE_TMPDIR/commitgen
	# Built here, not by the Makefile: it is a test fixture, not a product.  Under
	# `make check-asan` librp.a is instrumented, so the second try links the runtimes.
	local build=(-std=c17 -Wall -Wextra -Werror -D_GNU_SOURCE -O1 -g -I "$root/lib"
		-o "$COMMITGEN" "$root/tests/tools/commitgen.c" "$RP_BIN/../lib/librp.a"
		$(pkg-config --libs zlib) -lm)
	"${CC:-cc}" "${build[@]}" 2>/dev/null ||
		clang -fsanitize=address,undefined "${build[@]}"
}

setup() {
	bats_load_library bats-support
	bats_load_library bats-assert
	OUT=$BATS_TEST_TMPDIR/out
	mkdir -p "$OUT"
}

S=0123456789abcdef
# name KIND INDEX EXT: the file name of window INDEX (window i starts at 1700000001+i s)
name() { printf '%s-%s-%06d-%d.%s' "$1" "$S" "$2" "$((1700000001 + $2))000000000" "$3"; }
diag() { echo "$OUT/$(name diagnostics "$1" json)"; }

# commit_run [commit options] -- [commitgen options]
commit_run() {
	local copts=()
	while [ "$1" != -- ]; do copts+=("$1"); shift; done
	shift
	"$COMMITGEN" "$@" "$OUT" >"$BATS_TEST_TMPDIR/stream"
	run --separate-stderr "$RP_BIN/commit" --output "$OUT" "${copts[@]}" \
		<"$BATS_TEST_TMPDIR/stream"
}

# The expected wrote lines for windows FIRST..LAST (optionally with svg).
wrote_lines() {
	local i
	for i in $(seq "$1" "$2"); do
		echo "wrote $OUT/$(name cpu "$i" pb.gz)"
		[ "${3:-}" = svg ] && echo "wrote $OUT/$(name cpu "$i" svg)"
		echo "wrote $(diag "$i")"
	done
}

assert_no_temps() {
	run find "$OUT" -name '.*' -type f
	assert_output ""
}

# assert_windows I...: exactly the files of these windows are in OUT
assert_windows() {
	local want=() i
	for i in "$@"; do
		want+=("$(name cpu "$i" pb.gz)" "$(name diagnostics "$i" json)")
	done
	run bash -c 'ls -A "$1" | sort' _ "$OUT"
	assert_output "$(printf '%s\n' "${want[@]}" | sort)"
}

# jq_is WINDOW FILTER VALUE: the diagnostics of WINDOW give VALUE for FILTER
jq_is() {
	run jq -c "$2" "$(diag "$1")"
	assert_success
	assert_output "$3"
}

@test "commit: three windows are renamed into place, wrote lines in order" {
	commit_run -- --windows 3 --svg
	assert_success
	assert_output "$(wrote_lines 0 2 svg)"
	assert_equal "$stderr" ""
	assert_no_temps
	[ -f "$OUT/$(name cpu 2 svg)" ]
}

@test "commit: diagnostics are valid JSON with every documented field" {
	commit_run -- --windows 2 --svg
	assert_success
	for i in 0 1; do jq -e . "$(diag $i)" >/dev/null; done
	jq_is 0 'keys_unsorted' '["schema_version","session_id","window_index","pid","window_start_unix_nanos","window_end_unix_nanos","duration_nanos","final_window","written_at_unix_nanos","target","requested_profiles","written_profiles","output_paths","warnings","cpu","event_order","allocator_probe","scope","output_backpressure","off_cpu"]'
	jq_is 0 '.cpu|keys_unsorted' '["cpu_nanoseconds","samples","lost_samples","malformed_samples","aggregation_dropped_samples","aggregation_dropped_nanoseconds","frequency_hz","unwind_mode","unwind_requested","unwind_reason","usable_stack_ratio","usable_stacks","unusable_stacks","truncated_stacks","empty_stacks","cyclic_stacks","out_of_mapping_stacks","failed_unwind_stacks","distinct_stacks","max_stacks","fallback_reason","event","event_reason","cpuid","calibration"]'
	jq_is 0 '.event_order|keys_unsorted' '["max_pending_events","reorder_window_nanos","peak_pending_events","late_events","forced_flushes","timeline_events_dropped"]'
	jq_is 1 '[.schema_version,.session_id,.window_index,.pid,.final_window]' "[3,\"$S\",1,4242,true]"
	jq_is 0 '.final_window' 'false'
	jq_is 1 '[.window_start_unix_nanos,.window_end_unix_nanos,.duration_nanos]' '[1700000002000000000,1700000003000000000,1000000000]'
	jq_is 0 '.target' '{"kind":"pid","pid":4242,"executable":"/usr/bin/work\"er","comm":"work\ter","kernel_release":"6.1.0-test"}'
	jq_is 0 '[.requested_profiles,.written_profiles]' '[["cpu"],["cpu"]]'
	jq_is 1 '.output_paths|[.cpu,.diagnostics]' "[\"$OUT/$(name cpu 1 pb.gz)\",\"$(diag 1)\"]"
	jq_is 1 '.output_paths["svg-cpu"]' "\"$OUT/$(name cpu 1 svg)\""
	jq_is 1 '.cpu|[.samples,.usable_stack_ratio,.frequency_hz,.unwind_mode,.fallback_reason]' '[100,0.75,99,"fp",null]'
	jq_is 1 '.event_order.timeline_events_dropped' '119'
	jq_is 0 '.output_backpressure' '{"derived_outputs_shed":false,"pending_windows":0,"skipped_derived_files":0,"otlp_skipped":false}'
	jq_is 0 '.allocator_probe' '{"requested":null,"detected":null,"module":null,"complete":false,"reason":"heap was not requested (--profiles)"}'
	jq_is 0 '(.written_at_unix_nanos > 0)' 'true'
}

@test "commit: warnings go to their window, early ones to the first" {
	commit_run -- --windows 2 --warnings
	assert_success
	jq_is 0 '.warnings' '["warning before the first window","warning inside window"]'
	jq_is 1 '.warnings' '["warning inside window"]'
}

@test "commit: --keep-windows 2 with 4 windows keeps the newest 2" {
	commit_run --keep-windows 2 -- --windows 4
	assert_success
	assert_output "$(wrote_lines 0 3)"
	assert_windows 2 3
}

@test "commit: retention never removes files of other invocations" {
	touch "$OUT/$(name cpu 9 pb.gz)" "$OUT/$(name diagnostics 9 json)"
	commit_run --keep-windows 1 -- --windows 2
	assert_success
	assert_windows 1 9
}

@test "commit: truncated stream fails, keeps earlier windows, leaves no temps" {
	commit_run -- --windows 4 --svg --truncate 2
	# 4: the input ended early (the stage before stopped), lib/stream.h.
	assert_failure 4
	assert_output "$(wrote_lines 0 1 svg)"
	assert_regex "$stderr" "^commit: stdin: truncated [^[:cntrl:]]*$"
	assert_no_temps
	[ -f "$OUT/$(name cpu 1 svg)" ]
	[ -f "$(diag 1)" ]
	[ ! -e "$(diag 2)" ]
}

@test "commit: input without an end frame fails after the last window" {
	commit_run -- --windows 2 --no-end
	assert_failure 4
	assert_output "$(wrote_lines 0 1)"
	assert_equal "$stderr" "commit: stdin: truncated stream: it ended without an end frame"
	assert_no_temps
}

@test "commit: a missing temp file undoes its window only" {
	commit_run -- --windows 2 --svg --missing-temp 1
	assert_failure 1
	assert_output "$(wrote_lines 0 0 svg)"
	assert_equal "${#stderr_lines[@]}" 1
	assert_regex "$stderr" "^commit: stdin: cannot open '.*/\.cpu-.*-000001-.*\.pb\.gz\.tmp-gen000': No such file or directory$"
	assert_no_temps
	run ls -A "$OUT"
	assert_output "$(printf '%s\n' "$(name cpu 0 pb.gz)" "$(name cpu 0 svg)" "$(name diagnostics 0 json)" | sort)"
}

@test "commit: a failed rename undoes the files already renamed" {
	mkdir -p "$OUT/$(name cpu 1 svg)/busy"   # the svg cannot replace a non-empty directory
	commit_run -- --windows 2 --svg
	assert_failure 1
	assert_output "$(wrote_lines 0 0 svg)"
	assert_regex "$stderr" "^commit: cannot rename '[^[:cntrl:]]*svg\.tmp-gen000' to '$OUT/$(name cpu 1 svg)': [^[:cntrl:]]*$"
	assert_no_temps
	run bash -c 'ls -A "$1" | sort' _ "$OUT"
	assert_output "$(printf '%s\n' "$(name cpu 0 pb.gz)" "$(name cpu 0 svg)" "$(name cpu 1 svg)" "$(name diagnostics 0 json)" | sort)"
}

@test "commit: a file name leaving the directory is refused" {
	commit_run -- --windows 1 --bad-name
	assert_failure 1
	assert_output ""
	assert_regex "$stderr" "^commit: stdin: corrupt file frame[^[:cntrl:]]*$"
	[ ! -e "$OUT/../escape.pb.gz" ]
}

@test "commit: a discarded file's temporary is removed, the windows publish whole" {
	commit_run -- --windows 3 --svg --discard 1
	assert_success
	assert_output "$(wrote_lines 0 2 svg)"
	assert_equal "$stderr" ""
	assert_no_temps
}

@test "commit: a discard naming a published file is refused, the file stays" {
	commit_run -- --windows 2 --discard-published 0
	assert_failure 1
	assert_output "$(wrote_lines 0 0)"
	assert_regex "$stderr" "^commit: stdin: file frame for window 0: '$(name cpu 0 pb.gz)' is not a temporary file of '$(name cpu 0 svg)'$"
	[ -f "$OUT/$(name cpu 0 pb.gz)" ]
}

@test "commit: a window end without its start is a stream error" {
	commit_run -- --windows 2 --orphan-end
	assert_failure 1
	assert_output "$(wrote_lines 0 0)"
	assert_equal "$stderr" "commit: stdin: window-end frame for window 7: a window ends after its window-start"
	assert_no_temps
}

@test "commit: not a stream" {
	echo hello >"$BATS_TEST_TMPDIR/junk"
	run --separate-stderr "$RP_BIN/commit" --output "$OUT" "$BATS_TEST_TMPDIR/junk"
	assert_failure 1
	assert_regex "$stderr" "^commit: $BATS_TEST_TMPDIR/junk: [^[:cntrl:]]*$"
}

@test "commit: --keep-windows 0 is a usage error"    { check_usage -o "$OUT" --keep-windows 0; }
@test "commit: --keep-windows junk is a usage error" { check_usage -o "$OUT" --keep-windows 3x; }
@test "commit: --keep-windows -1 is a usage error"   { check_usage -o "$OUT" --keep-windows -1; }
@test "commit: --output is required"                 { check_usage --keep-windows 2; }
@test "commit: a missing output directory"           { check_usage -o "$OUT/nope"; }

# check_usage ARGS...: one line on stderr, nothing on stdout, exit 1
check_usage() {
	run --separate-stderr "$RP_BIN/commit" "$@" </dev/null
	assert_failure 1
	assert_output ""
	assert_equal "${#stderr_lines[@]}" 1
	assert_regex "$stderr" "^commit: "
}

@test "commit: --check accepts good options before DIR exists" {
	run "$RP_BIN/commit" --check --output "$OUT/later" --keep-windows 3
	assert_success
	assert_output ""
	[ ! -e "$OUT/later" ]
}
@test "commit: --check refuses a bad --keep-windows" { check_usage --check -o "$OUT" --keep-windows 0; }

@test "commit: --help" {
	run "$RP_BIN/commit" --help
	assert_success
	assert_line --partial "--keep-windows N"
}

@test "commit: SIGINT is ignored, the window is still published" {
	"$COMMITGEN" --windows 1 "$OUT" >"$BATS_TEST_TMPDIR/stream"
	mkfifo "$BATS_TEST_TMPDIR/fifo"
	"$RP_BIN/commit" --output "$OUT" <"$BATS_TEST_TMPDIR/fifo" >"$BATS_TEST_TMPDIR/stdout" 3>&- &
	local pid=$!
	exec 4>"$BATS_TEST_TMPDIR/fifo"
	sleep 0.2
	kill -INT "$pid"
	cat "$BATS_TEST_TMPDIR/stream" >&4
	exec 4>&-
	wait "$pid"
	assert_equal "$(cat "$BATS_TEST_TMPDIR/stdout")" "$(wrote_lines 0 0)"
}

#!/usr/bin/env bats
# --debuginfod's counts in every window's diagnostics (docs/stream-format.md, "debuginfod"):
# a live record of the stripped build-id workload against real Debian debuginfod servers on
# loopback, one serving its debug file and one serving nothing, and a port nobody listens
# on; then an import of a perf.data capture of that workload, named through the server.

load helper
load debuginfod

setup_file() {
	[ "$(id -u)" -eq 0 ] || return 0
	chmod a+rx "$BATS_FILE_TMPDIR" 2>/dev/null || true
	mkdir -p "$BATS_FILE_TMPDIR/src" "$BATS_FILE_TMPDIR/none"
	cp -r "$RP_WORKLOADS/symdir" "$BATS_FILE_TMPDIR/src/"
	debuginfod_start "$BATS_FILE_TMPDIR/full" "$BATS_FILE_TMPDIR/src/symdir"
	debuginfod_start "$BATS_FILE_TMPDIR/empty" "$BATS_FILE_TMPDIR/none"
	local id port i
	id=$(build_id "$RP_WORKLOADS/buildid/stripped_bid")
	port=$(cat "$BATS_FILE_TMPDIR/full/port")
	for i in $(seq 100); do
		curl -sf -o /dev/null "http://127.0.0.1:$port/buildid/$id/debuginfo" && return 0
		sleep 0.2
	done
	return 1
}

teardown_file() {
	debuginfod_stop "$BATS_FILE_TMPDIR/full"
	debuginfod_stop "$BATS_FILE_TMPDIR/empty"
}

setup() {
	require_root
	open_tmpdirs
	full=http://127.0.0.1:$(cat "$BATS_FILE_TMPDIR/full/port")
	empty=http://127.0.0.1:$(cat "$BATS_FILE_TMPDIR/empty/port")
	bid=$(build_id "$RP_WORKLOADS/buildid/stripped_bid")
	debug=$(find "$RP_WORKLOADS/symdir/.build-id" -name "${bid:2}.debug")
	out=$BATS_TEST_TMPDIR/out
}

teardown() {
	stop_workload
}

# record_stripped URL: 3 s of the stripped workload in 1 s windows, fetching from URL
record_stripped() {
	start_workload buildid/stripped_bid 30
	"$RP" record --pid "$wpid" --duration 3s --window 1s --unwind fp --cpu-frequency 499 \
		--debuginfod "$1" --output "$out" >/dev/null 3>&-
	stop_workload
}

# counts FIELD...: "FIELD=VALUE ..." of the debuginfod object of every window, one a line
counts() {
	local f
	for f in $(outputs "$out" diagnostics json); do
		jq -r '[$ARGS.positional[] as $k | "\($k)=\(.debuginfod[$k])"] | join(" ")' \
			"$out/$f" --args "$@" </dev/null
	done
}

# the five outcomes add up to the modules queried in every window, and the counts of a
# recording only grow from one window to the next
sums_hold() {
	local f last=0
	for f in $(outputs "$out" diagnostics json); do
		jq -e --argjson last "$last" '.debuginfod | .queried == .fetched + .not_found +
			.failed + .out_of_time + .oversized and .requests <= .queried and
			.queried >= $last' "$out/$f" >/dev/null ||
			{ echo "$f: $(jq -c .debuginfod "$out/$f")"; return 1; }
		last=$(jq .debuginfod.queried "$out/$f")
	done
}

# The stripped workload's module lacks symbols and is asked for on its first sample, so
# every window counts it; the vDSO (no file to read) is asked for too once a sample falls in
# it (clock_gettime), which the servers here answer with 404 or not at all.

@test "debuginfod: a served debug file is fetched once and counted in every window" {
	record_stripped "$full"
	[ "$(outputs "$out" diagnostics json | wc -l)" -ge 2 ]
	run -0 counts fetched failed out_of_time oversized bytes_fetched
	local want="fetched=1 failed=0 out_of_time=0 oversized=0 bytes_fetched=$(stat -c %s "$debug")"
	for line in "${lines[@]}"; do
		[ "$line" = "$want" ] || { echo "got: $line, want: $want"; return 1; }
	done
	sums_hold
	run -0 pprof -top "$out/$(outputs "$out" cpu pb.gz | tail -n 1)"
	assert_output --partial stripped_hot
}

@test "debuginfod: a server without the file answers 404, counted as not found" {
	record_stripped "$empty"
	run -0 counts fetched failed bytes_fetched
	[ "$(sort -u <<<"$output")" = "fetched=0 failed=0 bytes_fetched=0" ]
	run -0 counts not_found
	[ "${lines[0]#not_found=}" -ge 1 ]
	sums_hold
	run -0 jq -r '.warnings[]' "$out"/diagnostics-*.json
	assert_output --partial "debuginfod: no debug file for build id $bid: the server has none"
	run -0 pprof -top "$out/$(outputs "$out" cpu pb.gz | tail -n 1)"
	refute_output --partial stripped_hot
}

@test "debuginfod: a port nobody listens on is a failed fetch" {
	record_stripped "http://127.0.0.1:$(free_port)"
	run -0 counts fetched not_found
	[ "$(sort -u <<<"$output")" = "fetched=0 not_found=0" ]
	run -0 counts failed requests
	local failed requests
	read -r failed requests <<<"${lines[0]}"
	[ "${failed#failed=}" = "${requests#requests=}" ]
	[ "${requests#requests=}" -ge 1 ]
	sums_hold
	run -0 jq -r '.warnings[]' "$out"/diagnostics-*.json
	assert_output --partial "debuginfod: no debug file for build id $bid: Connection refused"
}
@test "debuginfod: without the flag the diagnostics have no debuginfod object" {
	start_workload buildid/stripped_bid 30
	"$RP" record --pid "$wpid" --duration 1s --window 1s --unwind fp --cpu-frequency 499 \
		--output "$out" >/dev/null 3>&-
	stop_workload
	run -0 jq -r 'has("debuginfod")' "$out/$(outputs "$out" diagnostics json | tail -n 1)"
	assert_output false
}

@test "debuginfod: import --debuginfod names a stripped binary of a perf.data capture" {
	local exe=$BATS_TEST_TMPDIR/stripped_bid
	cp "$RP_WORKLOADS/buildid/stripped_bid" "$exe"
	perf record -q -e cpu-clock -F 499 -g -o "$BATS_TEST_TMPDIR/perf.data" -- "$exe" 2 \
		>/dev/null 2>&1 3>&-
	chmod a+r "$BATS_TEST_TMPDIR/perf.data"
	# Without the server the binary's functions stay addresses ...
	"$RP" import --input "$BATS_TEST_TMPDIR/perf.data" --output "$BATS_TEST_TMPDIR/plain" \
		>/dev/null
	run -0 pprof -top "$BATS_TEST_TMPDIR/plain/$(outputs "$BATS_TEST_TMPDIR/plain" cpu pb.gz)"
	refute_output --partial stripped_hot
	# ... and with it they are named, the fetch counted.
	"$RP" import --input "$BATS_TEST_TMPDIR/perf.data" --debuginfod "$full" --output "$out" \
		>/dev/null
	run -0 pprof -top "$out/$(outputs "$out" cpu pb.gz | tail -n 1)"
	assert_output --regexp '[0-9.]+m?s +[0-9.]+% .* stripped_hot'
	assert_output --partial stripped_outer
	run -0 counts fetched failed bytes_fetched
	assert_line --index 0 "fetched=1 failed=0 bytes_fetched=$(stat -c %s "$debug")"
	sums_hold
}

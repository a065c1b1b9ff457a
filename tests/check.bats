#!/usr/bin/env bats
# check: what record would find about a target, as text and as the CheckReport JSON
# (docs/check.md), validated against docs/check-report.schema.json and compared with what
# readelf and /proc say.

load helper

SCHEMA="$BATS_TEST_DIRNAME/../docs/check-report.schema.json"

setup() {
	open_tmpdirs
}

teardown() {
	stop_workload
}

# check_json ARGS...: rustprofile check --json ARGS into $j, validated against the schema;
# the exit status of check in $check_rc.
check_json() {
	j=$BATS_TEST_TMPDIR/check.json
	check_rc=0
	"$RP" check --json "$@" >"$j" 2>"$BATS_TEST_TMPDIR/check.err" || check_rc=$?
	cat "$BATS_TEST_TMPDIR/check.err" >&2
	run -0 /usr/bin/python3 "$BATS_TEST_DIRNAME/tools/validate_json.py" "$SCHEMA" "$j"
}

@test "check: a live process: executable, architecture, threads, modules, probes; the JSON validates" {
	require_root
	start_workload cpu_split 30
	sleep 0.3
	check_json --pid "$wpid"
	[ "$check_rc" -eq 0 ]
	run -0 jq -r '.target.executable' "$j"
	assert_output "$(readlink "/proc/$wpid/exe")"
	run -0 jq -r '.target.threads' "$j"
	assert_output "$(ls "/proc/$wpid/task" | wc -l)"
	run -0 jq -r '.target.architecture' "$j"
	assert_output "$(uname -m)"
	run -0 jq -e '.errors == [] and .capabilities.root and .capabilities.perf.status == "ok"
		and .capabilities.lifecycle_ebpf.status == "ok"
		and .capabilities.off_cpu_ebpf.status == "ok"
		and .capabilities.container_cgroup.status == "not_applicable"
		and .capabilities.kernel.release == "'"$(uname -r)"'"' "$j"
	# Every mapped file of the executable mappings is listed once, with readelf's build id
	# and dynamic symbol count.
	exe=$(readlink "/proc/$wpid/exe")
	want_id=$(readelf -n "$exe" | awk '/Build ID:/ { print $3 }')
	run -0 jq -r --arg p "$exe" '.target.modules[] | select(.path == $p) | .build_id' "$j"
	assert_output "$want_id"
	libc=$(awk '$2 ~ /x/ && $6 ~ /libc\.so/ { print $6; exit }' "/proc/$wpid/maps")
	want_dyn=$(readelf -W --dyn-syms "$libc" | awk '$1 ~ /^[0-9]+:$/ && $1 != "0:"' | wc -l)
	run -0 jq -r --arg p "$libc" '.target.modules[] | select(.path == $p) |
		"\(.symbols.dynsym) \(.unwind.eh_frame_hdr) \(.unwind.eh_frame)"' "$j"
	assert_output "$want_dyn true true"
	n_maps=$(awk '$2 ~ /x/ && $6 ~ /^\// { print $6 }' "/proc/$wpid/maps" | sort -u | wc -l)
	run -0 jq -r '.target.modules | length' "$j"
	assert_output "$n_maps"
}

@test "check: the allocator family heap would probe, and the heap eBPF load probe, with no uprobe attached" {
	require_root
	start_workload heap_mix 30
	sleep 0.3
	check_json --pid "$wpid"
	[ "$check_rc" -eq 0 ]
	libc=$(awk '$2 ~ /x/ && $6 ~ /libc\.so/ { print $6; exit }' "/proc/$wpid/maps")
	run -0 jq -e --arg libc "$libc" '.target.allocator == {requested: "auto", detected: "system",
		module: $libc, complete: true, reason: null} and
		.capabilities.heap_ebpf.status == "ok"' "$j"
	# Loaded, never attached: an allocator uprobe hit would have mapped the [uprobes] page.
	sleep 0.3
	run -1 grep -q '\[uprobes\]' "/proc/$wpid/maps"
	# A program with an allocator of its own: no family, a warning, and no load probe.
	stop_workload
	start_workload own_alloc 30
	check_json --pid "$wpid"
	[ "$check_rc" -eq 0 ]
	run -0 jq -e '.target.allocator.detected == null and (.target.allocator.reason | length > 0)
		and .capabilities.heap_ebpf.status == "not_applicable"
		and (.warnings | map(startswith("heap: no supported allocator")) | any)' "$j"
}

@test "check: the text report names the executable, the modules and the probes; exit 0" {
	require_root
	start_workload cpu_split 30
	run -0 "$RP" check --pid "$wpid"
	assert_line --regexp "^executable +$RP_WORKLOADS/cpu_split\$"
	assert_line --regexp "^architecture +$(uname -m)\$"
	assert_line --regexp "^perf access +ok\$"
	assert_line --regexp "^off-CPU eBPF +ok\$"
	assert_line --regexp "^heap eBPF +ok\$"
	assert_line --regexp "^allocator +system in .*libc\.so\.6\$"
	assert_line --regexp "^module +$RP_WORKLOADS/cpu_split\$"
	refute_line --partial "error:"
}

@test "check: a stripped binary has no symbols of its own; --symbol-dir finds its debug file" {
	require_root
	start_workload buildid/stripped_bid 30
	check_json --pid "$wpid"
	exe=$RP_WORKLOADS/buildid/stripped_bid
	run -0 jq -r --arg p "$exe" '.target.modules[] | select(.path == $p) |
		"\(.symbols.symtab) \(.symbols.dwarf) \(.debug_file)"' "$j"
	assert_output "0 false null"
	check_json --pid "$wpid" --symbol-dir "$RP_WORKLOADS/symdir"
	[ "$check_rc" -eq 0 ]
	id=$(readelf -n "$exe" | awk '/Build ID:/ { print $3 }')
	run -0 jq -r --arg p "$exe" '.target.modules[] | select(.path == $p) | .debug_file' "$j"
	assert_output --regexp "^$RP_WORKLOADS/symdir/\.build-id/${id:0:2}/${id:2}(\.debug)?\$"
	run -0 jq -r '.options.symbol_dirs[0]' "$j"
	assert_output "$RP_WORKLOADS/symdir"
}

@test "check: a perf map file of the target is listed" {
	require_root
	start_workload cpu_split 30
	printf '1000 10 jitted_fn\n' >"/tmp/perf-$wpid.map"
	check_json --pid "$wpid"
	rm -f "/tmp/perf-$wpid.map"
	run -0 jq -r '.capabilities.perf_map_files[]' "$j"
	assert_output "/tmp/perf-$wpid.map"
	run -0 jq -r '.capabilities.jitdump_files | length' "$j"
	assert_output 0
}

@test "check: errors exit 1 and are listed in errors: no process, a missing --symbol-dir, a bad --debuginfod" {
	require_root
	check_json --pid 999999
	[ "$check_rc" -eq 1 ]
	run -0 jq -r '.errors[]' "$j"
	assert_output "preflight target: no process 999999"
	# record's preflight stops with the same line.
	run -1 "$RP" record --pid 999999 --duration 1s --output "$BATS_TEST_TMPDIR"
	assert_output --partial "preflight target: no process 999999"

	start_workload cpu_split 30
	check_json --pid "$wpid" --symbol-dir "$BATS_TEST_TMPDIR/none" --debuginfod ftp://example.org
	[ "$check_rc" -eq 1 ]
	run -0 jq -r '.errors[]' "$j"
	assert_line "--symbol-dir $BATS_TEST_TMPDIR/none: No such file or directory"
	assert_line "--debuginfod ftp://example.org: not an http:// or https:// URL"
	run -0 jq -r '.options.debuginfod' "$j"
	assert_output ftp://example.org
	check_json --pid "$wpid" --debuginfod http://127.0.0.1:8002
	[ "$check_rc" -eq 0 ]
}

@test "check: not root: the report says so in errors and exits 1, without probing" {
	require_root
	start_workload cpu_split 30
	j=$BATS_TEST_TMPDIR/check.json
	chmod 755 "$BATS_TEST_TMPDIR"
	run -1 setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$RP_BIN/check" --json --pid "$wpid"
	printf '%s\n' "$output" >"$j"
	run -0 /usr/bin/python3 "$BATS_TEST_DIRNAME/tools/validate_json.py" "$SCHEMA" "$j"
	run -0 jq -e '(.errors | index("preflight root: collect must run as root")) != null
		and .capabilities.root == false
		and (.capabilities.off_cpu_ebpf.detail | startswith("not probed"))' "$j"
}

@test "check: bad usage is one line and a non-zero exit" {
	run -1 "$RP" check
	assert_output --partial "rustprofile: check needs a target: --pid PID"
	run -2 "$RP_BIN/check" --docker-container a --pid 1
	assert_output --partial "exactly one of"
	run -1 "$RP" check --pid 1 --pid 2
	assert_output --partial "exactly one of"
	run -1 "$RP" check --pid abc
	assert_output --partial "is not a process id"
	run -1 "$RP" check --pid 1 --container x
	assert_output --partial "--container is only valid with --k8s-pod"
	run -1 "$RP" check --pid 1 --bogus
	assert_output --partial "unknown option '--bogus'"
}

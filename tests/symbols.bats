#!/usr/bin/env bats
# Symbols: debug files found by build id and by .gnu_debuglink; C++ and Rust demangling.

load helper

setup() {
	require_root
	open_tmpdirs
	out=$BATS_TEST_TMPDIR/out
}

teardown() {
	stop_workload
}

# profile WORKLOAD [RECORD OPTIONS...]: records 3 s of a workload, prints the pprof path.
profile() {
	local w=$1
	shift
	start_workload "$w" 30
	"$RP" record --pid "$wpid" --duration 3s --window 3s --cpu-frequency 499 \
		--output "$out" "$@" >/dev/null 3>&-
	echo "$out/$(outputs "$out" cpu pb.gz | tail -n 1)"
}

@test "symbols: a stripped binary is named from its debug file under a --symbol-dir build-id tree" {
	prof=$(profile buildid/stripped_bid --symbol-dir "$RP_WORKLOADS/symdir")
	run -0 pprof -top "$prof"
	assert_output --partial stripped_hot
	assert_output --partial stripped_outer
}

@test "symbols: without the --symbol-dir the same binary stays unnamed" {
	prof=$(profile buildid/stripped_bid)
	run -0 pprof -top "$prof"
	refute_output --partial stripped_hot
}

@test "symbols: a stripped binary is named from its .gnu_debuglink file" {
	prof=$(profile debuglink/stripped)
	run -0 pprof -top "$prof"
	assert_output --partial stripped_hot
	run -0 pprof -list 'stripped_hot' "$prof"
	assert_output --partial stripped.c
}

@test "symbols: C++ names are demangled" {
	prof=$(profile cpp_workload)
	run -0 pprof -top "$prof"
	assert_output --partial "ns::Worker::spin"
	refute_output --partial "_ZN2ns"
}

@test "symbols: Rust names are demangled" {
	[ -x "$RP_WORKLOADS/rust_workload" ] || skip "no rustc"
	prof=$(profile rust_workload)
	run -0 pprof -top "$prof"
	assert_output --regexp "rust_workload::hot::spin"
	refute_output --regexp "_ZN13rust_workload|::h[0-9a-f]{16}"
}

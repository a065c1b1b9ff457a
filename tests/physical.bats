#!/usr/bin/env bats
# --profiles physical-alloc and physical-usage: the kernel's page allocator tracepoints
# (bpf/physical.bpf.c), checked against the bundled phys_pages workload, which touches a
# known number of pages through keep_pages (kept until it exits) and churn_pages (unmapped
# at once); every physical file is read back by go tool pprof.

load helper
load derived

setup_file() {
	build_streamgen
}

setup() {
	require_root
	open_tmpdirs
	out=$BATS_TEST_TMPDIR/out
}

teardown() {
	stop_workload
}

# cum_of PROFILE FUNCTION INDEX: the cumulative bytes under FUNCTION for sample INDEX.
cum_of() {
	pprof -top -cum -unit=B -nodecount=1000 -sample_index="$3" "$1" |
		awk -v f="$2" '$6 == f { sub("B", "", $4); print $4; found = 1; exit }
			END { if (!found) print 0 }'
}

# count TYPE STREAM: frames of TYPE in a saved stream.
count() {
	"$STREAMGEN" dump <"$2" | grep -c "^$1\$" || true
}

@test "physical: collect sees every page the workload touches, and their frees" {
	"$RP_BIN/collect" --launch --profiles physical-alloc,physical-usage --unwind fp \
		--duration 20s -- "$RP_WORKLOADS/phys_pages" 20000 100000 1 >"$BATS_TEST_TMPDIR/s.rps" \
		2>"$BATS_TEST_TMPDIR/err"
	pages=$((20000 + 100000))
	allocs=$(count page-alloc "$BATS_TEST_TMPDIR/s.rps")
	frees=$(count page-free "$BATS_TEST_TMPDIR/s.rps")
	# Page tables and the program's own start add a few pages; none is missed.
	[ "$allocs" -ge "$pages" ] && [ "$allocs" -le $((pages * 105 / 100)) ] ||
		fail "$allocs page allocations for $pages touched pages"
	# The kept pages are freed at the exit, which the final drain still reads.
	[ "$frees" -ge $((pages * 98 / 100)) ] || fail "$frees frees of $allocs allocations"
	"$STREAMGEN" unpack <"$BATS_TEST_TMPDIR/s.rps" | grep -m1 '^target ' | grep -q 'physical_percent=100'
}

@test "physical: at probability 10 about a tenth of the pages are sampled" {
	"$RP_BIN/collect" --launch --profiles physical-alloc --physical-memory-probability 10 \
		--unwind fp --duration 20s -- "$RP_WORKLOADS/phys_pages" 20000 100000 1 \
		>"$BATS_TEST_TMPDIR/s.rps" 2>"$BATS_TEST_TMPDIR/err"
	allocs=$(count page-alloc "$BATS_TEST_TMPDIR/s.rps")
	near "$allocs" 12000 10 || fail "$allocs sampled of 120000"
}

@test "physical: bad options are one-line errors" {
	for p in 0 101 half; do
		run -1 "$RP" record --pid 1 --profiles physical-alloc \
			--physical-memory-probability "$p" --output "$out"
		assert_output --partial "--physical-memory-probability"
		[ "${#lines[@]}" -eq 1 ]
	done
	run -1 "$RP" record --pid 1 --profiles cpu --physical-memory-probability 10 --output "$out"
	assert_output --partial "applies to the physical-alloc and physical-usage profiles only"
	run -1 "$RP" record --host --profiles cpu,physical-usage --output "$out"
	assert_output --partial "--host records the cpu profile only"
	[ ! -e "$out" ]
}

@test "physical: --check loads the page allocator program" {
	run -0 "$RP_BIN/collect" --check --launch --profiles physical-alloc,physical-usage
}

# launch_pages DIR PROFILES PERCENT ARGS...: phys_pages under launch, its truth in DIR.truth.
launch_pages() {
	local dir=$1 profiles=$2 percent=$3
	shift 3
	run -0 "$RP" launch --profiles "$profiles" --physical-memory-probability "$percent" \
		--unwind fp --window 1s --output "$dir" -- "$RP_WORKLOADS/phys_pages" "$@"
	printf '%s\n' "$output" >"$dir.truth"
}

@test "physical-usage: the kept pages are in use within 10% while they are, and gone after" {
	launch_pages "$out" cpu,physical-usage 100 20000 100000 1 3
	want=$(($(truth "$out.truth" keep_pages) * $(truth "$out.truth" page_size)))
	n=0 best=0
	for f in $(outputs "$out" physical-usage pb.gz); do
		v=$(cum_of "$out/$f" keep_pages inuse_space)
		# Never more than the kept pages: every freed page was seen freed.
		[ "$v" -le $((want * 110 / 100)) ] || fail "$f: keep_pages in use $v > $want"
		near "$v" "$want" 10 && n=$((n + 1))
		c=$(cum_of "$out/$f" churn_pages inuse_space)
		[ "$c" -le $((want / 10)) ] || fail "$f: churn_pages in use $c, all were unmapped"
	done
	# The workload holds its pages 3 s after the churn: windows of 1 s end in that time.
	[ "$n" -ge 2 ] || fail "only $n windows with the kept pages in use"
	# Its exit freed them: the last window's snapshot has none.
	last=$(outputs "$out" physical-usage pb.gz | tail -n 1)
	[ "$(cum_of "$out/$last" keep_pages inuse_space)" -le $((want / 10)) ]
	# A snapshot spans no time (pprof prints no Duration for 0), a CPU window does.
	pprof -raw "$out/$last" >"$BATS_TEST_TMPDIR/raw"
	grep -q '^Comment: a snapshot' "$BATS_TEST_TMPDIR/raw"
	if grep -q '^Duration:' "$BATS_TEST_TMPDIR/raw"; then fail "the snapshot has a duration"; fi
	pprof -raw "$out/$(outputs "$out" cpu pb.gz | head -n 1)" | grep -q '^Duration: 1s'
	[ -z "$(outputs "$out" physical-alloc pb.gz)" ]
}

@test "physical-alloc: at probability 10 the allocation volume is within 15%" {
	launch_pages "$out" physical-alloc 10 20000 200000 2
	page=$(truth "$out.truth" page_size)
	keep=0 churn=0
	for f in $(outputs "$out" physical-alloc pb.gz); do
		keep=$((keep + $(cum_of "$out/$f" keep_pages alloc_space)))
		churn=$((churn + $(cum_of "$out/$f" churn_pages alloc_space)))
	done
	near "$keep" $(($(truth "$out.truth" keep_pages) * page)) 15 || fail "keep_pages $keep"
	near "$churn" $(($(truth "$out.truth" churn_pages) * page)) 15 || fail "churn_pages $churn"
	d=$(outputs "$out" diagnostics json | tail -n 1)
	jq -e '.physical.probability == 10 and (.physical.limitations | length) > 0 and
		(.written_profiles | index("physical-alloc"))' "$out/$d"
	[ -z "$(outputs "$out" physical-usage pb.gz)" ]
	[ -z "$(outputs "$out" cpu pb.gz)" ]
}

@test "physical: a replayed stream gives the same physical files" {
	run -0 "$RP" launch --profiles physical-alloc,physical-usage --unwind fp --window 1s \
		--save-stream "$BATS_TEST_TMPDIR/s.rps" --output "$out" -- \
		"$RP_WORKLOADS/phys_pages" 5000 20000 1
	run -0 "$RP" replay --input "$BATS_TEST_TMPDIR/s.rps" --module-cache "$out/.modules" \
		--output "$out.replay"
	for kind in physical-alloc physical-usage; do
		a=$(outputs "$out" $kind pb.gz)
		b=$(outputs "$out.replay" $kind pb.gz)
		[ "$a" = "$b" ]
		[ -n "$a" ]
		for f in $a; do
			diff <(pprof -raw "$out/$f" | grep -v '^Time:') \
				<(pprof -raw "$out.replay/$f" | grep -v '^Time:')
		done
	done
}

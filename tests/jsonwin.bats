#!/usr/bin/env bats
# --json-windows (emit-json): every window's profiles as JSON documents that validate
# against docs/json-windows.schema.json, whose values add up to the window's pprof, whose
# heap deltas add up to the last in-use totals, and that a replay writes byte for byte.

load helper
load derived

schema() { echo "$BATS_TEST_DIRNAME/../docs/json-windows.schema.json"; }
check() { python3 "$BATS_TEST_DIRNAME/tools/jsonwin_check.py" "$(schema)" "$@"; }

# raw_totals PPROF: the sum of each value column of the profile's samples (go tool pprof -raw).
raw_totals() {
	pprof -raw "$1" | awk '
		/^Samples:/ { in_s = 1; getline; next }
		/^Locations/ { in_s = 0 }
		in_s && /^ *[0-9][0-9 ]*: / { sub(/:.*/, ""); for (i = 1; i <= NF; i++) t[i] += $i
			n = NF }
		END { s = ""; for (i = 1; i <= n; i++) s = s (i > 1 ? " " : "") t[i]; print s }'
}

setup_file() {
	build_streamgen
	[ "$(id -u)" -eq 0 ] || return 0
	export REC="$BATS_FILE_TMPDIR/rec"
	mkdir -p "$REC"
	chmod 777 "$REC"
	chmod a+rx "$BATS_FILE_TMPDIR" "$(dirname "$BATS_FILE_TMPDIR")" \
		"$(dirname "$(dirname "$BATS_FILE_TMPDIR")")" 2>/dev/null || true
	# Eight windows: keep_alloc's in-use bytes walk at random around their level (blocks
	# replaced are sampled at random), so a window that released more than it took comes
	# with about one chance in two each; in four windows none did about one run in sixteen.
	"$RP" launch --profiles cpu,heap --unwind fp --window 1s --json-windows \
		--save-stream "$REC/rec.stream" --output "$REC/out" -- \
		"$RP_WORKLOADS/heap_mix" 8 >"$REC/log" 2>&1 3>&-
}

@test "jsonwin: every window's cpu and heap JSON validates and is named in diagnostics" {
	require_root
	n=0
	for d in "$REC"/out/diagnostics-*.json; do
		i=$(jq -r '.window_index // empty' "$d")
		for k in cpu heap; do
			f=$(jq -r --arg k "json-$k" '.output_paths[$k] // empty' "$d")
			[ -n "$f" ] || fail "$d: no json-$k"
			[ -f "$f" ] || fail "$f missing"
			run -0 check validate "$f"
			n=$((n + 1))
		done
	done
	[ "$n" -ge 6 ] || fail "only $n JSON files"
}

@test "jsonwin: each window's JSON values sum to its pprof totals" {
	require_root
	n=0
	for p in "$REC"/out/cpu-*.pb.gz "$REC"/out/heap-*.pb.gz; do
		j=${p%.pb.gz}.json
		run -0 check sum "$j"
		want=$(raw_totals "$p")
		[ -n "$want" ] || want="0 0"
		assert_equal "$output" "$want"
		n=$((n + 1))
	done
	[ "$n" -ge 6 ]
	# Not a vacuous match: the CPU windows have samples, the heap ones allocations.
	run -0 check sum "$(ls "$REC"/out/cpu-*.json | head -n 1)"
	[ "${output%% *}" -gt 0 ]
}

@test "jsonwin: heap deltas are in-use changes and sum to the last window's in-use totals" {
	require_root
	run -0 check deltas $(ls "$REC"/out/heap-*.json)
	read -r objs bytes released <<<"$output"
	[ "$bytes" -gt 0 ] || fail "no in-use bytes: $output"
	# heap_mix frees what it kept: some window released memory, a negative delta.
	[ "$released" -gt 0 ] || fail "no negative delta: $output"
	last=$(ls "$REC"/out/heap-*.pb.gz | tail -n 1)
	assert_equal "$objs $bytes" "$(raw_totals "$last" | awk '{ print $3, $4 }')"
}

@test "jsonwin: a replay of the saved stream writes the same JSON byte for byte" {
	require_root
	run -0 "$RP" replay --input "$REC/rec.stream" --window 1s --json-windows \
		--module-cache "$REC/out/.modules" --output "$BATS_TEST_TMPDIR/re"
	n=0
	for f in "$REC"/out/*.json; do
		case $f in */diagnostics-*) continue ;; esac
		cmp "$f" "$BATS_TEST_TMPDIR/re/$(basename "$f")" || fail "$f differs"
		n=$((n + 1))
	done
	[ "$n" -ge 6 ]
}

@test "jsonwin: emit-json on the fixture keeps frames root to leaf and labels" {
	mkdir -p "$BATS_TEST_TMPDIR/out"
	"$STREAMGEN" good | "$RP_BIN/emit-json" --output "$BATS_TEST_TMPDIR/out" >/dev/null
	f=$(ls "$BATS_TEST_TMPDIR"/out/.cpu-*-000000-*.json.tmp-* | head -n 1)
	run -0 check validate "$f"
	jq -e '.kind == "cpu" and .window.index == 0 and (.stacks | length) > 0 and
		all(.stacks[]; .frames[0].kind == "root" and .labels["process.pid"] > 0)' "$f"
}

@test "jsonwin: --pretty indents the same document the compact form holds" {
	mkdir -p "$BATS_TEST_TMPDIR/c" "$BATS_TEST_TMPDIR/p"
	"$STREAMGEN" good | "$RP_BIN/emit-json" --output "$BATS_TEST_TMPDIR/c" >/dev/null
	"$STREAMGEN" good | "$RP_BIN/emit-json" --pretty --output "$BATS_TEST_TMPDIR/p" >/dev/null
	c=$(ls "$BATS_TEST_TMPDIR"/c/.cpu-*-000000-*.json.tmp-* | head -n 1)
	p=$(ls "$BATS_TEST_TMPDIR"/p/.cpu-*-000000-*.json.tmp-* | head -n 1)
	[ "$(wc -l <"$c")" -le 1 ]
	[ "$(wc -l <"$p")" -gt 10 ]
	grep -q '^  "' "$p"
	[ "$(jq -S . "$c")" = "$(jq -S . "$p")" ]
}

@test "jsonwin: a corrupt stream is a one-line error and leaves no file" {
	mkdir -p "$BATS_TEST_TMPDIR/out"
	"$STREAMGEN" missing-loc >"$BATS_TEST_TMPDIR/in.rps"
	run -1 --separate-stderr "$RP_BIN/emit-json" --output "$BATS_TEST_TMPDIR/out" \
		<"$BATS_TEST_TMPDIR/in.rps"
	assert_equal "$stderr" "emit-json: stdin: window 0 stack references undefined location 99"
	head -c 64 /dev/urandom >"$BATS_TEST_TMPDIR/junk"
	run --separate-stderr "$RP_BIN/emit-json" --output "$BATS_TEST_TMPDIR/out" \
		<"$BATS_TEST_TMPDIR/junk"
	[ "$status" -ne 0 ]
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	assert_equal "$(ls -A "$BATS_TEST_TMPDIR/out")" ""
}

@test "jsonwin: --help and the driver's --help name it" {
	run -0 "$RP_BIN/emit-json" --help
	assert_output --partial "usage: emit-json"
	run -0 "$RP" --help
	assert_output --partial "--json-windows"
}

@test "jsonwin: off-CPU windows of a saved stream validate and sum to their pprof" {
	g="$BATS_TEST_DIRNAME/golden"
	run -0 "$RP" replay --input "$g/offcpu.stream" --module-cache "$g/.modules" \
		--json-windows --output "$BATS_TEST_TMPDIR/off"
	n=0
	for p in "$BATS_TEST_TMPDIR"/off/off-cpu-*.pb.gz; do
		run -0 check sum "${p%.pb.gz}.json"
		assert_equal "$output" "$(raw_totals "$p")"
		[ "${output%% *}" -gt 0 ]
		n=$((n + 1))
	done
	[ "$n" -ge 2 ]
}

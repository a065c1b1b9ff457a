#!/usr/bin/env bats
# Golden outputs: the three saved streams of tests/golden (FP, DWARF, off-CPU; record.sh
# made them) replayed through every emitter give, byte for byte, the files whose digests
# tests/golden/SHA256SUMS keeps (replay.sh says what runs, and the two fields of a
# diagnostics file it leaves out).  A change to an emitter that is meant to keep its output
# must keep these digests.  Runs as any user: the streams bring their module copies.

load helper

@test "golden: the saved FP, DWARF and off-CPU streams replay into the saved digests of every file" {
	out=$BATS_TEST_TMPDIR/out
	run --separate-stderr bash "$ROOT/tests/golden/replay.sh" "$out"
	[ "$status" -ne 77 ] || skip "$stderr"
	echo "$stderr"
	[ "$status" -eq 0 ]
	diff "$ROOT/tests/golden/SHA256SUMS" <(echo "$output")
	# The options run cuts the Firefox timeline: some samples were left out.
	for d in "$out"/fp/options/diagnostics-*.json; do
		jq -e '.firefox.dropped_samples > 0 and .firefox.timeline_samples == 16' "$d"
	done
	# Each profile has a frame no file named, and still says it is symbolicated: the front
	# end would otherwise send every library id and address to a public symbol server.
	for f in "$out"/*/main/firefox-*.json.gz; do
		zcat "$f" | jq -e '.meta.symbolicated == true and
			([.shared.funcTable.name[] as $i | .shared.stringArray[$i] |
			  select(test("^0x[0-9a-f]+$"))] | length > 0)'
	done
}

@test "golden: the digests cover every kind of file of every stream and run" {
	sums=$ROOT/tests/golden/SHA256SUMS
	kinds=('main/cpu-.*\.pb\.gz' 'main/cpu-.*\.svg' 'main/cpu-.*\.collapsed'
		'main/firefox-.*\.json\.gz' 'main/diagnostics-.*\.json' 'options/cpu-.*\.pb\.gz'
		'options/cpu-.*\.collapsed' 'options/firefox-.*\.jslb\.gz'
		'options/diagnostics-.*\.json' 'folded/cpu-.*\.svg')
	for s in fp dwarf offcpu; do
		for k in "${kinds[@]}"; do
			echo "$s/$k"
			[ "$(grep -c "^[0-9a-f]\{64\}  $s/$k\$" "$sums")" -ge 2 ]
		done
	done
	for k in 'main/off-cpu-.*\.pb\.gz' 'main/off-cpu-.*\.svg' 'main/off-cpu-.*\.collapsed' \
		'options/off-cpu-.*\.collapsed'; do
		[ "$(grep -c "^[0-9a-f]\{64\}  offcpu/$k\$" "$sums")" -ge 2 ]
	done
}

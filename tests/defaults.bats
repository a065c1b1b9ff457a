#!/usr/bin/env bats
# One owner per setting: each default is defined once (lib/defaults.h, which make writes into
# defaults.sh for the driver), and the README's option tables, the driver's --help and the
# stages' --help show that value; the window length is collect's, so the README's hand-typed
# pipeline, which gives it to collect alone, cuts the driver's windows.

load helper

setup() {
	open_tmpdirs
}

teardown() {
	[ -z "${hand:-}" ] || kill -TERM "$hand" 2>/dev/null || true
	stop_workload
}

# "--option VALUE" for every default of lib/defaults.h, as the driver reads them.
defaults() {
	sed -n 's/^RP_DEFAULT_\([A-Z0-9_]*\)=\(.*\)$/\1 \2/p' "$RP_BIN/defaults.sh" |
		awk '{ o = tolower($1); gsub("_", "-", o); print "--" o, $2 }' | sort
}

# "--option VALUE" for every row of a markdown option table whose default is a `value`.
table_defaults() {
	awk -F'|' '/^\| `--/ {
		o = $2; sub(/^ *`/, "", o); sub(/[ `].*/, "", o)
		d = $3; if (d !~ /^ *`/) next
		sub(/^ *`/, "", d); sub(/`.*/, "", d)
		print o, d }' "$1" | sort
}

# "--option TEXT" for every option of a --help text on stdin, its continuation lines joined.
help_entries() {
	awk 'function put() { if (o != "") print o, text; o = "" }
		/^  -/ { put(); for (i = 1; i <= NF; i++) if ($i ~ /^--/) { o = $i; break }
			 sub(/,$/, "", o); text = $0; next }
		/^       / && o != "" { text = text " " $0; next }
		{ put() }
		END { put() }'
}

# "--option VALUE" for every option of the driver's --help with a [default].
driver_defaults() {
	"$RP" --help | help_entries |
		awk '{ o = $1; if (match($0, /\[[^];]*/)) print o, substr($0, RSTART + 1, RLENGTH - 1) }' |
		sort
}

@test "defaults: defaults.sh holds every default of lib/defaults.h" {
	n=$(grep -c '^#define RP_DEFAULT_[A-Z0-9_]* ' "$ROOT/lib/defaults.h")
	[ "$n" -ge 19 ]
	[ "$(defaults | wc -l)" -eq "$n" ]
}

@test "defaults: the README's option table shows lib/defaults.h's value of every default" {
	defaults >"$BATS_TEST_TMPDIR/defs"
	table_defaults "$ROOT/README.md" >"$BATS_TEST_TMPDIR/readme"
	run diff "$BATS_TEST_TMPDIR/defs" "$BATS_TEST_TMPDIR/readme"
	assert_success
	# The off-CPU options' own table in the docs too: each value is one of them.
	table_defaults "$ROOT/docs/offcpu.md" >"$BATS_TEST_TMPDIR/offcpu"
	[ -s "$BATS_TEST_TMPDIR/offcpu" ]
	run comm -13 "$BATS_TEST_TMPDIR/defs" "$BATS_TEST_TMPDIR/offcpu"
	assert_output ''
}

@test "defaults: the driver's --help shows lib/defaults.h's value of every default" {
	# --max-threads is the manual's hidden setting; --module-cache's and --debug-cache's
	# defaults are paths.
	defaults | grep -v '^--max-threads ' >"$BATS_TEST_TMPDIR/defs"
	driver_defaults | grep -v -e '^--module-cache ' -e '^--debug-cache ' >"$BATS_TEST_TMPDIR/help"
	run diff "$BATS_TEST_TMPDIR/defs" "$BATS_TEST_TMPDIR/help"
	assert_success
}

@test "defaults: each stage's --help shows lib/defaults.h's value of its options" {
	defaults >"$BATS_TEST_TMPDIR/defs"
	while read -r stage opts; do
		"$RP_BIN/$stage" --help | help_entries >"$BATS_TEST_TMPDIR/help"
		for o in $opts; do
			want=$(awk -v o="$o" '$1 == o { print $2 }' "$BATS_TEST_TMPDIR/defs")
			[ -n "$want" ] || fail "$o has no default in lib/defaults.h"
			grep -q -- "^$o .*default $want\\b" "$BATS_TEST_TMPDIR/help" ||
				fail "$stage --help: $o does not say 'default $want'"
		done
	done <<-EOF
		collect --window --cpu-frequency --unwind --profiles --offcpu-phase --offcpu-min-duration-us --offcpu-ring-buffer --offcpu-probability --physical-memory-probability --max-module-cache
		aggregate --window --max-stacks --max-pending-events --event-reorder-window
		commit --keep-windows
		fanout --completion-budget
		emit-firefox --max-timeline-samples
		import --format
	EOF
}

# window_list DIR: "index duration_nanos final_window" of each published window, in order.
window_list() {
	for d in $(outputs "$1" diagnostics json); do
		jq -r '"\(.window_index) \(.duration_nanos) \(.final_window)"' "$1/$d"
	done
}

@test "defaults: the README's hand-typed pipeline gives the windows of the driver with one --window" {
	require_root
	start_workload cpu_split 60
	# The README's block, as written, run where .output/bin holds the stages.
	block=$BATS_TEST_TMPDIR/hand/pipeline.sh
	mkdir -p "$BATS_TEST_TMPDIR/hand/.output"
	ln -s "$RP_BIN" "$BATS_TEST_TMPDIR/hand/.output/bin"
	awk '/^out=\.\/profiles; mkdir -p "\$out"$/ { on = 1 } on && /^```$/ { exit } on' \
		"$ROOT/README.md" >"$block"
	grep -q '^\.output/bin/collect --pid "\$PID" ' "$block"
	grep -q '^	\.output/bin/commit ' "$block"
	# One --window, collect's: the stages after it take the recorded length.
	[ "$(grep -c -- '--window' "$block")" -eq 1 ]
	dur=$(sed -n 's/^\.output\/bin\/collect .*--duration \([^ ]*\) .*/\1/p' "$block")
	win=$(sed -n 's/^\.output\/bin\/collect .*--window \([^ ]*\) .*/\1/p' "$block")
	[[ $win =~ ^([0-9]+)s$ ]] || fail "the README's --window '$win' is not whole seconds"
	win_ns=$((BASH_REMATCH[1] * 1000000000))
	(cd "$BATS_TEST_TMPDIR/hand" && PID=$wpid exec bash "$block") \
		>"$BATS_TEST_TMPDIR/hand.out" 2>"$BATS_TEST_TMPDIR/hand.err" &
	hand=$!
	run -0 "$RP" record --pid "$wpid" --duration "$dur" --window "$win" \
		--output "$BATS_TEST_TMPDIR/driver"
	wait "$hand" || { cat "$BATS_TEST_TMPDIR/hand.err"; fail "the README's pipeline failed"; }
	hand=
	window_list "$BATS_TEST_TMPDIR/driver" >"$BATS_TEST_TMPDIR/driver.windows"
	window_list "$BATS_TEST_TMPDIR/hand/profiles" >"$BATS_TEST_TMPDIR/hand.windows"
	cat "$BATS_TEST_TMPDIR/driver.windows"
	# Whole windows of --window, the last one final and the only final one.
	[ "$(wc -l <"$BATS_TEST_TMPDIR/driver.windows")" -ge 2 ]
	awk -v w="$win_ns" '{ last = $3; f += $3 == "true" }
		$1 != NR - 1 || ($2 != w && $3 != "true") { bad = 1 }
		END { exit bad || f != 1 || last != "true" }' "$BATS_TEST_TMPDIR/driver.windows"
	run diff "$BATS_TEST_TMPDIR/driver.windows" "$BATS_TEST_TMPDIR/hand.windows"
	assert_success
	# The stream the pipeline saved records collect's window: a replay without --window
	# cuts the same windows again.
	run -0 "$RP" replay --input "$BATS_TEST_TMPDIR/hand/rec.stream" \
		--module-cache "$BATS_TEST_TMPDIR/hand/profiles/.modules" --output "$BATS_TEST_TMPDIR/replay"
	window_list "$BATS_TEST_TMPDIR/replay" >"$BATS_TEST_TMPDIR/replay.windows"
	run diff "$BATS_TEST_TMPDIR/driver.windows" "$BATS_TEST_TMPDIR/replay.windows"
	assert_success
}

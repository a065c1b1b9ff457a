#!/usr/bin/env bats
# Derived outputs off the main path (fanout): a stopped emitter sheds later windows'
# SVG/Firefox output while every pprof and diagnostics file is published, and a saved stream
# replays into byte-identical outputs.

load helper

setup() {
	require_root
	open_tmpdirs
	out=$BATS_TEST_TMPDIR/out
}

teardown() {
	[ -z "${svgpid:-}" ] || kill -CONT "$svgpid" 2>/dev/null || true
	stop_workload
}

# index FILE: the window index in an output file name.
index() {
	basename "$1" | sed -E 's/^[a-z-]+-[0-9a-f]{16}-0*([0-9]+)-.*/\1/'
}

@test "backpressure: a stopped emit-svg sheds later SVGs, publishes every pprof, then catches up" {
	start_workload cpu_split 60
	"$RP" record --pid "$wpid" --duration 8s --window 1s --cpu-frequency 99 --svg \
		--output "$out" >"$BATS_TEST_TMPDIR/wrote" 2>"$BATS_TEST_TMPDIR/err" &
	rp=$!
	for _ in $(seq 50); do
		svgpid=$(pgrep -f "emit-svg --output $out\$" | head -n 1)
		[ -z "$svgpid" ] || break
		sleep 0.1
	done
	[ -n "$svgpid" ]
	# Stop it after the first window, for three windows.
	for _ in $(seq 50); do
		[ -z "$(outputs "$out" cpu svg)" ] || break
		sleep 0.1
	done
	kill -STOP "$svgpid"
	sleep 3
	kill -CONT "$svgpid"
	svgpid=
	wait "$rp"
	cat "$BATS_TEST_TMPDIR/err"
	mapfile -t ds < <(outputs "$out" diagnostics json)
	mapfile -t ps < <(outputs "$out" cpu pb.gz)
	[ "${#ds[@]}" -ge 7 ]
	[ "${#ps[@]}" -eq "${#ds[@]}" ]
	shed=0
	for d in "${ds[@]}"; do
		i=$(index "$d")
		svg=$(ls "$out" | grep -E "^cpu-[0-9a-f]{16}-0*$i-[0-9]+\.svg\$" || true)
		if jq -e '.output_backpressure.derived_outputs_shed' "$out/$d" >/dev/null; then
			shed=$((shed + 1))
			[ -z "$svg" ]
			run -0 jq -e '.output_backpressure.skipped_derived_files == 1
				and .output_backpressure.otlp_skipped == false
				and .output_backpressure.pending_windows >= 1' "$out/$d"
		else
			[ -n "$svg" ]
			run -0 jq -e '.output_backpressure.skipped_derived_files == 0' "$out/$d"
		fi
	done
	echo "$shed windows shed their SVG"
	[ "$shed" -ge 2 ]
	# After SIGCONT the SVGs come back.
	last=$((${#ds[@]} - 1))
	run -0 jq -e '.output_backpressure.derived_outputs_shed == false' "$out/${ds[$last]}"
	run -0 xmllint --noout "$out/$(outputs "$out" cpu svg | tail -n 1)"
}

@test "backpressure: without a stall nothing is shed and windows publish as they end" {
	start_workload cpu_split 30
	run -0 "$RP" record --pid "$wpid" --duration 4s --window 1s --cpu-frequency 99 --svg \
		--firefox-profile json --output "$out"
	mapfile -t ds < <(outputs "$out" diagnostics json)
	[ "${#ds[@]}" -ge 4 ]
	[ "$(outputs "$out" cpu svg | wc -l)" -eq "${#ds[@]}" ]
	[ "$(outputs "$out" firefox json.gz | wc -l)" -eq "${#ds[@]}" ]
	for d in "${ds[@]}"; do
		run -0 jq -e '.output_backpressure == { "derived_outputs_shed": false,
			"pending_windows": 0, "skipped_derived_files": 0, "otlp_skipped": false }
			and .firefox.timeline_samples > 0' "$out/$d"
	done
	# Published one window at a time, not all at the end: the first diagnostics file is
	# at least two seconds older than the last.
	first=$(stat -c %Y "$out/${ds[0]}")
	last=$(stat -c %Y "$out/${ds[${#ds[@]} - 1]}")
	[ $((last - first)) -ge 2 ]
}

@test "replay: a saved stream gives byte-identical pprof, collapsed and SVG output" {
	start_workload cpu_split 30
	run -0 "$RP" record --pid "$wpid" --duration 3s --window 1s --cpu-frequency 199 \
		--svg --collapsed --output "$out/live" --save-stream "$out/rec.stream"
	run -0 "$RP" replay --input "$out/rec.stream" --window 1s --svg --collapsed \
		--module-cache "$out/live/.modules" --output "$out/replay"
	n=0
	for f in $(outputs "$out/live" cpu 'pb\.gz') $(outputs "$out/live" cpu collapsed) \
		$(outputs "$out/live" cpu svg); do
		cmp "$out/live/$f" "$out/replay/$f"
		n=$((n + 1))
	done
	echo "$n files identical"
	[ "$n" -ge 9 ]
}

@test "backpressure: a derived emitter that dies fails the run with one line; published windows stay" {
	start_workload cpu_split 30
	"$RP" record --pid "$wpid" --duration 6s --window 1s --cpu-frequency 99 --svg \
		--output "$out" >/dev/null 2>"$BATS_TEST_TMPDIR/err" &
	rp=$!
	for _ in $(seq 80); do
		[ -z "$(outputs "$out" cpu svg)" ] || break
		sleep 0.1
	done
	pkill -KILL -f "emit-svg --output $out\$"
	status=0
	wait "$rp" || status=$?
	cat "$BATS_TEST_TMPDIR/err"
	[ "$status" -eq 1 ]
	[ "$(wc -l <"$BATS_TEST_TMPDIR/err")" -eq 1 ]
	grep -q 'stage emit-svg was killed by signal 9' "$BATS_TEST_TMPDIR/err"
	first=$(outputs "$out" diagnostics json | head -n 1)
	[ -n "$first" ]
	run -0 jq -e '.output_paths.cpu and .output_paths["svg-cpu"]' "$out/$first"
	[ -f "$(jq -r '.output_paths.cpu' "$out/$first")" ]
}

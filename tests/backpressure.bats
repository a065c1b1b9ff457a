#!/usr/bin/env bats
# Derived outputs off the main path (fanout): a stopped emitter sheds later windows'
# SVG/Firefox output while every pprof and diagnostics file is published, and a saved stream
# replays into byte-identical outputs.
# They record with --unwind fp: a calibration hands over the windows it spans together,
# which is a burst these tests are not about (docs/unwinding.md).

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

# stop_svg_after_first: SIGSTOPs the record's emit-svg once it has written one SVG
# (svgpid; teardown continues it).
stop_svg_after_first() {
	for _ in $(seq 50); do
		svgpid=$(pgrep -f "emit-svg (--run-as [0-9:]+ )?--output $out\$" | head -n 1)
		[ -z "$svgpid" ] || break
		sleep 0.1
	done
	[ -n "$svgpid" ]
	for _ in $(seq 50); do
		[ -z "$(outputs "$out" cpu svg)" ] || break
		sleep 0.1
	done
	kill -STOP "$svgpid"
}

# index FILE: the window index in an output file name.
index() {
	basename "$1" | sed -E 's/^[a-z-]+-[0-9a-f]{16}-0*([0-9]+)-.*/\1/'
}

@test "backpressure: a stopped emit-svg sheds later SVGs, publishes every pprof, then catches up" {
	start_workload cpu_split 60
	"$RP" record --pid "$wpid" --unwind fp --duration 8s --window 1s --cpu-frequency 99 --svg \
		--output "$out" >"$BATS_TEST_TMPDIR/wrote" 2>"$BATS_TEST_TMPDIR/err" &
	rp=$!
	# Stop it after the first window, for three windows.
	stop_svg_after_first
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
			# Shed behind the stalled window, or the stalled window itself when it
			# was published without its SVG (--max-pending-windows, a warning).
			# One SVG per profile of the window (cpu and, by default, heap).
			run -0 jq -e '.output_backpressure.skipped_derived_files ==
				(.written_profiles | length)
				and .output_backpressure.otlp_skipped == false
				and (.output_backpressure.pending_windows >= 1
				     or any(.warnings[]; startswith("emit-svg had not written")))' "$out/$d"
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

@test "backpressure: an emitter stopped for good costs only its files; windows keep publishing" {
	start_workload cpu_split 60
	"$RP" record --pid "$wpid" --unwind fp --duration 12s --window 1s --cpu-frequency 99 --svg \
		--firefox-profile json --output "$out" >"$BATS_TEST_TMPDIR/wrote" \
		2>"$BATS_TEST_TMPDIR/err" &
	rp=$!
	stop_svg_after_first
	before=$(outputs "$out" diagnostics json | wc -l)
	# fanout holds at most 3 windows for it (the default --max-pending-windows): with
	# 1 s windows, the fourth window to end after the stop publishes the stalled one
	# without its SVG, and windows go on publishing while emit-svg stays stopped.
	for _ in $(seq 90); do
		[ "$(outputs "$out" diagnostics json | wc -l)" -lt $((before + 5)) ] || break
		sleep 0.1
	done
	during=$(outputs "$out" diagnostics json | wc -l)
	kill -CONT "$svgpid"
	svgpid=
	echo "windows published: $before at the stop, $during while stopped"
	[ "$during" -ge $((before + 5)) ]
	wait "$rp"
	cat "$BATS_TEST_TMPDIR/err"
	[ ! -s "$BATS_TEST_TMPDIR/err" ]
	mapfile -t ds < <(outputs "$out" diagnostics json)
	[ "${#ds[@]}" -ge 11 ]
	[ "$(outputs "$out" cpu pb.gz | wc -l)" -eq "${#ds[@]}" ]
	# Only emit-svg was stopped: every window has its Firefox profile.
	[ "$(outputs "$out" firefox json.gz | wc -l)" -eq "${#ds[@]}" ]
	warned=0
	for d in "${ds[@]}"; do
		i=$(index "$d")
		svg=$(ls "$out" | grep -E "^cpu-[0-9a-f]{16}-0*$i-[0-9]+\.svg\$" || true)
		# A window shed while emit-svg was busy says so, and has no SVG either.
		if jq -e 'any(.warnings[]; endswith("as it was still writing an earlier window: its files for the window are skipped"))' \
			"$out/$d" >/dev/null; then
			[ -z "$svg" ]
			run -0 jq -e '.output_backpressure.derived_outputs_shed' "$out/$d"
		elif jq -e 'any(.warnings[]; startswith("emit-svg had not written window"))' \
			"$out/$d" >/dev/null; then
			warned=$((warned + 1))
			[ -z "$svg" ]
			run -0 jq -e --arg i "$i" '.warnings | any(. == "emit-svg had not written window \($i) when 3 later windows had ended: its files for the window are skipped")' "$out/$d"
			run -0 jq -e '.output_backpressure.derived_outputs_shed
				and .output_backpressure.skipped_derived_files ==
				(.written_profiles | length)' "$out/$d"
		fi
	done
	[ "$warned" -eq 1 ]
	# The SVG it wrote for that window once continued was removed, not left behind.
	run -0 bash -c 'ls -A "$1" | grep "^\." | grep -v "^\.modules\$" || true' _ "$out"
	[ -z "$output" ]
	for s in $(outputs "$out" cpu svg); do xmllint --noout "$out/$s"; done
	[ "$(outputs "$out" cpu svg | wc -l)" -ge 2 ]
}

# check_stopped_run: after a run stopped with emit-svg stopped (svgpid): every window has
# its pprof and diagnostics, the windows the emitter had not written say so, and the
# emitter is gone.
check_stopped_run() {
	cat "$BATS_TEST_TMPDIR/err"
	grep -q "fanout: stopped with emit-svg still behind" "$BATS_TEST_TMPDIR/err"
	mapfile -t ds < <(outputs "$out" diagnostics json)
	[ "${#ds[@]}" -ge 3 ]
	[ "$(outputs "$out" cpu pb.gz | wc -l)" -eq "${#ds[@]}" ]
	[ "$(grep -c '^wrote .*diagnostics-' "$BATS_TEST_TMPDIR/wrote")" -eq "${#ds[@]}" ]
	stopped=0
	for d in "${ds[@]}"; do
		i=$(index "$d")
		if jq -e --arg i "$i" '.warnings | any(. == "emit-svg had not written window \($i) when the run was stopped: its files for the window are skipped")' "$out/$d" >/dev/null; then
			stopped=$((stopped + 1))
			[ -z "$(ls "$out" | grep -E "^cpu-[0-9a-f]{16}-0*$i-[0-9]+\.svg\$" || true)" ]
			run -0 jq -e '.output_backpressure.derived_outputs_shed' "$out/$d"
		fi
	done
	echo "$stopped windows published at the stop without their SVG"
	[ "$stopped" -ge 1 ]
	# The driver ended the stopped emitter (SIGTERM, then SIGCONT), which left no temporary
	# file behind.
	for _ in $(seq 50); do kill -0 "$svgpid" 2>/dev/null || break; sleep 0.1; done
	! kill -0 "$svgpid" 2>/dev/null || fail "line 165: the negated check succeeded"
	svgpid=
	run -0 bash -c 'ls -A "$1" | grep "^\." | grep -v "^\.modules\$" || true' _ "$out"
	[ -z "$output" ]
}

# wait_rp SECONDS: waits for the driver (rp) at most SECONDS, its status in rc.
wait_rp() {
	for _ in $(seq $(($1 * 10))); do kill -0 "$rp" 2>/dev/null || break; sleep 0.1; done
	! kill -0 "$rp" 2>/dev/null || fail "the run did not end within $1 s"
	rc=0
	wait "$rp" || rc=$?
}

@test "backpressure: a run that ended held up by a stopped emitter publishes its windows at SIGTERM" {
	start_workload cpu_split 60
	"$RP" record --pid "$wpid" --unwind fp --duration 4s --window 1s --cpu-frequency 99 --svg \
		--output "$out" >"$BATS_TEST_TMPDIR/wrote" 2>"$BATS_TEST_TMPDIR/err" &
	rp=$!
	stop_svg_after_first
	# The recording ends by itself; collect goes, and the run waits for the emitter.
	for _ in $(seq 100); do
		pgrep -f "collect .*--module-cache $out/.modules" >/dev/null || break
		sleep 0.1
	done
	! pgrep -f "collect .*--module-cache $out/.modules" >/dev/null || fail "line 190: the negated check succeeded"
	sleep 1
	kill -0 "$rp"
	kill -TERM "$rp"
	wait_rp 10
	# Published, but derived files were skipped: the exit status says so.
	[ "$rc" -eq 3 ]
	check_stopped_run
}

@test "backpressure: a second SIGTERM stops waiting for a stopped emitter" {
	start_workload cpu_split 60
	"$RP" record --pid "$wpid" --unwind fp --duration 0 --window 1s --cpu-frequency 99 --svg \
		--output "$out" >"$BATS_TEST_TMPDIR/wrote" 2>"$BATS_TEST_TMPDIR/err" &
	rp=$!
	stop_svg_after_first
	sleep 2
	# The first stops the recording (collect publishes the current window); the emitter
	# still holds the end of the run.  The second publishes what waits for it.
	kill -TERM "$rp"
	sleep 2
	kill -0 "$rp"
	kill -TERM "$rp"
	wait_rp 10
	# Published, but derived files were skipped: the exit status says so.
	[ "$rc" -eq 3 ]
	check_stopped_run
}

@test "backpressure: without a stall nothing is shed and windows publish as they end" {
	start_workload cpu_split 30
	run -0 "$RP" record --pid "$wpid" --unwind fp --duration 4s --window 1s --cpu-frequency 99 --svg \
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
	run -0 "$RP" record --pid "$wpid" --unwind fp --duration 3s --window 1s --cpu-frequency 199 \
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
	"$RP" record --pid "$wpid" --unwind fp --duration 6s --window 1s --cpu-frequency 99 --svg \
		--output "$out" >/dev/null 2>"$BATS_TEST_TMPDIR/err" &
	rp=$!
	for _ in $(seq 80); do
		[ -z "$(outputs "$out" cpu svg)" ] || break
		sleep 0.1
	done
	pkill -KILL -f "emit-svg (--run-as [0-9:]+ )?--output $out\$"
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

# Shared setup for the derived emitters' tests (emit_svg.bats, emit_collapsed.bats) and heap_stream.bats.

# build_streamgen: compiles tests/tools/streamgen.c into $STREAMGEN (once per file).
build_streamgen() {
	local root="$BATS_TEST_DIRNAME/.."
	export STREAMGEN="$BATS_FILE_TMPDIR/streamgen"
	# CC/LDFLAGS come from make (check-asan links with the sanitizers).
	${CC:-cc} -std=c17 -D_GNU_SOURCE -I"$root/lib" ${LDFLAGS:-} -o "$STREAMGEN" \
		"$root/tests/tools/streamgen.c" "$RP_BIN/../lib/librp.a" -lz -lm
	export HOME="$BATS_FILE_TMPDIR/home" GOCACHE="$BATS_FILE_TMPDIR/gocache"
	mkdir -p "$HOME" "$GOCACHE"
}

# record_live: as root, records cpu_split for 3 s into one 3 s window with --save-stream,
# then runs the stages by hand with emit-svg and emit-collapsed before emit-pprof, into
# $LIVE/out.  Sets LIVE (empty when not root).
record_live() {
	LIVE=
	[ "$(id -u)" -eq 0 ] || return 0
	LIVE="$BATS_FILE_TMPDIR/live"
	mkdir -p "$LIVE/rec" "$LIVE/out"
	chmod 777 "$LIVE" "$LIVE/rec"
	chmod a+rx "$BATS_FILE_TMPDIR" "$(dirname "$BATS_FILE_TMPDIR")" \
		"$(dirname "$(dirname "$BATS_FILE_TMPDIR")")" 2>/dev/null || true
	"$RP_WORKLOADS/cpu_split" 6 3>&- &
	local pid=$!
	"$RP" record --pid "$pid" --duration 3s --window 3s --cpu-frequency 199 \
		--output "$LIVE/rec" --save-stream "$LIVE/rec.stream" >/dev/null 3>&-
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	"$RP_BIN/unwind" --module-cache "$LIVE/rec/.modules" <"$LIVE/rec.stream" |
		"$RP_BIN/aggregate" --window 3s |
		"$RP_BIN/emit-svg" --output "$LIVE/out" |
		"$RP_BIN/emit-collapsed" --output "$LIVE/out" |
		"$RP_BIN/emit-pprof" --output "$LIVE/out" |
		"$RP_BIN/commit" --output "$LIVE/out" >"$LIVE/commit.log"
	export LIVE
}

require_live() {
	[ -n "${LIVE:-}" ] || skip "needs root for perf events"
}

# live_file EXT: the first window's file of that extension in $LIVE/out.
live_file() {
	ls "$LIVE"/out/cpu-*-000000-*."$1" | head -n 1
}

# traces_folded PROFILE: `go tool pprof -traces -unit=ns` as folded lines without the
# process root ("frame;...;leaf nanoseconds"), identical stacks summed, sorted bytewise.
# pprof marks an inlined frame with " (inline)" after its name: a mark of the display, not
# part of the function name, so it is dropped.
traces_folded() {
	go tool pprof -traces -unit=ns "$1" 2>/dev/null | awk '
		function flush() { if (stack != "") sum[stack] += v; stack = ""; inside = 0 }
		/^-+\+-+$/ { flush(); next }
		/^ *[0-9]+ns   / { flush(); v = $1; sub(/ns$/, "", v); sub(/^ *[0-9]+ns   /, "");
			sub(/ \(inline\)$/, ""); gsub(/;/, ":"); stack = $0; inside = 1; next }
		inside && /^             / { sub(/^ +/, ""); sub(/ \(inline\)$/, ""); gsub(/;/, ":")
			stack = $0 ";" stack; next }
		END { flush(); for (s in sum) print s " " sum[s] }' | LC_ALL=C sort
}

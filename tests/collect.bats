#!/usr/bin/env bats
# collect on its own: option errors (any user) and live streams of bundled workloads (root),
# read back by a small decoder built here against librp.a that prints one line per frame:
#   TARGET pid kind unwind_mode | MMAP pid build_id_len path | COMM pid tid flags name
#   FORK|EXIT pid tid | SAMPLE pid tid nkernel nuser | KSYM name | LOST kind count
#   TARGET_EXIT pid | END reason | ROUND

load helper

setup_file() {
	local root="$BATS_TEST_DIRNAME/.."
	export DECODE="$BATS_FILE_TMPDIR/decode"
	cat >"$BATS_FILE_TMPDIR/decode.c" <<'C'
#include <stdio.h>
#include "stream.h"
#define S(x) (int)(x).len, (x).p
int main(void)
{
	struct stream_reader r; struct stream_header h; struct frame f; char e[200];
	static struct fr_sample s;
	if (stream_reader_open(&r, 0, "stdin", &h) < 0)
		return fprintf(stderr, "%s\n", r.err), 1;
	int rc;
	while ((rc = stream_read(&r, &f)) == 1) {
		if (stream_check_frame(&f, e, sizeof(e)) < 0)
			return fprintf(stderr, "%s\n", e), 1;
		struct fr_target t; struct fr_mmap m; struct fr_comm c; struct fr_task k;
		struct fr_ksym y; struct fr_lost l; struct fr_target_exit x; struct fr_end d;
		switch (f.type) {
		case FR_TARGET: stream_get_target(&f, &t, e, 200);
			printf("TARGET %u %.*s %.*s\n", t.pid, S(t.kind), S(t.unwind_mode)); break;
		case FR_MMAP: stream_get_mmap(&f, &m, e, 200);
			printf("MMAP %u %u %.*s\n", m.pid, m.build_id_len, S(m.path)); break;
		case FR_COMM: stream_get_comm(&f, &c, e, 200);
			printf("COMM %u %u %u %.*s\n", c.pid, c.tid, c.flags, S(c.comm)); break;
		case FR_FORK: case FR_EXIT: stream_get_task(&f, &k, e, 200);
			printf("%s %u %u\n", f.type == FR_FORK ? "FORK" : "EXIT", k.pid, k.tid); break;
		case FR_SAMPLE: stream_get_sample(&f, &s, e, 200);
			printf("SAMPLE %u %u %u %u\n", s.pid, s.tid, s.nkernel, s.nuser); break;
		case FR_KSYM: stream_get_ksym(&f, &y, e, 200); printf("KSYM %.*s\n", S(y.name)); break;
		case FR_LOST: stream_get_lost(&f, &l, e, 200);
			printf("LOST %u %llu\n", l.kind, (unsigned long long)l.count); break;
		case FR_TARGET_EXIT: stream_get_target_exit(&f, &x, e, 200);
			printf("TARGET_EXIT %u\n", x.pid); break;
		case FR_END: stream_get_end(&f, &d, e, 200); printf("END %u\n", d.reason); break;
		case FR_ROUND: printf("ROUND\n"); break;
		default: printf("OTHER %u\n", f.type);
		}
	}
	if (rc < 0)
		return fprintf(stderr, "%s\n", r.err), 1;
	stream_reader_release(&r);
	return 0;
}
C
	${CC:-cc} -std=c17 -D_GNU_SOURCE -I"$root/lib" ${LDFLAGS:-} -o "$DECODE" \
		"$BATS_FILE_TMPDIR/decode.c" "$RP_BIN/../lib/librp.a" -lz -lm
}

teardown() {
	stop_workload
}

# refuses ARGS... MESSAGE: collect exits 1 with exactly "collect: MESSAGE" on stderr.
refuses() {
	local msg=${*: -1}
	run -1 --separate-stderr "$RP_BIN/collect" "${@:1:$#-1}"
	assert_equal "$stderr" "collect: $msg"
	assert_equal "$output" ""
}

@test "collect: an unknown unwind mode is refused" { refuses --pid 1 --unwind lbr "--unwind: unknown mode 'lbr' (auto, fp or dwarf)"; }
@test "collect: an unknown allocator family"  { refuses --pid 1 --allocator jemalloc "--allocator: unknown family 'jemalloc' (auto, rust or system)"; }
@test "collect: a zero allocation interval"   { refuses --pid 1 --alloc-interval 0 "--alloc-interval: 0 is out of range 1..1099511627776 bytes, or not whole bytes"; }
@test "collect: an allocation interval of no unit" { refuses --pid 1 --alloc-interval 4parsecs "--alloc-interval: '4parsecs': unknown unit 'parsecs' (B, KB, KiB, MB, MiB, GB, GiB, TB, TiB)"; }
@test "collect: an unknown way to attach uprobes" { refuses --pid 1 --uprobes sideways "--uprobes: unknown way 'sideways' (tracefs or multi)"; }
@test "collect: an unknown off-CPU phase"     { refuses --pid 1 --profiles off-cpu --offcpu-phase idle "--offcpu-phase: unknown phase 'idle' (blocked, runqueue or all)"; }
@test "collect: unknown profile"               { refuses --pid 1 --profiles cpu,gpu "unknown profile 'gpu' (cpu, heap, off-cpu, physical-alloc or physical-usage)"; }
@test "collect: frequency above 999"           { refuses --pid 1 --cpu-frequency 1000 "--cpu-frequency: 1000 is out of range 1..999"; }
@test "collect: pid is required"               { refuses --duration 1s "--pid or --host is required (see --help)"; }

@test "collect: --help documents every option" {
	run -0 "$RP_BIN/collect" --help
	for o in --pid --duration --cpu-frequency --unwind --profiles --kind --resume \
		--module-cache --save-stream --uprobes --verbose; do
		assert_output --partial -- "$o"
	done
}

@test "collect: a late thread is sampled, kernel symbols come first, target exit ends it" {
	require_root
	start_workload threads_later 4
	# stdout and --save-stream carry the same bytes; the file is the one read back.
	"$RP_BIN/collect" --pid "$wpid" --cpu-frequency 199 --module-cache "$BATS_TEST_TMPDIR/cache" \
		--save-stream "$BATS_TEST_TMPDIR/s.rps" >"$BATS_TEST_TMPDIR/stdout.rps"
	cmp "$BATS_TEST_TMPDIR/s.rps" "$BATS_TEST_TMPDIR/stdout.rps"
	"$DECODE" <"$BATS_TEST_TMPDIR/s.rps" >"$BATS_TEST_TMPDIR/frames"
	run -0 cat "$BATS_TEST_TMPDIR/frames"
	assert_line --index 0 "TARGET $wpid pid fp"
	assert_line --regexp "^MMAP $wpid 20 .*/threads_later\$"
	assert_line --regexp "^COMM $wpid [0-9]+ 0 rp-late\$"
	assert_line --regexp "^FORK $wpid [0-9]+\$"
	assert_line "TARGET_EXIT $wpid"
	assert_line --index -1 "END 3"
	late=$(awk '$1 == "FORK" { print $3; exit }' "$BATS_TEST_TMPDIR/frames")
	[ "$(grep -c "^SAMPLE $wpid $late " "$BATS_TEST_TMPDIR/frames")" -gt 30 ]
	# Every kernel frame's symbol is sent before the first sample that needs it.
	awk '$1 == "KSYM" { k++ } $1 == "SAMPLE" && $4 > 0 && !k { exit 1 }' \
		"$BATS_TEST_TMPDIR/frames"
	# The module cache holds the executable under its build id, readable by anyone.
	[ "$(find "$BATS_TEST_TMPDIR/cache/.build-id" -type f -perm 0644 | wc -l)" -ge 2 ]
}

@test "collect: forked children are not sampled and SIGINT writes END" {
	require_root
	# The shell only waits; all the CPU is burnt by its two children.
	sh -c "\"$RP_WORKLOADS/busy2\" 3 & \"$RP_WORKLOADS/busy2\" 3; wait" 3>&- &
	wpid=$!
	sleep 0.3
	"$RP_BIN/collect" --pid "$wpid" --unwind fp >"$BATS_TEST_TMPDIR/s.rps" 3>&- &
	cpid=$!
	sleep 1.5
	kill -INT "$cpid"
	wait "$cpid"
	wait "$wpid"
	"$DECODE" <"$BATS_TEST_TMPDIR/s.rps" >"$BATS_TEST_TMPDIR/frames"
	run -0 cat "$BATS_TEST_TMPDIR/frames"
	assert_line --index -1 "END 2"
	refute_line --regexp "^SAMPLE "
	awk -v p="$wpid" '($1 == "MMAP" || $1 == "COMM" || $1 == "FORK") && $2 != p { exit 1 }' \
		"$BATS_TEST_TMPDIR/frames"
}

@test "collect: SIGINT during the unwind calibration ends the recording, which is written" {
	require_root
	# A sleeping target gives no samples: the calibration waits for them when SIGINT comes.
	sleep 30 3>&- &
	wpid=$!
	"$RP_BIN/collect" --pid "$wpid" --duration 20s >"$BATS_TEST_TMPDIR/s.rps" \
		2>"$BATS_TEST_TMPDIR/err" 3>&- &
	cpid=$!
	sleep 1
	kill -INT "$cpid"
	wait "$cpid"
	kill "$wpid"
	"$DECODE" <"$BATS_TEST_TMPDIR/s.rps" >"$BATS_TEST_TMPDIR/frames"
	run -0 cat "$BATS_TEST_TMPDIR/frames"
	assert_line --regexp "^TARGET $wpid pid (fp|dwarf)\$"
	assert_line --index -1 "END 2"
	[ ! -s "$BATS_TEST_TMPDIR/err" ]
}

@test "collect: the target exiting during the unwind calibration is judged and written" {
	require_root
	sleep 1 3>&- &
	wpid=$!
	run --separate-stderr "$RP_BIN/collect" --pid "$wpid" --duration 20s
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
}

@test "collect: a short target's samples from the calibration are in the stream" {
	require_root
	"$RP_WORKLOADS/deep_fp" 0.7 3>&- &
	wpid=$!
	"$RP_BIN/collect" --pid "$wpid" --duration 20s --cpu-frequency 999 \
		>"$BATS_TEST_TMPDIR/s.rps" 3>&-
	"$DECODE" <"$BATS_TEST_TMPDIR/s.rps" >"$BATS_TEST_TMPDIR/frames"
	run -0 cat "$BATS_TEST_TMPDIR/frames"
	assert_line "TARGET_EXIT $wpid"
	assert_line --index -1 "END 3"
	# In the mode chosen: frame-pointer samples, or DWARF ones (sample-regs, type 14).
	[ "$(grep -Ec "^SAMPLE $wpid |^OTHER 14\$" "$BATS_TEST_TMPDIR/frames")" -ge 20 ]
}


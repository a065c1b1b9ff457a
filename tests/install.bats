#!/usr/bin/env bats
# make install: the stages under PREFIX/libexec/rustprofile, the driver linked from PREFIX/bin.

load helper

@test "install: the installed driver finds its stages and replays a stream" {
	dest=$BATS_TEST_TMPDIR/dest
	run -0 make -C "$ROOT" -s install OUT="$(dirname "$RP_BIN")" PREFIX=/usr/local DESTDIR="$dest"
	[ -L "$dest/usr/local/bin/rustprofile" ]
	for s in collect unwind aggregate emit-pprof commit import; do
		[ -x "$dest/usr/local/libexec/rustprofile/$s" ]
	done
	run -0 "$dest/usr/local/bin/rustprofile" --help
	assert_output --partial "usage: rustprofile record"
	# A capture from the fixtures goes through the installed stages.
	cap=$ROOT/../shared/fixtures/captures/x86_64-cpuclock-pie-perf5.19.perf.data
	[ -r "$cap" ] || skip "fixture missing"
	open_tmpdirs
	run -0 env -u RP_BIN "$dest/usr/local/bin/rustprofile" import --input "$cap" \
		--output "$BATS_TEST_TMPDIR/out"
	[ "$(outputs "$BATS_TEST_TMPDIR/out" cpu pb.gz | wc -l)" -eq 1 ]
}

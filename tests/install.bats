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
	[ -f "$dest/usr/local/share/man/man1/rustprofile.1" ]
	[ -f "$dest/usr/local/share/bash-completion/completions/rustprofile" ]
	# A capture from the fixtures goes through the installed stages.
	cap=$ROOT/../shared/fixtures/captures/x86_64-cpuclock-pie-perf5.19.perf.data
	[ -r "$cap" ] || skip "fixture missing"
	open_tmpdirs
	run -0 env -u RP_BIN "$dest/usr/local/bin/rustprofile" import --input "$cap" \
		--output "$BATS_TEST_TMPDIR/out"
	[ "$(outputs "$BATS_TEST_TMPDIR/out" cpu pb.gz | wc -l)" -eq 1 ]
}

# Every option --help lists, in the README, the Chinese README and the manual page.
@test "docs: every option of --help is in README.md, README.zh-CN.md and rustprofile(1)" {
	local man=$BATS_TEST_TMPDIR/man.txt missing=0 o
	LC_ALL=C.UTF-8 MANWIDTH=300 man -l "$ROOT/docs/rustprofile.1" >"$man" 2>/dev/null
	run -0 "$RP" --help
	opts=$(grep -o -- '--[a-z][a-z0-9-]*' <<<"$output" | sort -u)
	[ "$(wc -l <<<"$opts")" -gt 40 ]
	for o in $opts; do
		for f in "$ROOT/README.md" "$ROOT/README.zh-CN.md" "$man"; do
			grep -q -- "$o" "$f" || { echo "$o is not in $f"; missing=1; }
		done
	done
	[ "$missing" = 0 ]
}

@test "docs: man -l renders rustprofile(1) without warnings, with its sections" {
	run -0 env LC_ALL=C.UTF-8 MANWIDTH=100 man --warnings -l "$ROOT/docs/rustprofile.1"
	for s in NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS "EXIT STATUS" ENVIRONMENT FILES OVERHEAD; do
		assert_line "$s"
	done
	run -0 bash -c 'LC_ALL=C.UTF-8 man --warnings -l "$1" 2>&1 >/dev/null' _ "$ROOT/docs/rustprofile.1"
	assert_output ""
}

# complete WORDS...: the completions the bash script gives for the last word.
complete_words() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _rustprofile
		printf "%s\n" "${COMPREPLY[@]}"' _ "$ROOT/scripts/rustprofile.bash" "$@"
}

@test "completion: bash completes subcommands, each one's options and their values" {
	run -0 complete_words rustprofile ""
	for c in record launch replay import check serve; do assert_line "$c"; done
	run -0 complete_words rustprofile re
	assert_line record
	assert_line replay
	refute_line launch
	run -0 complete_words rustprofile record --prof
	assert_output --profiles
	run -0 complete_words rustprofile check --
	assert_line --json
	refute_line --svg
	run -0 complete_words rustprofile serve --b
	assert_line --bearer-token-file
	assert_line --bearer-token
	run -0 complete_words rustprofile record --unwind ""
	assert_output "$(printf 'auto\nfp\ndwarf')"
	run -0 complete_words rustprofile record --pid "$$"
	assert_line "$$"
	run -0 complete_words rustprofile launch --duration 1s -- ech
	assert_line echo
	# every option --help names is completed for some subcommand
	run -0 "$RP" --help
	for o in $(grep -o -- '--[a-z][a-z0-9-]*' <<<"$output" | sort -u); do
		grep -q -- "$o" "$ROOT/scripts/rustprofile.bash" || { echo "not completed: $o"; false; }
	done
}

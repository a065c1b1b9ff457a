#!/usr/bin/env bats
# The stream specification and the code must not drift apart.

bats_require_minimum_version 1.5.0

@test "every frame type in lib/frametab.c has a section in docs/stream-format.md" {
	cd "$BATS_TEST_DIRNAME/.."
	names=$(sed -n 's/^\t\[FR_[A-Z_]*\] = "\([a-z-]*\)",$/\1/p' lib/frametab.c)
	[ -n "$names" ]
	for n in $names; do
		code=$(grep -E "^\s+FR_[A-Z_]+ = [0-9]+," lib/stream.h | wc -l)
		grep -qE "^### $n \([0-9]+\)$" docs/stream-format.md || {
			echo "frame '$n' is not documented"
			return 1
		}
	done
	[ "$(echo "$names" | wc -l)" -eq "$code" ]
}

@test "documented frame numbers match lib/stream.h" {
	cd "$BATS_TEST_DIRNAME/.."
	grep -E '^### [a-z-]+ \([0-9]+\)$' docs/stream-format.md | while read -r _ name num; do
		num=${num//[()]/}
		enum=$(echo "FR_$name" | tr 'a-z-' 'A-Z_')
		grep -qE "^\s+$enum = $num,$" lib/stream.h || {
			echo "$name ($num) does not match lib/stream.h"
			return 1
		}
	done
}

#!/usr/bin/env bats
# Unwinding: frame-pointer calibration, DWARF stacks of programs without frame pointers,
# programs without unwind tables, and stacks through shared libraries.

load helper

setup_file() {
	local root="$BATS_TEST_DIRNAME/.."
	export STREAMGEN="$BATS_FILE_TMPDIR/streamgen"
	${CC:-cc} -std=c17 -D_GNU_SOURCE -I"$root/lib" ${LDFLAGS:-} -o "$STREAMGEN" \
		"$root/tests/tools/streamgen.c" "$root/.output/lib/librp.a" -lz -lm
}

setup() {
	require_root
	open_tmpdirs
	out=$BATS_TEST_TMPDIR/out
}

teardown() {
	stop_workload
}

# chain_share PPROF: percent of CPU time whose stack holds main and chain_1 .. chain_6.
chain_share() {
	pprof -traces "$1" | awk '
		function flush() { if (v > 0) { t += v; if (n == 7) c += v } v = 0; n = 0 }
		/^-----------/ { flush(); delete seen; inb = 1; next }
		inb && /^ +[0-9.]+(ms|s|us|ns)? +[^ ]/ && v == 0 {
			x = $1; u = x; sub(/[a-z]+$/, "", x); sub(/^[0-9.]+/, "", u)
			v = x * (u == "s" ? 1000 : u == "us" ? 0.001 : u == "ns" ? 0.000001 : 1)
			name = $2
		}
		inb { for (i = 1; i <= NF; i++) if ($i ~ /^(main|chain_[1-6])$/ && !seen[$i]++) n++ }
		END { flush(); if (t == 0) print 0; else printf "%.1f\n", 100 * c / t }'
}

@test "unwind: auto keeps frame pointers for a program built with them" {
	start_workload deep_fp 30
	# The calibration is part of --duration: room for its 64 samples on a loaded machine.
	run -0 "$RP" record --pid "$wpid" --duration 4s --window 4s --cpu-frequency 199 --output "$out"
	d=$out/$(outputs "$out" diagnostics json)
	run -0 jq -e '.cpu.unwind_mode == "fp" and .cpu.calibration.verdict == "accepted"
		and .cpu.calibration.samples >= 64' "$d"
}

@test "unwind: auto picks DWARF for -fomit-frame-pointer and the whole chain shows in 90% of samples" {
	start_workload deep_nofp 30
	run -0 "$RP" record --pid "$wpid" --duration 3s --window 3s --cpu-frequency 199 --output "$out"
	d=$out/$(outputs "$out" diagnostics json)
	cat "$d"
	run -0 jq -e '.cpu.unwind_mode == "dwarf" and .cpu.calibration.verdict == "rejected"
		and (.cpu.unwind_reason | test("three frames"))' "$d"
	share=$(chain_share "$out/$(outputs "$out" cpu pb.gz)")
	echo "whole chain in $share% of CPU time"
	within "$share" 100 10
}

# copies STREAM: "tid sp len" of each sample-regs frame (x86_64: sp is the 8th register).
copies() {
	"$STREAMGEN" unpack <"$1" | awk '/^sample-regs / {
		tid = sp = ""; len = 0
		for (i = 2; i <= NF; i++) {
			if ($i ~ /^tid=/) tid = substr($i, 5)
			if ($i ~ /^regs=/) { split(substr($i, 6), r, ","); sp = r[8] }
			if ($i ~ /^stack=/) len = (length($i) - 6) / 2
		}
		print tid, sp, len }'
}

@test "unwind: DWARF copies of the main thread end at its start_stack, not in the environment" {
	[ "$(uname -m)" = x86_64 ] || skip "reads x86_64 registers"
	# 20 KiB of environment: uncut, every copy of this shallow stack is a whole 16 KiB.
	BIG=$(head -c 20000 /dev/zero | tr '\0' x) start_workload deep_nofp 30
	local s=$BATS_TEST_TMPDIR/s mc=$BATS_TEST_TMPDIR/mc
	top=$(awk '{ print $28 }' "/proc/$wpid/stat")
	"$RP_BIN/collect" --pid "$wpid" --unwind dwarf --duration 2s --cpu-frequency 199 \
		--module-cache "$mc" >"$s"
	# Every copy ends 8 bytes past start_stack (argc kept); none is long.
	local n=0 cut=0 longest=0 tid sp len
	while read -r tid sp len; do
		n=$((n + 1))
		[ $((sp + len)) -ne $((top + 8)) ] || cut=$((cut + 1))
		[ "$len" -le "$longest" ] || longest=$len
	done < <(copies "$s")
	echo "samples $n, cut $cut, longest copy $longest"
	[ "$n" -ge 100 ]
	[ "$cut" -eq "$n" ]
	[ "$longest" -lt 4096 ]
	# The stacks are whole: main and the six-deep chain in nearly every sample.
	mkdir -p "$out"
	"$RP_BIN/unwind" --module-cache "$mc" <"$s" | "$RP_BIN/aggregate" --window 60s |
		"$RP_BIN/emit-pprof" --output "$out" | "$RP_BIN/commit" --output "$out" >/dev/null
	share=$(chain_share "$out/$(outputs "$out" cpu pb.gz)")
	echo "whole chain in $share% of CPU time"
	within "$share" 100 5
}

@test "unwind: DWARF copies of the main thread's allocations end at its start_stack too" {
	BIG=$(head -c 20000 /dev/zero | tr '\0' x) start_workload heap_mix 30
	local s=$BATS_TEST_TMPDIR/s
	"$RP_BIN/collect" --pid "$wpid" --unwind dwarf --profiles cpu,heap --duration 2s \
		--cpu-frequency 99 --module-cache "$BATS_TEST_TMPDIR/mc" >"$s"
	# heap_mix allocates on its main thread: uncut, each copy is the BPF program's 4 or
	# 16 KiB, most of it the environment.
	run -0 awk '/^alloc / { for (i = 2; i <= NF; i++) if ($i ~ /^stack=/) {
			n++; l = (length($i) - 6) / 2; if (l > m) m = l } }
		END { print n + 0, m + 0; exit !(n >= 20 && m < 2048) }' < <("$STREAMGEN" unpack <"$s")
	echo "allocations with a copy, longest: $output"
}

@test "unwind: DWARF copies of other threads stay as the kernel made them" {
	[ "$(uname -m)" = x86_64 ] || skip "reads x86_64 registers"
	start_workload busy2 30
	local s=$BATS_TEST_TMPDIR/s
	"$RP_BIN/collect" --pid "$wpid" --unwind dwarf --duration 2s --cpu-frequency 199 \
		--module-cache "$BATS_TEST_TMPDIR/mc" >"$s"
	# A thread's copy runs to the end of its stack's mapping (a page boundary) or is a whole
	# 16 KiB: never cut short.
	local n=0 whole=0 tid sp len
	while read -r tid sp len; do
		[ "$tid" != "$wpid" ] || continue
		n=$((n + 1))
		[ $(((sp + len) % 4096)) -ne 0 ] && [ "$len" -ne 16384 ] || whole=$((whole + 1))
	done < <(copies "$s")
	echo "thread samples $n, whole $whole"
	[ "$n" -ge 100 ]
	[ "$whole" -eq "$n" ]
}

@test "unwind: explicit dwarf on a program without unwind tables fails with one line" {
	start_workload deep_nounwind 30
	run --separate-stderr "$RP" record --pid "$wpid" --unwind dwarf --duration 2s --output "$out"
	[ "$status" -ne 0 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "${stderr_lines[0]}" == *"no unwind tables"* ]]
}

@test "unwind: auto on a program without frame pointers or unwind tables needs --allow-partial" {
	start_workload deep_nounwind 30
	run --separate-stderr "$RP" record --pid "$wpid" --duration 2s --cpu-frequency 199 \
		--output "$out"
	[ "$status" -ne 0 ]
	[[ "${stderr_lines[0]}" == *"--allow-partial"* ]]
	run -0 "$RP" record --pid "$wpid" --duration 2s --cpu-frequency 199 --allow-partial \
		--output "$out"
	prof=$out/$(outputs "$out" cpu pb.gz)
	run -0 pprof -top "$prof"
	assert_output --partial chain_6
	d=$out/$(outputs "$out" diagnostics json)
	run -0 jq -e '.cpu.unwind_reason | test("leaf-only")' "$d"
}

@test "unwind: DWARF stacks pass through libc: program, qsort, program" {
	start_workload qsort_cb 30
	run -0 "$RP" record --pid "$wpid" --unwind dwarf --duration 4s --window 4s \
		--cpu-frequency 199 --output "$out"
	prof=$out/$(outputs "$out" cpu pb.gz)
	run -0 pprof -traces "$prof"
	# Some trace has compare_slowly, then libc's sorting code, then sort_round.
	echo "$output" | awk '/^-----------/ { s = 0; next }
		/compare_slowly/ { s = 1; next }
		s == 1 && /msort|qsort/ { s = 2; next }
		s == 2 && /sort_round/ { ok = 1 }
		END { exit !ok }'
}

# fold_perf: perf script's stacks as "main;...;leaf count", frames above main left out.
fold_perf() {
	perf script -i "$1" -F ip,sym 2>/dev/null | awk '
		function flush() {
			if (n) {
				s = ""; top = 0
				for (i = n; i >= 1; i--) if (f[i] == "main") top = i
				for (i = top; i >= 1; i--) s = s (s == "" ? "" : ";") f[i]
				if (top) c[s]++
			}
			n = 0
		}
		/^$/ { flush(); next }
		{ sym = $2; sub(/\+0x[0-9a-f]+$/, "", sym); sub(/^__GI_/, "", sym); f[++n] = sym }
		END { flush(); for (s in c) print s, c[s] }'
}

@test "unwind: DWARF agrees with perf --call-graph dwarf on the top stacks" {
	command -v perf >/dev/null || skip "perf not installed"
	start_workload deep_nofp 30
	run -0 "$RP" record --pid "$wpid" --unwind dwarf --duration 3s --window 3s \
		--cpu-frequency 199 --collapsed --output "$out"
	perf record -q -e cpu-clock -F 199 --call-graph dwarf -p "$wpid" \
		-o "$BATS_TEST_TMPDIR/perf.data" -- sleep 3 3>&- 2>/dev/null
	fold_perf "$BATS_TEST_TMPDIR/perf.data" | sort -k2 -rn | head -n 5 >"$BATS_TEST_TMPDIR/perf.top"
	col=$out/$(outputs "$out" cpu collapsed)
	sed 's/^[^;]*;\(.*;\)\{0,1\}main;/main;/' "$col" | sort -k2 -rn | head -n 5 \
		>"$BATS_TEST_TMPDIR/ours.top"
	cat "$BATS_TEST_TMPDIR/perf.top" "$BATS_TEST_TMPDIR/ours.top"
	# The heaviest stack is the same, and each of perf's top stacks with more than 2% of
	# its samples is one of ours.
	[ "$(head -n 1 "$BATS_TEST_TMPDIR/perf.top" | cut -d' ' -f1)" = \
		"$(head -n 1 "$BATS_TEST_TMPDIR/ours.top" | cut -d' ' -f1)" ]
	total=$(fold_perf "$BATS_TEST_TMPDIR/perf.data" | awk '{ t += $2 } END { print t }')
	awk -v t="$total" '$2 * 50 > t { print $1 }' "$BATS_TEST_TMPDIR/perf.top" |
		while read -r s; do grep -q "^$s " "$BATS_TEST_TMPDIR/ours.top"; done
}

@test "unwind: an exec ends the window with a warning and the new image follows" {
	# 199 Hz: the new image's calibration, inside --duration, has its 64 samples in time.
	run -0 "$RP" launch --duration 8s --window 10s --cpu-frequency 199 --output "$out" -- \
		"$RP_WORKLOADS/exec_later" 3 "$RP_WORKLOADS/deep_fp" 30
	mapfile -t ds < <(outputs "$out" diagnostics json)
	mapfile -t ps < <(outputs "$out" cpu pb.gz)
	[ "${#ds[@]}" -ge 2 ]
	# The window the exec ends: short, complete, the old target and the warning.
	run -0 jq -e '.final_window == false
		and (.target.executable | endswith("/exec_later"))
		and (.warnings | any(test("the target executed a new image: .*deep_fp")))' \
		"$out/${ds[0]}"
	last=$((${#ds[@]} - 1))
	run -0 jq -e '(.target.executable | endswith("/deep_fp")) and .cpu.unwind_mode == "fp"' \
		"$out/${ds[$last]}"
	run -0 pprof -top "$out/${ps[$last]}"
	assert_output --partial chain_6
}

@test "unwind: auto leaves frame pointers for good after a window of poor stacks" {
	[ "$(uname -m)" = x86_64 ] || skip "fp_degrade is x86_64 assembly"
	start_workload fp_degrade 2.5 30
	run -0 "$RP" record --pid "$wpid" --duration 6s --window 1s --cpu-frequency 199 \
		--output "$out"
	mapfile -t ds < <(outputs "$out" diagnostics json)
	mapfile -t ps < <(outputs "$out" cpu pb.gz)
	run -0 jq -e '.cpu.unwind_mode == "fp" and .cpu.fallback_reason == null
		and .cpu.calibration.verdict == "accepted"' "$out/${ds[0]}"
	# The window that failed is still frame-pointer and says what happens next.
	f=-1
	for i in "${!ds[@]}"; do
		if jq -e '.warnings | any(test("switches to DWARF"))' "$out/${ds[$i]}" >/dev/null
		then f=$i; break; fi
	done
	[ "$f" -ge 1 ]
	run -0 jq -e '.cpu.unwind_mode == "fp" and .cpu.usable_stack_ratio < 0.9
		and .cpu.fallback_reason == null' "$out/${ds[$f]}"
	last=$((${#ds[@]} - 1))
	[ "$f" -lt "$last" ]
	# (jq directly: bats' run would clobber a loop counter)
	for d in "${ds[@]:$((f + 1))}"; do
		jq -e '.cpu.unwind_mode == "dwarf"
			and (.cpu.fallback_reason | test("usable frame-pointer stacks"))' "$out/$d"
	done
	# DWARF follows the loop's CFI back to main, where frame pointers found 0x10.
	share=$(cum_share main "$out/${ps[$last]}")
	bad=$(cum_share bad_phase "$out/${ps[$last]}")
	echo "last window: main $share%, bad_phase $bad%"
	within "$share" 100 10
	within "$bad" 100 10
}

@test "unwind: explicit fp never falls back, however poor the stacks" {
	[ "$(uname -m)" = x86_64 ] || skip "fp_degrade is x86_64 assembly"
	start_workload fp_degrade 0.5 30
	run -0 "$RP" record --pid "$wpid" --unwind fp --duration 3s --window 1s \
		--cpu-frequency 199 --output "$out"
	mapfile -t ds < <(outputs "$out" diagnostics json)
	for d in "${ds[@]}"; do
		run -0 jq -e '.cpu.unwind_mode == "fp" and .cpu.fallback_reason == null
			and (.warnings | all(test("DWARF") | not))' "$out/$d"
	done
	last=$((${#ds[@]} - 1))
	run -0 jq -e '.cpu.usable_stack_ratio < 0.5' "$out/${ds[$last]}"
}

#!/usr/bin/env bats
# The driver as a user meets it: who owns the files, arguments that stay arguments, logs that
# keep what they had, signals however the run was started, and a bounded end.

load helper

setup() {
	open_tmpdirs
}

teardown() {
	[ -z "${svgpid:-}" ] || kill -CONT "$svgpid" 2>/dev/null || true
	[ -z "${rp:-}" ] || kill -TERM "$rp" 2>/dev/null || true
	stop_workload
}

# pprof_ok FILE: go tool pprof reads FILE and it has samples.
pprof_ok() {
	gzip -t "$1"
	pprof -raw "$1" | grep -q '^Samples:'
}

@test "driver: shellcheck finds nothing in the driver, at its default severity" {
	run -0 shellcheck "$ROOT/rustprofile.sh"
}

@test "driver: shellcheck finds no warning in the other shell scripts (bench, scripts, tests, fuzz)" {
	local f files=()
	for f in "$ROOT"/bench/*.sh "$ROOT"/scripts/*.sh "$ROOT"/workloads/*.sh "$ROOT"/tests/*.sh \
		"$ROOT"/tests/golden/*.sh "$ROOT"/fuzz/*.sh; do
		[ -e "$f" ] && files+=("$f")
	done
	[ "${#files[@]}" -gt 10 ]
	run -0 shellcheck -S warning "${files[@]}"
}

@test "driver: as plain root in a fresh mktemp directory the default --output . works" {
	require_root
	start_workload cpu_split 30
	dir=$(mktemp -d)
	run -0 --separate-stderr bash -c 'cd "$1" && exec "$2" record --unwind fp --pid "$3" --duration 2s --window 1s' \
		_ "$dir" "$RP" "$wpid"
	echo "$output"
	[ "$(outputs "$dir" cpu pb.gz | wc -l)" -ge 2 ]
	for f in $(outputs "$dir" cpu pb.gz); do pprof_ok "$dir/$f"; done
	# uid 0 kept, confined: the files are root's, as the directory is.
	[ "$(stat -c %u "$dir/$(outputs "$dir" cpu pb.gz | head -n 1)")" -eq 0 ]
	rm -rf "$dir"
}

@test "driver: stages that stay uid 0 hold no capability, have no-new-privs and are not dumpable" {
	require_root
	start_workload cpu_split 30
	dir=$(mktemp -d)
	"$RP" record --unwind fp --pid "$wpid" --duration 6s --window 2s --svg --output "$dir" \
		>"$BATS_TEST_TMPDIR/log" 2>&1 &
	rp=$!
	for _ in $(seq 100); do pgrep -P "$rp" -x commit >/dev/null && break; sleep 0.1; done
	sleep 1
	n=0
	for p in $(pgrep -P "$rp"); do
		# A child of the driver that has just ended (a check it ran) is no stage.
		c=$(cat "/proc/$p/comm" 2>/dev/null) || continue
		[ "$c" != collect ] || continue
		st=$(tr -s '\t' ' ' <"/proc/$p/status" 2>/dev/null) || continue
		echo "$p $c: $(echo "$st" | grep -E '^(Uid|Cap|NoNewPrivs)' | tr '\n' ' ')"
		echo "$st" | grep -qx 'Uid: 0 0 0 0'
		for k in CapInh CapPrm CapEff CapBnd CapAmb; do
			echo "$st" | grep -qx "$k: 0000000000000000"
		done
		echo "$st" | grep -qx 'NoNewPrivs: 1'
		# Not dumpable: the kernel gives its /proc files to root whatever its uid, and
		# a process with no capability of the same uid cannot read its memory map.
		run ! setpriv --inh-caps=-all --bounding-set=-all cat "/proc/$p/maps"
		n=$((n + 1))
	done
	echo "$n stages checked"
	[ "$n" -ge 5 ]
	wait "$rp"
	rp=
	[ "$(outputs "$dir" cpu pb.gz | wc -l)" -eq 3 ]
	rm -rf "$dir"
}

# test_user: a user of the machine with a home of its own (made once).
test_user() {
	id rp-test >/dev/null 2>&1 || useradd -m -s /bin/sh rp-test
	tuid=$(id -u rp-test) tgid=$(id -g rp-test)
	thome=$(getent passwd rp-test | cut -d: -f6)
	[ -d "$thome" ] || { mkdir -p "$thome"; chown rp-test: "$thome"; }
}

@test "driver: behind sudo, the files and the created directory belong to the caller" {
	require_root
	test_user
	start_workload cpu_split 30
	out=$thome/rp-driver-$$/new/profiles
	run -0 --separate-stderr env SUDO_UID="$tuid" SUDO_GID="$tgid" "$RP" record --unwind fp --pid "$wpid" \
		--duration 2s --window 1s --svg --output "$out"
	[ "$(outputs "$out" cpu pb.gz | wc -l)" -ge 2 ]
	# Everything beneath the first directory the run created is the caller's.
	run -0 find "$thome/rp-driver-$$" \( ! -uid "$tuid" -o ! -gid "$tgid" \) -print
	[ -z "$output" ]
	# The caller can remove it all without root.
	run -0 setpriv --reuid="$tuid" --regid="$tgid" --clear-groups rm -rf "$thome/rp-driver-$$"
	[ ! -e "$thome/rp-driver-$$" ]
}

@test "driver: without sudo, the stages run as the owner of the output directory" {
	require_root
	test_user
	start_workload cpu_split 30
	out=$thome/rp-owned-$$
	mkdir -p "$out"
	chown "$tuid:$tgid" "$out"
	run -0 --separate-stderr env -u SUDO_UID -u SUDO_GID "$RP" record --unwind fp --pid "$wpid" \
		--duration 2s --window 1s --output "$out"
	run -0 find "$out" ! -uid "$tuid" -print
	[ -z "$output" ]
	rm -rf "$out"
}

@test "driver: --output with spaces and a dollar sign works for record, launch, replay and import" {
	require_root
	start_workload cpu_split 30
	base="$BATS_TEST_TMPDIR/a dir \$HOME 'q'"
	run -0 --separate-stderr "$RP" record --unwind fp --pid "$wpid" --duration 2s --window 1s \
		--save-stream "$base/rec stream" --output "$base/rec out"
	[ "$(outputs "$base/rec out" cpu pb.gz | wc -l)" -ge 2 ]
	run -0 --separate-stderr "$RP" launch --unwind fp --duration 2s --window 1s \
		--output "$base/launch out" -- "$RP_WORKLOADS/cpu_split" 1
	[ "$(outputs "$base/launch out" cpu pb.gz | wc -l)" -ge 1 ]
	run -0 --separate-stderr "$RP" replay --input "$base/rec stream" \
		--module-cache "$base/rec out/.modules" --output "$base/replay out"
	[ "$(outputs "$base/replay out" cpu pb.gz | wc -l)" -ge 2 ]
	capture=$ROOT/../shared/fixtures/captures/x86_64-cpuclock-pie-perf5.19.perf.data
	[ -r "$capture" ] || skip "no perf.data fixture beside the repository"
	cp "$capture" "$base/a capture.data"
	run -0 --separate-stderr "$RP" import --input "$base/a capture.data" --output "$base/import out"
	[ "$(outputs "$base/import out" cpu pb.gz | wc -l)" -ge 1 ]
}

# bad_value MESSAGE ARGS...: the driver refuses with one line containing MESSAGE, status 1,
# and nothing is written.
bad_value() {
	local msg=$1
	shift
	out=$BATS_TEST_TMPDIR/bad
	rm -rf "$out"
	run --separate-stderr "$RP" "$@" --output "$out"
	echo "status $status stderr: $stderr"
	[ "$status" -eq 1 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "${stderr_lines[0]}" == *"$msg"* ]]
	[ ! -e "$out" ] || [ -z "$(ls -A "$out")" ]
}

@test "driver: bad option values, spaces included, are refused with one line each" {
	require_root
	bad_value "cpu-frequency" record --pid $$ --cpu-frequency "49 --unwind fp"
	bad_value "profile" record --pid $$ --profiles ""
	bad_value "profile" record --pid $$ --profiles "cpu off-cpu"
	bad_value "duration" record --pid $$ --duration "10s --svg"
	bad_value "window" record --pid $$ --window "1s 2"
	bad_value "keep-windows" record --pid $$ --keep-windows "2 3"
	bad_value "max-stacks" record --pid $$ --max-stacks " 5"
	bad_value "max-pending-events" record --pid $$ --max-pending-events "1 2"
	bad_value "unwind" record --pid $$ --unwind "fp dwarf"
	bad_value "probability" record --pid $$ --profiles off-cpu --offcpu-probability "10 20"
	bad_value "completion-budget" record --pid $$ --completion-budget "3 s x"
	bad_value "max-timeline-samples" record --pid $$ --max-timeline-samples "5 6"
	bad_value "--symbol-dir '/nonexistent dir' is not a directory" \
		record --pid $$ --symbol-dir "/nonexistent dir"
}

@test "driver: an --output naming a file and a command that cannot run are one line each" {
	require_root
	touch "$BATS_TEST_TMPDIR/a file"
	run --separate-stderr "$RP" record --pid $$ --duration 1s --output "$BATS_TEST_TMPDIR/a file"
	[ "$status" -eq 1 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "${stderr_lines[0]}" == *"is not a directory"* ]]
	run --separate-stderr "$RP" launch --duration 1s --output "$BATS_TEST_TMPDIR/o" -- /etc/passwd
	echo "$stderr"
	[ "$status" -eq 1 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[ "${stderr_lines[0]}" = "collect: launch: cannot run '/etc/passwd': Permission denied" ]
}

@test "driver: 2>>log keeps what the log had, and every wrote line" {
	require_root
	start_workload cpu_split 30
	log=$BATS_TEST_TMPDIR/run.log
	printf 'line one\nline two\n' >"$log"
	# A stage warning (an unknown --symbol-dir layout is not one; a leaf-only run is not
	# either): the run's own stderr and stdout both go to the log, appended.
	"$RP" record --unwind fp --pid "$wpid" --duration 3s --window 1s --output "$BATS_TEST_TMPDIR/out" \
		>>"$log" 2>>"$log"
	cat "$log"
	[ "$(sed -n 1p "$log")" = "line one" ]
	[ "$(sed -n 2p "$log")" = "line two" ]
	n=$(ls "$BATS_TEST_TMPDIR/out" | grep -c '^\(cpu\|heap\|diagnostics\)-')
	[ "$(grep -c '^wrote ' "$log")" -eq "$n" ]
	for f in $(sed -n 's/^wrote //p' "$log"); do [ -f "$f" ]; done
}

@test "driver: stderr on a socket works" {
	require_root
	start_workload cpu_split 30
	run -0 python3 - "$RP" "$wpid" "$BATS_TEST_TMPDIR/out" <<-'EOF'
		import socket, subprocess, sys
		a, b = socket.socketpair()
		p = subprocess.run([sys.argv[1], "record", "--unwind", "fp", "--pid", sys.argv[2], "--duration", "2s",
		                    "--window", "1s", "--output", sys.argv[3]],
		                   stdout=subprocess.PIPE, stderr=b)
		b.close()
		err = a.recv(65536).decode()
		print("status", p.returncode, "stderr", repr(err))
		sys.exit(p.returncode)
	EOF
	echo "$output"
	[ "$(outputs "$BATS_TEST_TMPDIR/out" cpu pb.gz | wc -l)" -ge 2 ]
}

@test "driver: SIGINT stops a run that was started with SIGINT ignored" {
	require_root
	start_workload cpu_split 60
	out=$BATS_TEST_TMPDIR/out
	# As a script's `cmd &` does: SIGINT ignored in the driver from its start.
	bash -c 'trap "" INT; exec "$@"' _ "$RP" record --unwind fp --pid "$wpid" --duration 0 --window 30s \
		--output "$out" >"$BATS_TEST_TMPDIR/stdout" 2>"$BATS_TEST_TMPDIR/stderr" &
	rp=$!
	sleep 3
	kill -INT "$rp"
	for _ in $(seq 100); do kill -0 "$rp" 2>/dev/null || break; sleep 0.1; done
	! kill -0 "$rp" 2>/dev/null || fail "SIGINT did not stop the run"
	wait "$rp"
	rp=
	[ "$(outputs "$out" cpu pb.gz | wc -l)" -eq 1 ]
	pprof_ok "$out/$(outputs "$out" cpu pb.gz)"
	run -0 jq -e '.final_window' "$out/$(outputs "$out" diagnostics json)"
}

@test "driver: a stopped emit-svg holds the run no longer than --duration plus the completion budget" {
	require_root
	start_workload cpu_split 60
	out=$BATS_TEST_TMPDIR/out
	start=$(date +%s)
	"$RP" record --unwind fp --pid "$wpid" --duration 6s --window 2s --svg --completion-budget 3s \
		--output "$out" >"$BATS_TEST_TMPDIR/stdout" 2>"$BATS_TEST_TMPDIR/stderr" &
	rp=$!
	# Stop emit-svg once it has written the first window's SVG.
	for _ in $(seq 100); do
		[ -z "$(outputs "$out" cpu svg)" ] || break
		sleep 0.1
	done
	svgpid=$(pgrep -f "emit-svg (--run-as [0-9:]+ )?--output $out\$")
	kill -STOP "$svgpid"
	status=0
	wait "$rp" || status=$?
	rp=
	elapsed=$(($(date +%s) - start))
	cat "$BATS_TEST_TMPDIR/stderr"
	echo "elapsed $elapsed s, status $status"
	# 6 s of recording, the 3 s budget, and a second or two of start and finish.
	[ "$elapsed" -le 13 ]
	[ "$status" -eq 3 ]
	grep -q '^fanout: completion budget ran out with emit-svg still behind' "$BATS_TEST_TMPDIR/stderr"
	ds=($(outputs "$out" diagnostics json))
	[ "${#ds[@]}" -eq 3 ]
	named=0
	for d in "${ds[@]}"; do
		pprof_ok "$out/$(echo "$d" | sed 's/^diagnostics-/cpu-/; s/\.json$/.pb.gz/')"
		w=$(basename "$d" .json)
		svg=${w/diagnostics-/cpu-}.svg
		if [ ! -f "$out/$svg" ]; then
			# A window without its SVG says why.
			run -0 jq -e 'any(.warnings[]; startswith("emit-svg had not written window"))' "$out/$d"
			named=$((named + 1))
		fi
	done
	[ "$named" -ge 1 ]
	run -0 jq -e '.final_window' "$out/${ds[2]}"
	# The stopped emitter was ended, and no temporary file is left.
	for _ in $(seq 50); do kill -0 "$svgpid" 2>/dev/null || break; sleep 0.1; done
	! kill -0 "$svgpid" 2>/dev/null || fail "line 286: the negated check succeeded"
	run -0 bash -c 'ls -A "$1" | grep "^\." | grep -v "^\.modules\$" || true' _ "$out"
	[ -z "$output" ]
}

# kill_stage NAME: a live record with every output; once a window is published, SIGKILL to
# the stage NAME.  The driver's one line names it, nothing half-written stays, the windows
# published are whole, and the target runs on.
kill_stage() {
	local name=$1 out=$BATS_TEST_TMPDIR/out-$1 p
	"$RP" record --unwind fp --pid "$wpid" --duration 30s --window 1s --svg --collapsed \
		--firefox-profile json --output "$out" >"$BATS_TEST_TMPDIR/stdout" \
		2>"$BATS_TEST_TMPDIR/stderr" &
	rp=$!
	for _ in $(seq 250); do [ -z "$(outputs "$out" diagnostics json)" ] || break; sleep 0.1; done
	[ -n "$(outputs "$out" diagnostics json)" ]
	p=$(pgrep -P "$rp" -x "$name" | head -n 1)
	[ -n "$p" ]
	kill -KILL "$p"
	status=0
	for _ in $(seq 150); do kill -0 "$rp" 2>/dev/null || break; sleep 0.1; done
	! kill -0 "$rp" 2>/dev/null || fail "the run did not end after $name was killed"
	wait "$rp" || status=$?
	rp=
	cat "$BATS_TEST_TMPDIR/stderr"
	[ "$status" -eq 1 ]
	mapfile -t lines <"$BATS_TEST_TMPDIR/stderr"
	[ "${#lines[@]}" -eq 1 ]
	[ "${lines[0]}" = "rustprofile: stage $name was killed by signal 9" ]
	run -0 bash -c 'ls -A "$1" | grep "^\." | grep -v "^\.modules\$" || true' _ "$out"
	[ -z "$output" ]
	for f in $(outputs "$out" cpu pb.gz); do pprof_ok "$out/$f"; done
	for f in $(outputs "$out" diagnostics json); do jq -e . "$out/$f" >/dev/null; done
	kill -0 "$wpid"
}

@test "driver: a killed stage is named in one line; nothing half-written stays; the target runs on" {
	require_root
	start_workload cpu_split 600
	for s in collect unwind aggregate emit-collapsed emit-pprof emit-svg emit-firefox fanout \
		commit; do
		echo "--- $s"
		kill_stage "$s"
	done
}

# logging_tools DIR: mkdir, mkfifo and rm in DIR that note each call in DIR/calls and run
# the real command.
logging_tools() {
	local t
	mkdir -p "$1"
	for t in mkdir mkfifo rm; do
		printf '#!/bin/sh\necho %s >>"%s/calls"\nexec /usr/bin/%s "$@"\n' "$t" "$1" "$t" >"$1/$t"
		chmod +x "$1/$t"
	done
}

@test "driver: with bash's loadable builtins a recording starts no mkdir, mkfifo or rm; without them it works all the same" {
	require_root
	[ -f /usr/lib/bash/mkdir ] && [ -f /usr/lib/bash/mkfifo ] && [ -f /usr/lib/bash/rm ] ||
		skip "no bash-builtins (scripts/install-deps.sh installs it)"
	start_workload cpu_split 30
	tools=$BATS_TEST_TMPDIR/tools
	logging_tools "$tools"
	run -0 env PATH="$tools:$PATH" "$RP" record --unwind fp --pid "$wpid" --duration 1s \
		--output "$BATS_TEST_TMPDIR/with/new"
	[ "$(outputs "$BATS_TEST_TMPDIR/with/new" cpu pb.gz | wc -l)" -eq 1 ]
	[ ! -e "$tools/calls" ]
	# Without them (hidden in a mount namespace of its own), the commands do the same.
	run -0 unshare -m sh -c 'mount -t tmpfs none /usr/lib/bash && exec env PATH="$1:$PATH" \
		"$2" record --unwind fp --pid "$3" --duration 1s --output "$4"' _ "$tools" "$RP" \
		"$wpid" "$BATS_TEST_TMPDIR/without/new"
	[ "$(outputs "$BATS_TEST_TMPDIR/without/new" cpu pb.gz | wc -l)" -eq 1 ]
	grep -qx mkdir "$tools/calls"
	grep -qx mkfifo "$tools/calls"
	grep -qx rm "$tools/calls"
	# The work directory went either way.
	[ -z "$(find "${TMPDIR:-/tmp}" -maxdepth 1 -name "rustprofile.*" -newer "$tools/mkdir" \
		2>/dev/null)" ]
}

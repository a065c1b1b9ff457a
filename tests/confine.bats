#!/usr/bin/env bats
# Confinement (docs/privileges.md): every stage after collect runs with no capabilities,
# no-new-privs, non-dumpable and a Landlock ruleset of its own paths, and collect keeps
# only the capabilities its loop uses.  The stages are run by hand as root (uid 0, so that
# Landlock and not the file modes is what stops them) on a saved stream of cpu_split, with
# RUSTPROFILE_CONFINE_SELFTEST making each try a file outside its output and /etc/shadow.

load helper

CAPTURES=$BATS_TEST_DIRNAME/../../shared/fixtures/captures
CAPTURE=x86_64-cpuclock-pie-perf5.19.perf.data # 487 samples (tests/import.bats)

setup_file() {
	export REC=$BATS_FILE_TMPDIR/rec
	[ "$(id -u)" -eq 0 ] || return 0
	# nobody replays from here: bats makes its directories 0700.  The driver makes live.
	mkdir -p "$REC"
	chmod a+rx "$BATS_RUN_TMPDIR" "$(dirname "$BATS_FILE_TMPDIR")" "$BATS_FILE_TMPDIR" "$REC"
	"$RP_WORKLOADS/cpu_split" 10 3>&- &
	local w=$!
	"$RP" record --pid "$w" --unwind fp --duration 3s --window 1s --cpu-frequency 199 \
		--output "$REC/live" --save-stream "$REC/rec.stream" >/dev/null 3>&- || true
	kill "$w" 2>/dev/null; wait "$w" 2>/dev/null || true
	chmod -R a+rX "$REC"
}

setup() {
	require_root
	open_tmpdirs
	# The selftest's create goes here: a directory root could write to, outside --output.
	away=$BATS_TEST_TMPDIR/away
	mkdir -p "$away"
}

teardown() {
	stop_workload
	[ -z "${control:-}" ] || kill "$control" 2>/dev/null || true
	[ -z "${driver:-}" ] || wait "$driver" 2>/dev/null || true
}

need_rec() {
	[ -s "$REC/rec.stream" ] || skip "no recording of cpu_split"
}

# denied STAGE LOG: the stage's stderr says both selftest attempts were refused, once.
denied() {
	local stage=$1 log=$2
	echo "$stage: $(cat "$log")"
	[ "$(grep -c "^$stage: confine selftest: " "$log")" -eq 2 ]
	grep -Eqx "$stage: confine selftest: create $away/rustprofile-confine-selftest-[0-9]+: Permission denied" "$log"
	grep -qx "$stage: confine selftest: open /etc/shadow: Permission denied" "$log"
}

# st NAME IN OUT STAGE ARGS...: one stage of the hand pipeline, IN to OUT, its stderr in
# $t/NAME.err, with the selftest on; it must succeed.
st() {
	local name=$1 in=$2 out=$3
	shift 3
	RUSTPROFILE_CONFINE_SELFTEST=$away "$RP_BIN/$@" <"$in" >"$out" 2>"$t/$name.err" 3>&-
}

@test "confine: each stage as uid 0 is refused a file outside its output and /etc/shadow, and publishes its windows" {
	need_rec
	t=$BATS_TEST_TMPDIR o=$BATS_TEST_TMPDIR/o
	mkdir -p "$o"
	st unwind "$REC/rec.stream" "$t/1" unwind --module-cache "$REC/live/.modules"
	st aggregate "$t/1" "$t/2" aggregate --window 1s
	st emit-svg "$t/2" "$t/3" emit-svg --output "$o"
	st emit-collapsed "$t/3" "$t/4" emit-collapsed --output "$o"
	st emit-firefox "$t/4" "$t/5" emit-firefox --output "$o" --format json
	st emit-pprof "$t/5" "$t/6" emit-pprof --output "$o"
	st commit "$t/6" "$t/wrote" commit --output "$o"
	for s in unwind aggregate emit-svg emit-collapsed emit-firefox emit-pprof commit; do
		denied "$s" "$t/$s.err"
	done
	n=$(outputs "$o" cpu pb.gz | wc -l)
	[ "$n" -ge 2 ]
	[ "$(outputs "$o" cpu svg | wc -l)" -eq "$n" ]
	[ "$(outputs "$o" cpu collapsed | wc -l)" -eq "$n" ]
	[ "$(outputs "$o" firefox json.gz | wc -l)" -eq "$n" ]
	# With a heap profile (the default), a heap pprof, SVG and collapsed file too.
	h=$(outputs "$o" heap pb.gz | wc -l)
	[ "$(outputs "$o" heap svg | wc -l)" -eq "$h" ]
	[ "$(outputs "$o" heap collapsed | wc -l)" -eq "$h" ]
	[ "$(grep -c '^wrote ' "$t/wrote")" -eq $((5 * n + 3 * h)) ]
	# Confined unwind still names the functions, from the module cache.
	run -0 pprof -top "$o/$(outputs "$o" cpu pb.gz | head -n 1)"
	assert_output --partial hot_a
	[ -z "$(ls -A "$away")" ]
}

@test "confine: fanout as uid 0 opens only its branches' FIFOs, and the branch's SVGs are published" {
	need_rec
	t=$BATS_TEST_TMPDIR o=$BATS_TEST_TMPDIR/o
	mkdir -p "$o"
	"$RP_BIN/unwind" --module-cache "$REC/live/.modules" <"$REC/rec.stream" >"$t/1"
	"$RP_BIN/aggregate" --window 1s <"$t/1" >"$t/2"
	"$RP_BIN/emit-pprof" --output "$o" <"$t/2" >"$t/3"
	mkfifo "$t/svg.in" "$t/svg.out"
	RUSTPROFILE_CONFINE_SELFTEST=$away "$RP_BIN/emit-svg" --output "$o" <"$t/svg.in" \
		>"$t/svg.out" 2>"$t/emit-svg.err" 3>&- &
	st fanout "$t/3" "$t/4" fanout --branch "emit-svg=$t/svg.in,$t/svg.out"
	wait $!
	"$RP_BIN/commit" --output "$o" <"$t/4" >/dev/null
	denied fanout "$t/fanout.err"
	denied emit-svg "$t/emit-svg.err"
	# fanout sheds the windows that end while emit-svg is busy, never the first.
	[ "$(outputs "$o" cpu pb.gz | wc -l)" -ge 2 ]
	[ "$(outputs "$o" cpu svg | wc -l)" -ge 1 ]
}

@test "confine: import as uid 0 is refused the same, and its capture is published" {
	[ -r "$CAPTURES/$CAPTURE" ] || skip "fixture $CAPTURE missing"
	t=$BATS_TEST_TMPDIR o=$BATS_TEST_TMPDIR/o
	mkdir -p "$o"
	st import /dev/null "$t/1" import --input "$CAPTURES/$CAPTURE"
	"$RP_BIN/unwind" <"$t/1" | "$RP_BIN/aggregate" --window 1000000s |
		"$RP_BIN/emit-pprof" --output "$o" | "$RP_BIN/commit" --output "$o" >/dev/null
	denied import "$t/import.err"
	run -0 jq -e '.cpu.samples == 487' "$o/$(outputs "$o" diagnostics json)"
}

@test "confine: the selftest creates, and removes, a file where the stage may write" {
	o=$BATS_TEST_TMPDIR/o
	mkdir -p "$o"
	run -0 --separate-stderr env RUSTPROFILE_CONFINE_SELFTEST="$o" "$RP_BIN/commit" --check \
		--output "$o"
	assert_regex "${stderr_lines[0]}" "^commit: confine selftest: create $o/rustprofile-confine-selftest-[0-9]+: created$"
	[ "${stderr_lines[1]}" = "commit: confine selftest: open /etc/shadow: Permission denied" ]
	[ -z "$(ls -A "$o")" ]
}

# status_of PID FIELD: a field of /proc/PID/status, e.g. CapEff.
status_of() {
	awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"
}

# The capabilities docs/privileges.md says collect keeps, as /proc/PID/status shows them:
# DAC_OVERRIDE 1, DAC_READ_SEARCH 2, IPC_LOCK 14, SYS_PTRACE 19, SYS_RESOURCE 24, and
# PERFMON 38, BPF 39, CHECKPOINT_RESTORE 40, or SYS_ADMIN 21 on a kernel without them;
# of those, the ones root has here (a container's bounding set may lack some).
collect_kept() {
	local last mask=0 b have
	last=$(cat /proc/sys/kernel/cap_last_cap)
	have=$((16#$(status_of self CapBnd)))
	for b in 0 1 2 14 19 24 38 39 40; do
		[ "$b" -gt "$last" ] || mask=$((mask | (1 << b)))
	done
	# CAP_SYS_ADMIN only before Linux 5.9 (no CAP_CHECKPOINT_RESTORE): the heap probes of
	# the default profiles are made again through tracefs after an exec, without it.
	[ "$last" -ge 40 ] || mask=$((mask | (1 << 21)))
	printf '%016x\n' $((mask & have))
}

# as_nobody CMD...: CMD as nobody, its stdout and stderr in files nobody may open (the
# driver's first stage writes to /dev/stderr, which a pipe of root's would refuse); sets
# status and output like run.
as_nobody() {
	local o=$BATS_TEST_TMPDIR/nobody.out
	: >"$o" && chown nobody "$o"
	status=0
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$@" >"$o" 2>&1 3>&- || status=$?
	output=$(cat "$o")
	echo "$output"
}

# as_nocaps UID GID CMD...: CMD as that uid and gid with no capability at all.
as_nocaps() {
	local uid=$1 gid=$2
	shift 2
	setpriv --reuid="$uid" --regid="$gid" --clear-groups --inh-caps=-all \
		--bounding-set=-all "$@"
}

@test "confine: while recording, the stages hold no capability and are not dumpable; collect keeps its documented set" {
	command -v setpriv >/dev/null || skip "no setpriv"
	start_workload cpu_split 30
	out=$BATS_TEST_TMPDIR/live
	# The driver gives the stages to nobody, so /proc/PID of a dumpable stage would be
	# nobody's; it runs with group nogroup here, so a dumpable collect's would be
	# root:nogroup.  A non-dumpable process's /proc/PID belongs to root:root.
	SUDO_UID=$(id -u nobody) SUDO_GID=$(id -g nobody) \
		setpriv --regid=nogroup --keep-groups "$RP" record --pid "$wpid" --unwind fp \
		--duration 8s --window 2s --svg --collapsed --firefox-profile json \
		--output "$out" >"$BATS_TEST_TMPDIR/log" 2>&1 3>&- &
	driver=$!
	local pids='' p c collect='' names=''
	for _ in $(seq 100); do
		collect=$(pgrep -P "$driver" -x collect || true)
		[ -n "$collect" ] && [ "$(status_of "$collect" CapBnd)" = 0000000000000000 ] &&
			pgrep -P "$driver" -x commit >/dev/null && break
		sleep 0.1
	done
	[ -n "$collect" ]
	for p in $(pgrep -P "$driver"); do
		pids="$pids $p $(pgrep -P "$p" || true)"
	done
	# A dumpable process of the stages' uid, as a control for the environ check.
	setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all --bounding-set=-all \
		sleep 30 3>&- &
	control=$!
	sleep 0.2
	as_nocaps nobody nogroup cat "/proc/$control/environ" >/dev/null
	for p in $pids; do
		c=$(cat "/proc/$p/comm")
		names="$names $c"
		echo "$p $c: $(grep -E '^(Uid|Gid|Cap|NoNewPrivs)' "/proc/$p/status" | tr -s '\t\n' '  ')"
		[ "$(status_of "$p" NoNewPrivs)" = 1 ]
		[ "$(status_of "$p" CapInh)" = 0000000000000000 ]
		[ "$(status_of "$p" CapAmb)" = 0000000000000000 ]
		[ "$(status_of "$p" CapBnd)" = 0000000000000000 ]
		[ "$(stat -c %u:%g "/proc/$p/environ")" = 0:0 ]
		if [ "$p" = "$collect" ]; then
			[ "$(status_of "$p" Gid)" != 0 ]
			[ "$(status_of "$p" CapEff)" = "$(collect_kept)" ]
			[ "$(status_of "$p" CapPrm)" = "$(collect_kept)" ]
			continue
		fi
		[ "$(status_of "$p" Uid)" != 0 ]
		[ "$(status_of "$p" CapEff)" = 0000000000000000 ]
		[ "$(status_of "$p" CapPrm)" = 0000000000000000 ]
		run ! as_nocaps "$(status_of "$p" Uid)" "$(status_of "$p" Gid)" cat "/proc/$p/environ"
	done
	echo "checked:$names"
	for s in collect unwind aggregate emit-svg emit-collapsed emit-firefox emit-pprof fanout \
		commit; do
		[[ " $names " == *" $s "* ]]
	done
	# unwind and its module opener.
	[ "$(echo "$names" | tr ' ' '\n' | grep -cx unwind)" -eq 2 ]
	wait "$driver"
	driver=
	cat "$BATS_TEST_TMPDIR/log"
	[ "$(outputs "$out" cpu pb.gz | wc -l)" -ge 3 ]
	[ "$(outputs "$out" cpu svg | wc -l)" -ge 1 ]
}

@test "confine: nobody replays a saved stream into its own directory with every output" {
	need_rec
	mine=$BATS_TEST_TMPDIR/mine
	mkdir -p "$mine" && chown nobody:nogroup "$mine"
	as_nobody "$RP" replay --input "$REC/rec.stream" --module-cache "$REC/live/.modules" \
		--window 1s --svg --collapsed --firefox-profile json --output "$mine"
	[ "$status" -eq 0 ]
	n=$(outputs "$mine" cpu pb.gz | wc -l)
	[ "$n" -ge 2 ]
	[ "$(outputs "$mine" cpu svg | wc -l)" -eq "$n" ]
	[ "$(outputs "$mine" cpu collapsed | wc -l)" -eq "$n" ]
	[ "$(outputs "$mine" firefox json.gz | wc -l)" -eq "$n" ]
	[ -z "$(find "$mine" ! -user nobody)" ]
	run -0 pprof -top "$mine/$(outputs "$mine" cpu pb.gz | head -n 1)"
	assert_output --partial hot_a
}

@test "confine: nobody imports a capture into its own directory" {
	[ -r "$CAPTURES/$CAPTURE" ] || skip "fixture $CAPTURE missing"
	mine=$BATS_TEST_TMPDIR/mine
	mkdir -p "$mine" && chown nobody:nogroup "$mine"
	cp "$CAPTURES/$CAPTURE" "$BATS_TEST_TMPDIR/cap.data" && chmod a+r "$BATS_TEST_TMPDIR/cap.data"
	as_nobody "$RP" import --input "$BATS_TEST_TMPDIR/cap.data" --window 60s --output "$mine"
	[ "$status" -eq 0 ]
	run -0 jq -e '.cpu.samples == 487' "$mine/$(outputs "$mine" diagnostics json)"
}

@test "confine: commit --landlock-abi prints the kernel's Landlock ABI" {
	want=$(python3 -c 'import ctypes; print(max(ctypes.CDLL(None).syscall(444, 0, 0, 1), 0))')
	run -0 "$RP_BIN/commit" --landlock-abi
	[ "$output" = "$want" ]
	# collect tells it too, after its checks: the driver's record and launch ask it there.
	sleep 30 &
	spid=$!
	run -0 "$RP_BIN/collect" --check --landlock-abi --pid "$spid" --duration 1s
	[ "$output" = "$want" ]
	run -0 "$RP_BIN/collect" --check --landlock-abi --launch
	[ "$output" = "$want" ]
	# Only with --check, and nothing when the checks fail.
	run -1 "$RP_BIN/collect" --landlock-abi --pid "$spid"
	assert_output --partial "--landlock-abi applies to --check only"
	kill "$spid"
	run -1 "$RP_BIN/collect" --check --landlock-abi --pid 999999999
	[ "${lines[0]}" != "$want" ]
}

@test "confine: commit --check asks, under the run's confinement, whether DIR may be written" {
	o=$BATS_TEST_TMPDIR/o
	mkdir -p "$o"
	before=$(stat -c %y "$o")
	run -0 "$RP_BIN/commit" --check --output "$o"
	# The directory is left as it was, its times too.
	[ -z "$(ls -A "$o")" ]
	[ "$(stat -c %y "$o")" = "$before" ]
	# A directory that is not there yet is the driver's to make: options only.
	run -0 "$RP_BIN/commit" --check --output "$BATS_TEST_TMPDIR/later"
	# nobody may not write into root's directory...
	run -1 --separate-stderr setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$RP_BIN/commit" --check --output "$o"
	[ "$stderr" = "commit: cannot write to output directory '$o': Permission denied" ]
	# ...and neither may uid 0 into nobody's, once it holds no capability.
	chown nobody:nogroup "$o"
	run -1 --separate-stderr "$RP_BIN/commit" --check --output "$o"
	[ "$stderr" = "commit: cannot write to output directory '$o': Permission denied" ]
	run -0 setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$RP_BIN/commit" --check --output "$o"
	[ -z "$(ls -A "$o")" ]
}

# refused TEXT STAGE ARGS...: a path the user named that is not there is one line, status 1.
refused() {
	local text=$1
	shift
	run -1 --separate-stderr "$RP_BIN/$@" </dev/null
	[ "$stderr" = "$text" ]
}

@test "confine: a missing --symbol-dir is one line" { refused "unwind: --symbol-dir '/nonexistent/syms': No such file or directory" unwind --symbol-dir /nonexistent/syms; }
@test "confine: a missing commit FILE is one line"  { refused "commit: cannot open '/nonexistent/s': No such file or directory" commit --output "$BATS_TEST_TMPDIR" /nonexistent/s; }

@test "confine: a file named through /dev/fd (a pipe) is still read" {
	run -0 --separate-stderr "$RP_BIN/emit-svg" --folded <(printf 'main;hot 30\nmain;cold 10\n')
	assert_output --partial '<svg'
	assert_output --partial 'hot'
}

# creds PID: the ids, groups, capability sets and no-new-privs of a process.
creds() {
	grep -E '^(Uid|Gid|Groups|CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' "/proc/$1/status"
}

@test "confine: --run-as leaves each stage as setpriv would start it" {
	local stage p
	local -a args
	t=$BATS_TEST_TMPDIR
	mkdir -p "$t/o" && chmod 777 "$t/o"
	for stage in unwind aggregate emit-pprof emit-svg commit; do
		args=()
		case $stage in unwind | aggregate) ;; *) args=(--output "$t/o") ;; esac
		# The stage waits on an empty stdin that stays open; what it holds is read meanwhile.
		sleep 3 | "$RP_BIN/$stage" --run-as 65534:65534 ${args[@]+"${args[@]}"} \
			>/dev/null 2>&1 3>&- &
		sleep 0.5
		p=$(pgrep -n -x "$stage") || fail "$stage did not start"
		creds "$p" >"$t/run-as" || fail "$stage: no status"
		wait || true
		sleep 3 | setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
			--bounding-set=-all --no-new-privs -- "$RP_BIN/$stage" ${args[@]+"${args[@]}"} \
			>/dev/null 2>&1 3>&- &
		sleep 0.5
		p=$(pgrep -n -x "$stage") || fail "$stage did not start under setpriv"
		creds "$p" >"$t/setpriv"
		wait || true
		echo "$stage:"; cat "$t/run-as"
		diff "$t/setpriv" "$t/run-as" || fail "$stage: --run-as differs from setpriv"
		grep -qx 'Uid:	65534	65534	65534	65534' "$t/run-as"
		grep -qx 'CapBnd:	0000000000000000' "$t/run-as"
		grep -qx 'NoNewPrivs:	1' "$t/run-as"
	done
}

@test "confine: a bad --run-as, or one not started as root, is one line and status 1" {
	refused "aggregate: --run-as '65534': not UID:GID" aggregate --run-as 65534
	refused "aggregate: --run-as 'x:1': not UID:GID" aggregate --run-as x:1
	refused "aggregate: --run-as '': not UID:GID" aggregate --run-as
	run -1 --separate-stderr setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$RP_BIN/aggregate" --run-as 0:0 </dev/null
	echo "$stderr"
	[[ $stderr == "aggregate: --run-as"* ]]
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	# Anywhere but first it is an unknown option.
	run -2 "$RP_BIN/aggregate" --check --run-as 0:0 </dev/null
}

#!/usr/bin/env bats
# JIT frames (docs/jit.md): the perf maps and jitdumps of Node, Java and Python name the
# frames in their anonymous executable memory, live and after a replay from the module cache.

load helper

setup() {
	require_root
	open_tmpdirs
	out=$BATS_TEST_TMPDIR/out
	# node writes its logs (isolate-*.log, jit-PID.dump) in its working directory.
	cd "$BATS_TEST_TMPDIR"
	# Run with --no-turbo-inlining: TurboFan would inline jitInnerWork into jitHotLoop.
	cat >"$BATS_TEST_TMPDIR/hot.js" <<-'EOF'
	function jitInnerWork(n) { let s = 0; for (let i = 0; i < n; i++) s = (s + i * 31) % 1000003; return s; }
	function jitHotLoop(ms) { const end = Date.now() + ms; let t = 0; while (Date.now() < end) t += jitInnerWork(20000); return t; }
	console.log(jitHotLoop(Number(process.argv[2])));
	EOF
}

teardown() {
	stop_workload
	rm -f /tmp/perf-"${wpid:-none}".map
}

# jit DIR KEY: a member of the jit object of the last diagnostics file of DIR.
jit() {
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["jit"][sys.argv[2]])' \
		"$1/$(outputs "$1" diagnostics json | tail -n 1)" "$2"
}

# top DIR: the functions of the last CPU profile of DIR, as go tool pprof reads them.
top() {
	pprof -top -nodecount=1000 "$1/$(outputs "$1" cpu pb.gz | tail -n 1)"
}

@test "node --perf-basic-prof: the perf map names the JavaScript functions" {
	command -v node >/dev/null || skip "no node"
	node --perf-basic-prof --no-turbo-inlining "$BATS_TEST_TMPDIR/hot.js" 8000 >/dev/null &
	wpid=$!
	sleep 1
	run -0 "$RP" record --pid "$wpid" --duration 3s --window 3s --profiles cpu --output "$out"
	top "$out" >"$BATS_TEST_TMPDIR/top"
	grep -q 'JS:[*~^]*jitInnerWork .*hot.js' "$BATS_TEST_TMPDIR/top"
	grep -q 'JS:[*~^]*jitHotLoop .*hot.js' "$BATS_TEST_TMPDIR/top"
	# Nearly all the time is in the named JavaScript, not in unnamed anonymous memory:
	# auto's calibration (its first 64 samples, 1.3 s at 49 Hz) goes out after the perf
	# map is copied, so its samples are named too.
	share=$(cum_share "$(grep -o 'JS:[*~^]*jitHotLoop [^ ]*' "$BATS_TEST_TMPDIR/top" | head -n 1)" \
		"$out/$(outputs "$out" cpu pb.gz | tail -n 1)")
	echo "jitHotLoop's share: $share%"
	awk -v s="$share" 'BEGIN { exit !(s >= 90) }'
	[ "$(jit "$out" files_found)" -eq 1 ]
	[ "$(jit "$out" symbols_loaded)" -gt 100 ]
	[ "$(jit "$out" frames_named)" -gt 0 ]
	[ "$(jit "$out" symbols_dropped)" -eq 0 ]
	# The copy in the module cache is the runtime's file as it was at the end.
	copy=$(ls "$out"/.modules/.jit/*/"$wpid"/perf.map)
	[ "$(stat -c %U "$copy")" = "$(stat -c %U "$out")" ]
	head -c "$(stat -c %s "$copy")" /tmp/perf-"$wpid".map | cmp - "$copy"
}

@test "node --perf-prof: the jitdump names the JavaScript functions (no perf map)" {
	command -v node >/dev/null || skip "no node"
	# node writes jit-PID.dump in its working directory (setup's) and maps it: that is how
	# it is found.
	# V8 writes its jitdump through a 4 KiB stdio buffer: the records of the code compiled
	# last reach the file only once more code is compiled (or at exit).  The loop compiles
	# throwaway functions every 200 ms so that the hot functions' records come out early.
	cat >dump.js <<-'EOF'
	function jitInnerWork(n) { let s = 0; for (let i = 0; i < n; i++) s = (s + i * 31) % 1000003; return s; }
	let k = 0;
	function filler() { for (let i = 0; i < 20; i++) new Function('x', 'return x + ' + k++)(i); }
	function jitHotLoop(ms) {
		const end = Date.now() + ms; let t = 0, next = 0;
		while (Date.now() < end) { t += jitInnerWork(20000); if (Date.now() > next) { filler(); next = Date.now() + 200; } }
		return t;
	}
	console.log(jitHotLoop(Number(process.argv[2])));
	EOF
	node --perf-prof --interpreted-frames-native-stack --no-turbo-inlining dump.js 8000 >/dev/null &
	wpid=$!
	sleep 1
	[ ! -e /tmp/perf-"$wpid".map ]
	run -0 "$RP" record --pid "$wpid" --duration 3s --window 3s --profiles cpu --output "$out"
	top "$out" >"$BATS_TEST_TMPDIR/top"
	grep -q 'JS:[*~^]*jitInnerWork .*dump.js' "$BATS_TEST_TMPDIR/top"
	grep -q 'JS:[*~^]*jitHotLoop .*dump.js' "$BATS_TEST_TMPDIR/top"
	[ -s "$(ls "$out"/.modules/.jit/*/"$wpid"/jit.dump)" ]
	[ ! -e "$(ls -d "$out"/.modules/.jit/*/"$wpid")/perf.map" ]
	[ "$(jit "$out" files_found)" -eq 1 ]
	[ "$(jit "$out" malformed_entries)" -eq 0 ]
}

@test "java: jcmd Compiler.perfmap during the recording names the compiled methods from then on" {
	command -v java >/dev/null && command -v javac >/dev/null && command -v jcmd >/dev/null ||
		skip "no JDK (java, javac, jcmd)"
	cat >"$BATS_TEST_TMPDIR/JitHot.java" <<-'EOF'
	public class JitHot {
	    static long spinWork(long n) { long s = 0; for (long i = 0; i < n; i++) s += (i ^ (s >>> 3)) * 31; return s; }
	    public static void main(String[] a) {
	        long end = System.nanoTime() + Long.parseLong(a[0]) * 1000000000L, t = 0;
	        while (System.nanoTime() < end) t += spinWork(100000);
	        System.out.println(t);
	    }
	}
	EOF
	javac -d "$BATS_TEST_TMPDIR" "$BATS_TEST_TMPDIR/JitHot.java"
	# JIT code has no CFI: its stacks are walked by frame pointers, which HotSpot's compiled
	# code keeps only when asked to (docs/jit.md).
	java -XX:+PreserveFramePointer -cp "$BATS_TEST_TMPDIR" JitHot 12 >/dev/null &
	wpid=$!
	sleep 2
	"$RP" record --pid "$wpid" --duration 6s --window 6s --profiles cpu --unwind fp --output "$out" \
		>"$BATS_TEST_TMPDIR/rec.log" 2>&1 &
	rec=$!
	# The map is written while the recording runs: unwind reads it once it appears.
	sleep 2
	jcmd "$wpid" Compiler.perfmap >/dev/null
	wait "$rec"
	top "$out" >"$BATS_TEST_TMPDIR/top"
	grep -q 'long JitHot.spinWork(long)' "$BATS_TEST_TMPDIR/top"
	[ "$(jit "$out" files_found)" -eq 1 ]
	[ "$(jit "$out" rereads)" -ge 1 ]
	[ "$(jit "$out" frames_named)" -gt 0 ]
}

# A Python of version 3.12 or later built with frame pointers (-X perf's trampolines are
# walked by them: they have no CFI): on PATH, else one pyenv installed.
python312() {
	local p
	for p in python3.14 python3.13 python3.12 /root/.pyenv/versions/3.1[2-9]*/bin/python3; do
		p=$(command -v "$p" 2>/dev/null) || continue
		"$p" -c 'import sys, sysconfig
sys.exit(sys.version_info < (3, 12) or
	 "-fno-omit-frame-pointer" not in (sysconfig.get_config_var("CFLAGS") or ""))' \
			2>/dev/null && { echo "$p"; return; }
	done
	return 1
}

@test "python -X perf (3.12+): the trampolines name the Python functions" {
	py=$(python312) || skip "no Python 3.12+ built with -fno-omit-frame-pointer here (-X perf is new in 3.12; without frame pointers its stacks cannot be walked)"
	cat >"$BATS_TEST_TMPDIR/hot.py" <<-'EOF'
	import sys, time
	def py_inner_work(n):
	    s = 0
	    for i in range(n):
	        s = (s + i * 31) % 1000003
	    return s
	def py_hot_loop(secs):
	    end = time.time() + secs
	    while time.time() < end:
	        py_inner_work(20000)
	py_hot_loop(float(sys.argv[1]))
	EOF
	"$py" -X perf "$BATS_TEST_TMPDIR/hot.py" 8 &
	wpid=$!
	sleep 1
	run -0 "$RP" record --pid "$wpid" --duration 3s --window 3s --profiles cpu --unwind fp \
		--output "$out"
	top "$out" >"$BATS_TEST_TMPDIR/top"
	grep -q 'py::py_inner_work:.*hot.py' "$BATS_TEST_TMPDIR/top"
	grep -q 'py::py_hot_loop:.*hot.py' "$BATS_TEST_TMPDIR/top"
	[ "$(jit "$out" files_found)" -eq 1 ]
}

@test "replay: the module cache's copy names the JIT frames after the runtime's file is gone" {
	command -v node >/dev/null || skip "no node"
	node --perf-basic-prof --no-turbo-inlining "$BATS_TEST_TMPDIR/hot.js" 8000 >/dev/null &
	wpid=$!
	sleep 1
	run -0 "$RP" record --pid "$wpid" --duration 3s --window 3s --profiles cpu --output "$out" \
		--save-stream "$BATS_TEST_TMPDIR/rec"
	stop_workload
	rm -f /tmp/perf-"$wpid".map
	run -0 "$RP" replay --input "$BATS_TEST_TMPDIR/rec" --module-cache "$out/.modules" \
		--output "$BATS_TEST_TMPDIR/replay"
	top "$BATS_TEST_TMPDIR/replay" >"$BATS_TEST_TMPDIR/top"
	grep -q 'JS:[*~^]*jitInnerWork .*hot.js' "$BATS_TEST_TMPDIR/top"
	[ "$(jit "$BATS_TEST_TMPDIR/replay" frames_named)" -gt 0 ]
	# Every function the live run named, the replay names (it may name more: it reads the
	# whole copy at once).
	names() { sed -nE 's/^ *([^ ]+ +){5}(JS:)/\2/p' | sort; }
	top "$out" | names >"$BATS_TEST_TMPDIR/live.txt"
	names <"$BATS_TEST_TMPDIR/top" >"$BATS_TEST_TMPDIR/re.txt"
	[ -s "$BATS_TEST_TMPDIR/live.txt" ]
	[ -z "$(comm -23 "$BATS_TEST_TMPDIR/live.txt" "$BATS_TEST_TMPDIR/re.txt")" ]
}

@test "a perf map that is a symbolic link to another file is not copied" {
	# The process maps anonymous executable memory (as a JIT does) through python's mmap.
	python3 -c '
import mmap, os, sys, time
m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
os.symlink("/etc/shadow", "/tmp/perf-%d.map" % os.getpid())
print(os.getpid(), flush=True)
end = time.time() + 8
while time.time() < end:
    pass
' >"$BATS_TEST_TMPDIR/pid" &
	wpid=$!
	sleep 1
	run -0 "$RP" record --pid "$wpid" --duration 2s --window 2s --profiles cpu --output "$out"
	rm -f /tmp/perf-"$wpid".map
	[ ! -e "$(ls -d "$out"/.modules/.jit/*/"$wpid" 2>/dev/null)/perf.map" ]
	! grep -rq root: "$out/.modules" || fail "line 204: the negated check succeeded"
}

@test "retention: a session's JIT files go with the last of its windows" {
	command -v node >/dev/null || skip "no node"
	node --perf-basic-prof "$BATS_TEST_TMPDIR/hot.js" 8000 >/dev/null &
	wpid=$!
	sleep 1
	run -0 "$RP" record --pid "$wpid" --duration 2s --window 2s --profiles cpu --output "$out"
	stop_workload
	old=$(ls "$out/.modules/.jit")
	[ -n "$old" ]
	[ -d "$out/.modules/.jit/$old" ]
	# Another session while the first one's windows remain: they keep its files.
	run -0 "$RP" launch --duration 1s --window 1s --profiles cpu --output "$out" -- \
		sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i + 1)); done'
	[ -d "$out/.modules/.jit/$old" ]
	# Its windows removed by hand: the next session's retention removes its files.
	rm -f "$out"/*-"$old"-*
	run -0 "$RP" launch --duration 1s --window 1s --profiles cpu --output "$out" -- \
		sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i + 1)); done'
	[ ! -e "$out/.modules/.jit/$old" ]
}

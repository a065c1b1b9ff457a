#!/usr/bin/env bats
# The heap profiles' in-use state across the processes of a target (docs/heap.md), on
# crafted streams (tests/tools/streamgen.c pack) through aggregate, emit-collapsed,
# emit-pprof and commit.  No root.

load helper
load derived

setup_file() {
	build_streamgen
}

setup() {
	D=$BATS_TEST_TMPDIR/out
}

# tree_stream END: the target (pid 100) and a child (pid 200) each keep one sampled block
# in window 0 (1 s from event time 0); END is the child's end at time 4000 (an exit, or an
# exec of a new image).  unwind then forgets the child's mapping, as it does once no process
# maps it, and aggregate passes that on after window 0; the target allocates again in
# window 1, the last.
tree_stream() {
	cat <<-EOT
	header clockid=1 e_machine=62 clock_offset_ns=1700000000000000000 session_id=0x00c0ffee12345678
	target pid=100 cpu_frequency=100 flags=2 kind=launch exe=/usr/bin/app comm=app profiles=heap window_nanos=1000000000
	mapping id=3 pid=100 start=0x400000 limit=0x500000 offset=0x1000 flags=30 build_id=4f1c3b path=/usr/bin/app
	mapping id=5 pid=200 start=0x600000 limit=0x700000 offset=0x1000 flags=30 build_id=5a5a5a path=/usr/bin/child
	function id=1 start_line=10 name=main filename=app.c
	function id=5 start_line=30 name=child_work filename=child.c
	location id=2 mapping_id=3 address=0x401100 lines=1:12
	location id=5 mapping_id=5 address=0x601100 lines=5:31
	comm pid=100 tid=100 comm=app
	fork time=1500 pid=200 ppid=100 tid=200 ptid=100
	comm pid=200 tid=200 comm=child
	heap-stack time=2000 pid=100 tid=100 addr=0x1000 size=100 weight=1 stack_flags=1 locs=2
	heap-stack time=3000 pid=200 tid=200 addr=0x1000 size=500 weight=1 stack_flags=1 locs=5
	$1
	forget ids=5
	round time=5000
	round time=1000002000
	heap-stack time=1000003000 pid=100 tid=100 addr=0x2000 size=10 weight=1 stack_flags=1 locs=2
	end time=2000000000 reason=4
	EOT
}

# chain: the text on stdin packed and through the stages into $D; their statuses in $D.status.
chain() {
	rm -rf "$D" && mkdir -p "$D"
	set +e
	"$STREAMGEN" pack | "$RP_BIN/aggregate" 2>"$D.err" |
		"$RP_BIN/emit-collapsed" --output "$D" 2>>"$D.err" |
		"$RP_BIN/emit-pprof" --output "$D" 2>>"$D.err" |
		"$RP_BIN/commit" --output "$D" >/dev/null 2>>"$D.err"
	echo "${PIPESTATUS[*]}" >"$D.status"
	set -e
}

# inuse INDEX: "pid alloc_space inuse_space" of each stack of the heap pprof of window INDEX.
inuse() {
	local f
	f=$D/$(outputs "$D" heap pb.gz | sed -n "$(($1 + 1))p")
	pprof -raw "$f" | awk '/^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+:/ { x = $4; sub(/:$/, "", x); v = $2 " " x }
		/process.pid:/ { sub(/.*process.pid:\[/, ""); print $1, v }' | sort
}

# child_ends END: the child's END in the crafted stream; every stage succeeds, window 0
# keeps the child's allocation but nothing of it in use, and window 1 has the target alone.
child_ends() {
	tree_stream "$1" | chain
	cat "$D.err"
	[ "$(cat "$D.status")" = "0 0 0 0 0" ]
	run -0 inuse 0
	assert_output $'100 100 100\n200 500 0'
	run -0 inuse 1
	assert_output '100 10 110'
}

@test "heap stream: a child that ended holds nothing in use from its exit on, and no window names its forgotten mapping" {
	child_ends "exit time=4000 pid=200 ppid=100 tid=200 ptid=100 flags=1"
	run -1 grep -h child_work "$D"/heap-*-000001-*.collapsed
}

@test "heap stream: a child that executes a new image loses its old image's blocks" {
	child_ends "comm time=4000 pid=200 tid=200 flags=1 comm=other"
}

@test "heap stream: the target's own blocks stay in use to its end" {
	tree_stream "exit time=4000 pid=200 ppid=100 tid=200 ptid=100 flags=1
	exit time=1000005000 pid=100 ppid=1 tid=100 ptid=1 flags=1" | chain
	[ "$(cat "$D.status")" = "0 0 0 0 0" ]
	run -0 inuse 1
	assert_output '100 10 110'
}

# plugin_stream: the target (pid 100) keeps a block allocated in a plugin (mapping 7) whose
# mapping a new mmap then replaced (a dlclose and another dlopen at its address): unwind
# forgets mapping 7 right away, while the block is still in use.  The plugin's 1,100 other
# locations make that forget outweigh all else, so every emitter compacts its tables when
# it comes (lib/defs.c).  $2 goes into window 1.
plugin_stream() {
	cat <<-EOT
	header clockid=1 e_machine=62 clock_offset_ns=1700000000000000000 session_id=0x00c0ffee12345678
	target pid=100 cpu_frequency=100 flags=2 kind=launch exe=/usr/bin/app comm=app profiles=heap window_nanos=1000000000
	mapping id=3 pid=100 start=0x400000 limit=0x500000 offset=0x1000 flags=30 build_id=4f1c3b path=/usr/bin/app
	mapping id=7 pid=100 start=0x7f0000000000 limit=0x7f0000100000 offset=0x1000 flags=30 build_id=7a7a7a path=/usr/lib/plugin.so
	function id=1 start_line=10 name=main filename=app.c
	function id=7 start_line=70 name=plugin_alloc filename=plugin.c
	location id=2 mapping_id=3 address=0x401100 lines=1:12
	location id=7 mapping_id=7 address=0x7f0000001100 lines=7:71
	EOT
	for i in $(seq 100 1199); do
		echo "location id=$i mapping_id=7 address=$(printf '0x%x' $((0x7f0000002000 + i))) lines=7:72"
	done
	cat <<-EOT
	comm pid=100 tid=100 comm=app
	heap-stack time=2000 pid=100 tid=100 addr=0x1000 size=100 weight=1 stack_flags=1 locs=7,2
	$1
	round time=5000
	round time=1000002000
	heap-stack time=1000003000 pid=100 tid=100 addr=0x2000 size=10 weight=1 stack_flags=1 locs=2
	$2
	round time=1000004000
	round time=2000002000
	end time=3000000000 reason=4
	EOT
}

@test "heap stream: a block of a mapping unwind forgot while it is in use keeps its stack in later windows" {
	plugin_stream "forget ids=7" | chain
	cat "$D.err"
	[ "$(cat "$D.status")" = "0 0 0 0 0" ]
	[ ! -s "$D.err" ]
	run -0 inuse 1
	assert_output $'100 0 100\n100 10 10'
	run -0 inuse 2
	assert_output $'100 0 10\n100 0 100'
	grep -h plugin_alloc "$D"/heap-*-000002-*.collapsed
}

@test "heap stream: the forget of a mapping that blocks in use name goes on once the last of them is freed" {
	plugin_stream "forget ids=7" "heap-free time=1000003500 pid=100 tid=100 addr=0x1000" |
		"$STREAMGEN" pack | "$RP_BIN/aggregate" | "$STREAMGEN" unpack >"$BATS_TEST_TMPDIR/agg.txt"
	# Held through the round that ends window 0, passed on at the first round after the free.
	run -0 grep -n -e '^forget' -e '^round' -e '^heap-free' "$BATS_TEST_TMPDIR/agg.txt"
	assert_output --partial $'heap-free time=1000003500'
	run -0 awk '/^heap-free/ { f = 1 } /^forget ids=7$/ { print (f ? "after" : "before") }' \
		"$BATS_TEST_TMPDIR/agg.txt"
	assert_output after
	plugin_stream "forget ids=7" "heap-free time=1000003500 pid=100 tid=100 addr=0x1000" | chain
	[ "$(cat "$D.status")" = "0 0 0 0 0" ]
	run -0 inuse 2
	assert_output '100 0 10'
}

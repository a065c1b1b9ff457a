#!/bin/sh
# symbolize.sh: symbolizer throughput against llvm-symbolizer and eu-addr2line.
#
# USAGE: sh bench/symbolize.sh     (after `make`, which builds bench/symbolize_driver.c)
#   env: FILES=8 PER=600 ADDRS=100000 REPS=3 EU_ADDRS=10000
# eu-addr2line gets only the first EU_ADDRS addresses (it is tens of times slower; its rate
# is still per address, startup included).
# Generates a C program with FILES*PER functions (bench/gen_symbench.sh), compiles it with
# -g -O2, picks ADDRS random addresses inside its functions, and symbolizes all of them with
# each tool, one process per run (startup and indexing included), REPS runs each, printing
# the median seconds, addresses/second and the ratio to ours:
#   symbolize: 100000 addresses in 4808 functions, 3 runs each (median)
#   symbolize: rustprofile        0.159 s    628931 addr/s (100000 addresses)
#   symbolize: llvm-symbolizer    0.994 s    100604 addr/s (100000 addresses)   ours 6.252x faster
#   symbolize: eu-addr2line      17.457 s       573 addr/s (10000 addresses)   ours 1097.611x faster
# All three print functions, inline chains and file:line (llvm-symbolizer and eu-addr2line
# with their defaults plus -f -i for eu-addr2line).
set -eu
. "$(dirname "$0")/common.sh"
bench_init symbolize
FILES=${FILES:-8}
PER=${PER:-600}
ADDRS=${ADDRS:-100000}
REPS=${REPS:-3}
EU_ADDRS=${EU_ADDRS:-10000}
DRIVER=$(need_bench_driver symbolize_driver) || exit 1

sh "$ROOT/bench/gen_symbench.sh" "$BENCH_TMP/src" "$FILES" "$PER"
(cd "$BENCH_TMP/src" && cc -g -O2 -o "$BENCH_TMP/prog" ./*.c) || die "cannot compile the program"

# Random addresses inside sized function symbols (awk parses nm's hex itself: mawk has
# no strtonum).
nm -S --defined-only "$BENCH_TMP/prog" | awk -v n="$ADDRS" '
	function hex(s,   i, v) { v = 0; for (i = 1; i <= length(s); i++)
		v = v * 16 + index("0123456789abcdef", tolower(substr(s, i, 1))) - 1; return v }
	$3 ~ /^[tT]$/ && hex($2) > 0 { lo[k] = hex($1); sz[k] = hex($2); k++ }
	END { srand(42); for (i = 0; i < n; i++) { j = int(rand() * k)
		printf "0x%x\n", lo[j] + int(rand() * sz[j]) } }' > "$BENCH_TMP/addrs"
nfunc=$(nm --defined-only "$BENCH_TMP/prog" | grep -c ' [tT] ')

head -n "$EU_ADDRS" "$BENCH_TMP/addrs" > "$BENCH_TMP/addrs.eu"

# time_tool NAME ADDRFILE CMD...: REPS runs of CMD < ADDRFILE, prints the median seconds.
time_tool() {
	name=$1
	input=$2
	shift 2
	i=0
	while [ "$i" -lt "$REPS" ]; do
		t0=$(now_s)
		"$@" < "$input" > "$BENCH_TMP/out.$name" || die "$name failed"
		t1=$(now_s)
		fsub "$t1" "$t0"
		i=$((i + 1))
	done | median
}

say "$ADDRS addresses in $nfunc functions, $REPS runs each (median)"
ours=$(time_tool rustprofile "$BENCH_TMP/addrs" "$DRIVER" "$BENCH_TMP/prog")
ours_rate=$(awk -v n="$ADDRS" -v t="$ours" 'BEGIN { printf "%.0f", n / t }')
say "$(printf '%-16s %7.3f s %9s addr/s (%s addresses)' rustprofile "$ours" "$ours_rate" \
	"$ADDRS")"
for tool in llvm-symbolizer eu-addr2line; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		say "$tool not installed: skipped"
		continue
	fi
	case $tool in
	llvm-symbolizer)
		n=$ADDRS
		t=$(time_tool "$tool" "$BENCH_TMP/addrs" llvm-symbolizer --obj="$BENCH_TMP/prog") ;;
	eu-addr2line)
		n=$(wc -l < "$BENCH_TMP/addrs.eu")
		t=$(time_tool "$tool" "$BENCH_TMP/addrs.eu" eu-addr2line -f -i -e "$BENCH_TMP/prog") ;;
	esac
	rate=$(awk -v n="$n" -v t="$t" 'BEGIN { printf "%.0f", n / t }')
	say "$(printf '%-16s %7.3f s %9s addr/s (%s addresses)   ours %sx faster' "$tool" "$t" \
		"$rate" "$n" "$(ratio "$ours_rate" "$rate")")"
done

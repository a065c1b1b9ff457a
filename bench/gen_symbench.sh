#!/bin/sh
# gen_symbench.sh: writes a large C program for bench/symbolize.sh.
#
# USAGE: gen_symbench.sh OUTDIR [FILES [FUNCS_PER_FILE]]
# Writes OUTDIR/f0.c .. f<FILES-1>.c (default 8 files of 600 functions) and OUTDIR/main.c.
# Each function calls two small static inline helpers, so -O2 code carries inline chains
# (helper_b inlines helper_a) as real programs do; each file is its own compilation unit.
#   $ sh bench/gen_symbench.sh /tmp/sb 2 3 && head -5 /tmp/sb/f0.c
#   #include <stdint.h>
#   static inline uint64_t ha_0(uint64_t x) { return x * 0x9e3779b97f4a7c15ull ^ (x >> 17); }
#   static inline __attribute__((always_inline)) uint64_t hb_0(uint64_t x, int n)
set -eu
out=$1
files=${2:-8}
per=${3:-600}
mkdir -p "$out"
awk -v out="$out" -v files="$files" -v per="$per" 'BEGIN {
	for (f = 0; f < files; f++) {
		src = out "/f" f ".c"
		print "#include <stdint.h>" > src
		printf "static inline uint64_t ha_%d(uint64_t x) ", f > src
		print "{ return x * 0x9e3779b97f4a7c15ull ^ (x >> 17); }" > src
		printf "static inline __attribute__((always_inline)) " > src
		printf "uint64_t hb_%d(uint64_t x, int n)\n{\n", f > src
		printf "\tfor (int i = 0; i < n; i++)\n" > src
		printf "\t\tx = ha_%d(x + (uint64_t)i) ^ (x << 3);\n\treturn x;\n}\n", f > src
		for (i = 0; i < per; i++) {
			name = "fn_" f "_" i
			printf "uint64_t %s(uint64_t x, int n)\n{\n", name > src
			printf "\tuint64_t acc = x ^ %du;\n", i * 7919 > src
			printf "\tfor (int k = 0; k < n; k++) {\n\t\tacc += hb_%d(acc, k & %d);\n", f, (i % 5) + 2 > src
			printf "\t\tif (acc %% %d == 0)\n\t\t\tacc ^= ha_%d(acc);\n\t}\n", (i % 13) + 3, f > src
			printf "\treturn acc + (uint64_t)n;\n}\n" > src
		}
		close(src)
	}
	m = out "/main.c"
	print "#include <stdint.h>\n#include <stdio.h>" > m
	for (f = 0; f < files; f++)
		printf "uint64_t fn_%d_0(uint64_t, int);\n", f > m
	print "int main(int argc, char **argv)\n{\n\t(void)argv;\n\tuint64_t s = 0;" > m
	for (f = 0; f < files; f++)
		printf "\ts += fn_%d_0(s, argc);\n", f > m
	print "\tprintf(\"%llu\\n\", (unsigned long long)s);\n\treturn 0;\n}" > m
}'

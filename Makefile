# rustprofile: one Makefile for every stage, the tests and the benchmarks.
#
#   make                 build every stage into $(OUT)/bin
#   make check           unit tests, then the BATS suite (as root: live profiling tests)
#   make check-asan      the same with AddressSanitizer and UndefinedBehaviorSanitizer
#   make check-aarch64   every stage cross-built for aarch64, its unit tests under qemu-user
#   make check-aarch64-vm  the live record/launch cases in an arm64 VM (qemu-system-aarch64)
#   make soak            30 minutes of process churn, every stage's RSS flat (SOAK_SECONDS)
#   make fuzz            build the libFuzzer targets (clang) and run each briefly
#   make bench           benchmarks against peers, printing ratios (drivers built by all)
#   make install PREFIX=/usr/local DESTDIR=
#
# Quiet unless V=1.  Objects live in $(OUT); a failed recipe deletes its target.

CC ?= cc
# A cross build sets both (check-aarch64): the target's compiler and its pkg-config.
PKG_CONFIG ?= pkg-config
OUT ?= .output
PREFIX ?= /usr/local
DESTDIR ?=
PKGS := libelf libdw zlib libcap-ng libzstd libcurl jansson
# serve's own: HTTP, JSON parsing, disassembly, SHA-256 (profile ids).  (libdebuginfod, for
# --debuginfod, is opened at run time by unwind/dbgfetch.c: only its header is needed here.)
SERVE_PKGS := libmicrohttpd jansson capstone nettle

ifeq ($(V),1)
Q :=
else
Q := @
endif

BASE_CFLAGS := -std=c17 -Wall -Wextra -Werror -D_GNU_SOURCE -fno-omit-frame-pointer
# libdeflate, when installed, inflates compressed debug sections twice as fast as zlib (unwind).
ifeq ($(shell $(PKG_CONFIG) --exists libdeflate && echo y),y)
PKGS += libdeflate
BASE_CFLAGS += -DRP_HAVE_LIBDEFLATE
endif
CFLAGS ?= -O2 -g
ALL_CFLAGS := $(BASE_CFLAGS) $(CFLAGS) -Ilib $(shell $(PKG_CONFIG) --cflags $(PKGS))
LDLIBS_ALL := $(shell $(PKG_CONFIG) --libs $(PKGS)) -liberty -lm -pthread

# One stage per line; each is a folder with main.c building one executable of its name.
TOOLS := \
	collect \
	unwind \
	aggregate \
	emit-pprof \
	emit-svg \
	emit-collapsed \
	emit-json \
	emit-firefox \
	commit \
	import \
	fanout \
	check \
	serve \
	emit-otlp \
	#

LIB_SRCS := $(wildcard lib/*.c)
LIB_OBJS := $(LIB_SRCS:%.c=$(OUT)/%.o)
LIB_A := $(OUT)/lib/librp.a

BINS := $(TOOLS:%=$(OUT)/bin/%)
UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(OUT)/tests/%)
WORKLOAD_SRCS := $(wildcard workloads/*.c workloads/*.cc workloads/*.h workloads/*.rs)
WORKLOADS := $(OUT)/bin/workloads.stamp
# Benchmark drivers (bench/NAME_driver.c): part of `all`, so every build and CI link them.
BENCH_SRCS := $(wildcard bench/*_driver.c)
BENCH_BINS := $(BENCH_SRCS:bench/%.c=$(OUT)/bench/%)

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: demo all check check-unit check-bats check-asan check-aarch64 check-aarch64-vm check-fuzz fuzz bench install clean workloads soak

all: $(BINS) $(OUT)/bin/rustprofile.sh $(OUT)/bin/defaults.sh $(BENCH_BINS)

$(OUT)/%.o: %.c $(wildcard lib/*.h) $(wildcard */*.h)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(LIB_A): $(LIB_OBJS)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

# Each stage: its non-main objects form an archive the unit tests can link too.  The link
# line is the prerequisites in order, repeats kept ($+), so a stage may list archives again.
define TOOL_template
$(1)_SRCS := $$(filter-out $(1)/main.c,$$(wildcard $(1)/*.c))
$(1)_OBJS := $$($(1)_SRCS:%.c=$(OUT)/%.o)
$(OUT)/$(1)/lib$(1).a: $$($(1)_OBJS)
	@mkdir -p $$(@D)
	$(Q)rm -f $$@ && ar rcs $$@ $$^ $(if $$($(1)_OBJS),,$(OUT)/lib/empty.o)
$(OUT)/bin/$(1): $(OUT)/$(1)/main.o $(OUT)/$(1)/lib$(1).a $(LIB_A)
	@mkdir -p $$(@D)
	$(if $(Q),@echo "  LD      $$@")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $$@ $$+ $(LDLIBS_ALL)
endef
$(foreach t,$(TOOLS),$(eval $(call TOOL_template,$(t))))

$(OUT)/lib/empty.o:
	@mkdir -p $(@D)
	$(Q)echo 'typedef int rp_empty_unit;' | $(CC) -x c -c -o $@ -

# Replaced, not rewritten in place: bash reads a running script as it goes.
$(OUT)/bin/rustprofile.sh: rustprofile.sh
	@mkdir -p $(@D)
	$(Q)cp $< $@.tmp && chmod 755 $@.tmp && mv -f $@.tmp $@

# The driver's copy of the shared defaults: each "#define RP_DEFAULT_NAME VALUE" of
# lib/defaults.h as RP_DEFAULT_NAME=VALUE (quotes dropped), sourced by rustprofile.sh.
$(OUT)/bin/defaults.sh: lib/defaults.h
	@mkdir -p $(@D)
	$(Q){ echo '# Written by make from lib/defaults.h: the defaults the stages share.'; \
		sed -n 's/^#define \(RP_DEFAULT_[A-Z0-9_]*\)[[:space:]]\{1,\}"\{0,1\}\([^"[:space:]]*\)"\{0,1\}.*$$/\1=\2/p' $<; \
	} > $@.tmp && mv -f $@.tmp $@

TOOL_ARCHIVES := $(foreach t,$(TOOLS),$(OUT)/$(t)/lib$(t).a)
# (a unit test links them twice: a later stage's archive, serve's, uses an earlier one's)
$(OUT)/tests/%: tests/unit/%.c $(TOOL_ARCHIVES) $(LIB_A)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  TEST    $@")
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/unit $(LDFLAGS) -o $@ $< $(TOOL_ARCHIVES) $(TOOL_ARCHIVES) \
		$(LIB_A) $(LDLIBS_ALL)

# The aarch64 CFI test reads a committed aarch64 program (tests/unit/aarch64/make-cfichain.sh).
$(OUT)/tests/cfi_aarch64_test: ALL_CFLAGS += -DCFICHAIN='"$(abspath tests/unit/aarch64/cfichain)"'

# A benchmark driver links the stages' archives like a unit test, with the same flags.
$(OUT)/bench/%: bench/%.c $(TOOL_ARCHIVES) $(LIB_A)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(TOOL_ARCHIVES) $(LIB_A) $(LDLIBS_ALL)

# Bundled workloads: small programs with known hot functions, built as the tests need them.
workloads: $(WORKLOADS)
$(WORKLOADS): $(WORKLOAD_SRCS) workloads/build.sh
	@mkdir -p $(@D)
	$(Q)sh workloads/build.sh $(OUT)/workloads
	@touch $@

# UNIT_RUNNER runs each test (check-aarch64: qemu-user); UNIT_SKIP names tests left out there.
UNIT_RUNNER ?=
UNIT_SKIP ?=
check-unit: $(UNIT_BINS)
	$(Q)set -e; for t in $(filter-out $(UNIT_SKIP:%=$(OUT)/tests/%),$(UNIT_BINS)); do \
		echo "unit: $$t"; $(UNIT_RUNNER) $$t; done

# The TAP stream is kept and summed up in one closing line; a run that stopped early (fewer
# results than planned) fails too.
# BATS_FILES="tests/a.bats tests/b.bats" runs only those.
BATS_FILES ?= tests/
check-bats: all $(WORKLOADS)
	$(Q)RP_BIN=$(abspath $(OUT))/bin RP_WORKLOADS=$(abspath $(OUT))/workloads \
		bats --print-output-on-failure $(BATS_FILES) | tee $(OUT)/bats.tap
	$(Q)awk '/^1\.\./ { split($$0, a, "\\.\\."); n = a[2] } \
		/^ok .* # skip/ { s++; next } /^ok / { p++ } /^not ok / { f++ } \
		END { printf "bats: %d passed, %d failed, %d skipped\n", p, f, s; \
		      exit (f > 0 || p + f + s != n) }' $(OUT)/bats.tap

# check also builds every fuzz target (check-fuzz, below); check-asan leaves them out, being
# built with the sanitizers already.
CHECK_FUZZ ?= check-fuzz
CHECK_AARCH64 ?= check-aarch64
check: check-unit check-bats $(CHECK_FUZZ) $(CHECK_AARCH64)

# Not part of check: half an hour by default (tests/soak.sh; SOAK_SECONDS=150 tries it).
soak: all $(WORKLOADS)
	$(Q)RP_BIN=$(abspath $(OUT))/bin RP_WORKLOADS=$(abspath $(OUT))/workloads bash tests/soak.sh

# --as-needed, as Debian's gcc links by default: clang alone would make every stage load
# what only some need (libcurl and through it libgmp), which modcache.bats hides from replay.
check-asan:
	$(Q)$(MAKE) OUT=.output-asan CC=clang \
		CFLAGS="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined" \
		LDFLAGS="-fsanitize=address,undefined -Wl,--as-needed" CHECK_FUZZ= CHECK_AARCH64= check

# aarch64, the manual's second architecture: every stage and unit test cross-built with
# Debian's gcc-aarch64-linux-gnu against the arm64 multiarch -dev packages (the eBPF programs
# with the BTF of Debian's arm64 kernel, scripts/arm64-btf.sh), and the unit tests run under
# qemu-user.  The imports of the fixture captures must give the native build's streams byte
# for byte (tests/unit/fixtures_test.c).  Tests that fork are left out there: a child forked
# under qemu-user 7.2 hangs in qemu's own locks (so does a thread: no unit test starts one);
# they run natively.  Skipped with one line
# where the cross tools are not installed (scripts/install-deps.sh installs them).
AARCH64_OUT := .output-aarch64
AARCH64_PKG_CONFIG := env PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig pkg-config
AARCH64_QEMU := qemu-aarch64 -L /usr/aarch64-linux-gnu
AARCH64_FORKING := confine_test emitter_test tmpfile_test
check-aarch64: $(OUT)/tests/fixtures_test
	$(Q)if ! command -v aarch64-linux-gnu-gcc >/dev/null || ! command -v qemu-aarch64 >/dev/null || \
	    ! [ -f /usr/lib/aarch64-linux-gnu/pkgconfig/libelf.pc ]; then \
		echo "check-aarch64: skipped: no aarch64-linux-gnu-gcc, qemu-aarch64 or arm64 libelf-dev"; \
		exit 0; fi; \
	set -e; sh scripts/arm64-btf.sh $(AARCH64_OUT)/vmlinux-arm64.btf; \
	$(MAKE) OUT=$(AARCH64_OUT) CC=aarch64-linux-gnu-gcc PKG_CONFIG="$(AARCH64_PKG_CONFIG)" \
		BPF_ARCH=arm64 VMLINUX_BTF=$(AARCH64_OUT)/vmlinux-arm64.btf all check-unit \
		UNIT_RUNNER="$(AARCH64_QEMU)" UNIT_SKIP="$(AARCH64_FORKING)"; \
	$(OUT)/tests/fixtures_test | grep '^fixture ' > $(AARCH64_OUT)/fixtures.native; \
	$(AARCH64_QEMU) $(AARCH64_OUT)/tests/fixtures_test | grep '^fixture ' > $(AARCH64_OUT)/fixtures.aarch64; \
	diff $(AARCH64_OUT)/fixtures.native $(AARCH64_OUT)/fixtures.aarch64; \
	file $(AARCH64_OUT)/bin/collect | grep -q 'ARM aarch64'; \
	echo "check-aarch64: every stage built for aarch64; unit tests passed under qemu-user;" \
		"$$(wc -l < $(AARCH64_OUT)/fixtures.native) fixture imports identical to the native build's"

# The live tests on aarch64 (not in check: a whole arm64 system under emulation): the stages
# cross-built as above, installed into a Debian 12 arm64 root file system (debootstrap) and
# run under Debian's arm64 kernel in qemu-system-aarch64 (scripts/aarch64-vm.sh, docs/aarch64.md).
check-aarch64-vm:
	$(Q)set -e; sh scripts/arm64-btf.sh $(AARCH64_OUT)/vmlinux-arm64.btf; \
	rm -rf $(AARCH64_OUT)/vm/stage; \
	$(MAKE) OUT=$(AARCH64_OUT) CC=aarch64-linux-gnu-gcc PKG_CONFIG="$(AARCH64_PKG_CONFIG)" \
		BPF_ARCH=arm64 VMLINUX_BTF=$(AARCH64_OUT)/vmlinux-arm64.btf install \
		PREFIX=/usr/local DESTDIR=$(abspath $(AARCH64_OUT))/vm/stage >/dev/null; \
	sh scripts/aarch64-vm.sh $(AARCH64_OUT)

bench: all $(WORKLOADS)
	$(Q)RP_BIN=$(abspath $(OUT))/bin RP_WORKLOADS=$(abspath $(OUT))/workloads \
		RP_BENCH_BIN=$(abspath $(OUT))/bench sh bench/run.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/libexec/rustprofile
	install -m 755 $(BINS) $(DESTDIR)$(PREFIX)/libexec/rustprofile/
	install -m 755 rustprofile.sh $(DESTDIR)$(PREFIX)/libexec/rustprofile/rustprofile.sh
	install -m 644 $(OUT)/bin/defaults.sh $(DESTDIR)$(PREFIX)/libexec/rustprofile/defaults.sh
	ln -sf ../libexec/rustprofile/rustprofile.sh $(DESTDIR)$(PREFIX)/bin/rustprofile
	install -d $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 644 docs/rustprofile.1 $(DESTDIR)$(PREFIX)/share/man/man1/rustprofile.1
	install -m 644 scripts/rustprofile.bash \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/rustprofile

clean:
	rm -rf $(OUT) .output-asan $(AARCH64_OUT)

# The README's first quick-start command ends here: profile the bundled demo workload.
demo: all $(WORKLOADS)
	$(Q)./rustprofile.sh launch --duration 5s --window 5s --cpu-frequency 199 \
		--output ./demo-profiles -- $(OUT)/workloads/cpu_split 5
	$(Q)HOME=$${HOME:-/root} go tool pprof -top -nodecount=15 \
		$$(ls -t ./demo-profiles/cpu-*.pb.gz | head -n 1)

# ---- eBPF programs (bpf/) ----------------------------------------------------------------
# CO-RE: vmlinux.h comes from the build machine's BTF into $(OUT)/bpf (never committed);
# each bpf/NAME.bpf.c becomes $(OUT)/bpf/NAME.bpf.o and a bpftool skeleton NAME.skel.h that
# collect compiles in, so the programs travel inside the collect binary.  A build machine
# without /sys/kernel/btf/vmlinux stops here with a message (docs/offcpu.md).
BPF_CLANG ?= clang
BPFTOOL ?= bpftool
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_SKELS := $(BPF_SRCS:bpf/%.bpf.c=$(OUT)/bpf/%.skel.h)
BPF_ARCH ?= $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

$(OUT)/bpf/vmlinux.h:
	@mkdir -p $(@D)
	$(Q)[ -r $(VMLINUX_BTF) ] || { echo "make: $(VMLINUX_BTF) not found: the kernel of" \
		"the build machine has no BTF (CONFIG_DEBUG_INFO_BTF); set VMLINUX_BTF=FILE" >&2; exit 1; }
	$(if $(Q),@echo "  BTF     $@")
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@

$(OUT)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(OUT)/bpf/vmlinux.h
	$(if $(Q),@echo "  BPF     $<")
	$(Q)$(BPF_CLANG) -target bpf -g -O2 -Wall -Werror -D__TARGET_ARCH_$(BPF_ARCH) \
		-I$(OUT)/bpf -Ibpf -c -o $@ $<

$(OUT)/bpf/%.skel.h: $(OUT)/bpf/%.bpf.o
	$(if $(Q),@echo "  SKEL    $@")
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@

# collect's BPF users see the skeletons and the shared headers; collect links libbpf.
$(OUT)/collect/%.o: ALL_CFLAGS += -I$(OUT)/bpf -Ibpf
$(OUT)/collect/offcpu.o $(OUT)/collect/offcpu_blocked.o $(OUT)/collect/lifecycle.o \
	$(OUT)/collect/ksymbpf.o $(OUT)/collect/heap.o $(OUT)/collect/physical.o: $(BPF_SKELS)
# The stage's link line is its prerequisites, so libbpf joins it as one.
LIBBPF_SO := $(shell $(PKG_CONFIG) --variable=libdir libbpf)/libbpf.so
$(OUT)/bin/collect: $(LIBBPF_SO)
$(UNIT_BINS) $(BENCH_BINS): LDLIBS_ALL += -lbpf
# check runs collect's preflight and probes, and unwind's debug-file search, on a target.
$(OUT)/check/%.o: ALL_CFLAGS += -Icollect -Iunwind -I$(OUT)/bpf -Ibpf
$(OUT)/check/%.o: $(BPF_SKELS)
# (the link line is the prerequisites with repeats, $+: lib/ once more after the stages')
$(OUT)/bin/check: $(OUT)/collect/libcollect.a $(OUT)/unwind/libunwind.a $(LIB_A) $(LIBBPF_SO)
# serve answers the symbol API with unwind's symbolizer (and its debuginfod client).
SERVE_CFLAGS := -Iunwind $(shell $(PKG_CONFIG) --cflags $(SERVE_PKGS))
SERVE_LIBS := $(shell $(PKG_CONFIG) --libs $(SERVE_PKGS))
$(OUT)/serve/%.o: ALL_CFLAGS += $(SERVE_CFLAGS)
# (its link line is its prerequisites: the libraries join it as files, like libbpf)
SERVE_SOS := $(foreach p,$(SERVE_PKGS),$(shell $(PKG_CONFIG) --variable=libdir $(p))/lib$(p:lib%=%).so)
$(OUT)/bin/serve: $(OUT)/unwind/libunwind.a $(LIB_A) $(SERVE_SOS)
$(UNIT_BINS) $(BENCH_BINS): LDLIBS_ALL += $(SERVE_LIBS)

# ---- libFuzzer targets (fuzz/, clang) -----------------------------------------------------
# Each fuzz/NAME.c is one target, linked with the sources of the stages FUZZ_STAGE_NAME names
# (all but their main.c; a target driving a stage's frame handling includes that main.c
# itself) and lib/, every object built once with ASan and UBSan into $(OUT)/fuzzobj.
# `make fuzz` runs each target of FUZZ_TARGETS (default all) for FUZZ_SECONDS (default 20),
# with libFuzzer's FUZZ_FLAGS (default: an input may take 30 s), on a working corpus in
# $(OUT)/corpus/NAME seeded from fuzz/corpus/NAME; crashes are left in the current
# directory as crash-*, leak-*, timeout-*.
FUZZ_SRCS := $(wildcard fuzz/*.c)
FUZZ_ALL := $(FUZZ_SRCS:fuzz/%.c=%)
FUZZ_TARGETS ?= $(FUZZ_ALL)

FUZZ_FLAGS ?= -timeout=30
FUZZ_BINS := $(FUZZ_TARGETS:%=$(OUT)/fuzz/%)
FUZZ_CFLAGS := $(BASE_CFLAGS) -O1 -g -fsanitize=fuzzer-no-link,address,undefined \
	-fno-sanitize-recover=undefined -Ilib $(shell $(PKG_CONFIG) --cflags $(PKGS))
FUZZ_STAGE_symbolize_elf := unwind
FUZZ_STAGE_debug_cache := unwind
FUZZ_STAGE_debug_index := unwind
FUZZ_STAGE_import_perfdata := import
FUZZ_STAGE_cfi_parse := unwind
FUZZ_STAGE_jit_perfmap := unwind
FUZZ_STAGE_jit_dump := unwind
FUZZ_STAGE_unwind_stream := unwind
FUZZ_STAGE_elf_note := collect
FUZZ_STAGE_proc_maps := collect
FUZZ_STAGE_kallsyms := collect
FUZZ_STAGE_perf_ring := collect
FUZZ_STAGE_bpf_ring := collect
FUZZ_STAGE_stage_aggregate := aggregate
FUZZ_STAGE_stage_pprof := emit-pprof
FUZZ_STAGE_stage_svg := emit-svg
FUZZ_STAGE_stage_collapsed := emit-collapsed
FUZZ_STAGE_stage_json := emit-json
FUZZ_STAGE_stage_firefox := emit-firefox
FUZZ_STAGE_stage_fanout := fanout
FUZZ_STAGE_stage_commit := commit
FUZZ_STAGE_container_json := collect
FUZZ_STAGE_serve_request := serve unwind
$(OUT)/fuzzobj/serve/%.o $(OUT)/fuzzobj/fuzz/serve_request.o: FUZZ_CFLAGS += $(SERVE_CFLAGS)
$(OUT)/fuzz/serve_request: LDLIBS_ALL += $(SERVE_LIBS)
FUZZ_STAGE_otlp_response := emit-otlp
FUZZ_STAGE_stage_otlp := emit-otlp
# One event may close WINDOWS_MAX_GAP empty windows, a few hundred bytes of input millions.
$(OUT)/fuzzobj/aggregate/%.o $(OUT)/fuzzobj/fuzz/stage_aggregate.o: \
	FUZZ_CFLAGS += -DWINDOWS_MAX_GAP=1000
# The unwind stream's seeds name modules by build id: copies of the bundled workloads.
$(OUT)/fuzzobj/fuzz/unwind_stream.o: FUZZ_CFLAGS += -DFUZZ_MODULE_CACHE='"$(abspath fuzz/modules)"'
fuzz_objs = $(patsubst %.c,$(OUT)/fuzzobj/%.o,$(foreach s,$(FUZZ_STAGE_$(1)),$($(s)_SRCS)) \
	$(LIB_SRCS))
$(OUT)/fuzzobj/%.o: %.c $(wildcard lib/*.h) $(wildcard */*.h)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  FUZZCC  $<")
	$(Q)clang $(FUZZ_CFLAGS) -c -o $@ $<
# A target may include a stage's main.c.
$(FUZZ_ALL:%=$(OUT)/fuzzobj/fuzz/%.o): $(wildcard */main.c)
$(OUT)/fuzzobj/collect/%.o $(OUT)/fuzzobj/fuzz/bpf_ring.o: FUZZ_CFLAGS += -I$(OUT)/bpf -Ibpf
$(OUT)/fuzzobj/collect/offcpu.o $(OUT)/fuzzobj/collect/offcpu_blocked.o \
	$(OUT)/fuzzobj/collect/lifecycle.o $(OUT)/fuzzobj/collect/ksymbpf.o \
	$(OUT)/fuzzobj/collect/heap.o: $(BPF_SKELS)
.SECONDEXPANSION:
$(OUT)/fuzz/%: $(OUT)/fuzzobj/fuzz/%.o $$(call fuzz_objs,$$*)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  FUZZLD  $@")
	$(Q)clang -fsanitize=fuzzer,address,undefined -o $@ $^ $(LDLIBS_ALL) \
		$(if $(filter collect,$(FUZZ_STAGE_$*)),-lbpf) \
		$(if $(filter emit-otlp,$(FUZZ_STAGE_$*)),$(OTLP_LIBS))
fuzz: $(FUZZ_BINS)
	$(Q)set -e; for n in $(FUZZ_TARGETS); do mkdir -p $(OUT)/corpus/$$n; \
		echo "fuzz: $$n for $${FUZZ_SECONDS:-20} s"; \
		$(OUT)/fuzz/$$n -max_total_time=$${FUZZ_SECONDS:-20} $(FUZZ_FLAGS) $(OUT)/corpus/$$n \
			$$([ -d fuzz/corpus/$$n ] && echo fuzz/corpus/$$n); done
# In check: every target builds, and each replays its committed corpus once (-runs=0), so a
# change that breaks a target's link, or makes a kept input crash again, fails the suite.
check-fuzz: $(FUZZ_BINS)
	$(Q)set -e; for n in $(FUZZ_TARGETS); do [ -d fuzz/corpus/$$n ] || continue; \
		echo "fuzz: $$n replays fuzz/corpus/$$n"; \
		$(OUT)/fuzz/$$n -runs=0 $(FUZZ_FLAGS) fuzz/corpus/$$n >$(OUT)/fuzz/$$n.log 2>&1 || \
			{ tail -n 20 $(OUT)/fuzz/$$n.log; echo "fuzz: $$n failed on its corpus"; exit 1; }; \
	done
# Seed makers of fuzz/seeds.sh, built like the unit tests.
$(OUT)/fuzz-tools/%: fuzz/tools/%.c $(TOOL_ARCHIVES) $(LIB_A)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Ibpf -o $@ $< $(TOOL_ARCHIVES) $(LIB_A) $(LDLIBS_ALL) -lbpf

# ---- OTLP messages (proto/, protoc-c) ------------------------------------------------------
# proto/ holds the project's own description of the opentelemetry-proto v1.11.0 messages
# emit-otlp sends and reads; protoc-c makes their C code in $(OUT)/gen at build time (never
# committed), compiled with the stages' flags into one archive emit-otlp links.
PROTO_SRCS := $(shell find proto -name '*.proto' | LC_ALL=C sort)
PROTO_GEN := $(PROTO_SRCS:proto/%.proto=$(OUT)/gen/%.pb-c.c)
PROTO_HDRS := $(PROTO_GEN:%.c=%.h)
PROTO_OBJS := $(PROTO_GEN:%.c=%.o)
PROTO_FUZZ_OBJS := $(PROTO_GEN:$(OUT)/gen/%.c=$(OUT)/fuzzobj/gen/%.o)
OTLP_LIBS := -lprotobuf-c -lcurl -lcrypto -lz
$(OUT)/gen/%.pb-c.c $(OUT)/gen/%.pb-c.h: proto/%.proto
	@mkdir -p $(OUT)/gen
	$(if $(Q),@echo "  PROTOC  $<")
	$(Q)protoc-c -Iproto --c_out=$(OUT)/gen $<
$(OUT)/gen/%.o: $(OUT)/gen/%.c $(PROTO_HDRS)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -I$(OUT)/gen -c -o $@ $<
$(OUT)/gen/libotlppb.a: $(PROTO_OBJS)
	$(Q)rm -f $@ && ar rcs $@ $^
OTLP_OBJS := $(emit-otlp_OBJS) $(OUT)/emit-otlp/main.o
$(OTLP_OBJS) $(OTLP_OBJS:$(OUT)/%=$(OUT)/fuzzobj/%) $(OUT)/fuzzobj/fuzz/otlp_response.o \
	$(OUT)/fuzzobj/fuzz/stage_otlp.o: $(PROTO_HDRS)
$(OUT)/emit-otlp/%.o: ALL_CFLAGS += -I$(OUT)/gen
$(OUT)/fuzzobj/emit-otlp/%.o: FUZZ_CFLAGS += -I$(OUT)/gen
$(OUT)/fuzzobj/fuzz/otlp_response.o $(OUT)/fuzzobj/fuzz/stage_otlp.o: \
	FUZZ_CFLAGS += -I$(OUT)/gen -Iemit-otlp
$(OUT)/fuzzobj/gen/%.o: $(OUT)/gen/%.c $(PROTO_HDRS)
	@mkdir -p $(@D)
	$(Q)clang $(FUZZ_CFLAGS) -I$(OUT)/gen -c -o $@ $<
# As collect's libbpf: the stage's link line is its prerequisites, so the libraries join it.
OTLP_SOS := $(foreach l,libprotobuf-c libcurl libcrypto,$(shell $(PKG_CONFIG) --variable=libdir $(l))/$(l).so)
$(OUT)/bin/emit-otlp: $(OUT)/gen/libotlppb.a $(OTLP_SOS)
$(OUT)/fuzz/otlp_response $(OUT)/fuzz/stage_otlp: $(PROTO_FUZZ_OBJS)
# The encoder's unit test links the stage's archive with the messages and their libraries.
$(OUT)/tests/otlp_encode_test: $(PROTO_HDRS) $(OUT)/gen/libotlppb.a
$(OUT)/tests/otlp_encode_test: ALL_CFLAGS += -I$(OUT)/gen -Iemit-otlp
$(OUT)/tests/otlp_encode_test: LDLIBS_ALL := $(OUT)/gen/libotlppb.a $(OTLP_LIBS) $(LDLIBS_ALL)

/*
 * The frame table (frametab.h): one row per frame type, its fields in wire order with the
 * rules of docs/stream-format.md that a decoder checks.  lib/frames.c encodes and decodes
 * every type from these rows alone.
 */
#include "frametab.h"

#include <string.h>

#define NUM_(x) #x
#define NUM(x) NUM_(x)

/* Rows are written with T, the struct of the row, defined around each. */
#define MEMBER(m) { offsetof(T, m), sizeof(((T *)0)->m) }
/* The offset of member m, which must be w bytes long: a row cannot name a u32 for a u16. */
#define OFF(m, w) (offsetof(T, m) + 0 * sizeof(char[sizeof(((T *)0)->m) == (w) ? 1 : -1]))
#define SCALAR(k, m, w, ...) { .kind = (k), .name = #m, .off = OFF(m, w), __VA_ARGS__ }
#define U16(m) SCALAR(FK_U16, m, 2)
#define U32(m) SCALAR(FK_U32, m, 4)
#define U64(m) SCALAR(FK_U64, m, 8)
#define X64(m) SCALAR(FK_U64, m, 8, .hex = 1) /* an address */
#define I32(m) SCALAR(FK_I32, m, 4)
#define STR(m) SCALAR(FK_STR, m, sizeof(struct str))
#define BID(m) SCALAR(FK_BID, m, STREAM_BUILD_ID_MAX, .len_off = OFF(m##_len, 1))
/* Bytes written 0 and never read; the struct keeps them in member m, so that a frame's
 * leading fields stay laid out as on the wire (lib/frames.c copies such a prefix). */
#define RESERVED(m) { .kind = FK_RESERVED, .name = #m, .off = OFF(m, 4) }
#define CHECK(fn) { .kind = FK_CHECK, .name = #fn, .check = (fn) }
/* Rules: member m within lo..hi, not 0, end not below start. */
#define RANGE(m, l, h, w) { .kind = FK_RANGE, .name = #m, .a = MEMBER(m), .lo = (l), .hi = (h), \
			    .why = (w) }
#define NONZERO(m, w) RANGE(m, 1, UINT64_MAX, w)
#define ORDERED(s, e, w) { .kind = FK_ORDERED, .name = #e, .a = MEMBER(s), .b = MEMBER(e), \
			   .why = (w) }
/* Appended groups: written always, or when member m is set (or a later group is). */
#define APPENDED(min) { .kind = FK_APPENDED, .min_bytes = (min) }
#define APPENDED_IF(min, m) { .kind = FK_APPENDED, .min_bytes = (min), .when = MEMBER(m) }
/* Arrays: element kind, member, count members (COUNT_A: n; COUNT_SUM: a, b), the most
 * elements, the reader's and the writer's word for more. */
#define ARRAY_(k, e, m, cnt, am, bm, mx, rmsg, wmsg, ...)                                 \
	{ .kind = (k), .elem = (e), .name = #m, .off = offsetof(T, m), .count = (cnt),     \
	  .a = MEMBER(am), .b = MEMBER(bm), .max = (mx), .too_many = (rmsg),                \
	  .write_too_many = (wmsg), __VA_ARGS__ }
#define ARRAY(e, m, n, mx, rmsg, wmsg, ...)                                                 \
	ARRAY_(FK_ARRAY, e, m, COUNT_A, n, n, mx, rmsg, wmsg,                              \
	       .stride = sizeof(((T *)0)->m[0]), __VA_ARGS__)
#define PACKED(e, m, n, mx, rmsg, wmsg, ...)                                                \
	ARRAY_(FK_PACKED, e, m, COUNT_A, n, n, mx, rmsg, wmsg, __VA_ARGS__)
#define RECORDS(sub_) .sub = (sub_), .nsub = sizeof(sub_) / sizeof((sub_)[0])
#define ROW(ty, nm, t, f, ...)                                                              \
	[ty] = { .type = (ty), .name = (nm), .size = sizeof(t), .fields = (f),              \
		 .nfields = sizeof(f) / sizeof((f)[0]), __VA_ARGS__ }

/* ---- the rules a decoder checks ---- */

static const char *
mmap_no_wrap(const void *p)
{
	const struct fr_mmap *v = p;
	return v->start + v->len < v->start ? "mapping wraps around the address space" : NULL;
}

static const char *
regs_counts(const void *p)
{
	const struct fr_sample_regs *v = p;
	if (v->nkernel > STREAM_MAX_IPS || v->nregs > STREAM_MAX_REGS ||
	    v->stack_len > STREAM_MAX_STACK)
		return "too many kernel addresses, registers or stack bytes";
	if ((unsigned)__builtin_popcountll(v->reg_mask) != v->nregs)
		return "register count does not match the register mask";
	return NULL;
}

static const char *
regs_write(const void *p)
{
	return regs_counts(p) ? "sample with inconsistent registers or stack" : NULL;
}

static const char *
line_function(const void *p)
{
	return ((const struct fr_line *)p)->function_id == 0 ? "line with function id 0" : NULL;
}

/* File names travel between stages and are joined to the output directory: a name with a
 * slash or a leading dot-dot would let a corrupt stream write outside it. */
static int
plain_name(struct str s)
{
	if (s.len == 0 || memchr(s.p, '/', s.len))
		return 0;
	return !(s.len <= 2 && s.p[0] == '.' && (s.len == 1 || s.p[1] == '.'));
}

static const char *
file_names(const void *p)
{
	const struct fr_file *v = p;
	if (!plain_name(v->name) || !plain_name(v->temp))
		return "file name is not a plain name in the output directory";
	return NULL;
}

static const char *
module_bid(const void *p)
{
	return ((const struct fr_bid *)p)->len > STREAM_BUILD_ID_MAX ?
		"build id longer than 20 bytes" : NULL;
}

static const char *
span_rules(const void *p)
{
	const struct offcpu_span *s = p;
	if (s->end < s->start)
		return "interval ends before it starts";
	return s->flags & ~OFFCPU_SPAN_FLAGS ? "unknown off-CPU interval flags" : NULL;
}

/* The rules of an off-CPU frame that the writer checks, in the order its fields go out. */
static const char *
offcpu_write(const void *p)
{
	const struct fr_offcpu *v = p;
	if ((unsigned)v->nkernel + v->nuser > STREAM_MAX_IPS)
		return "off-CPU interval with more than " NUM(STREAM_MAX_IPS) " addresses";
	if (v->nmore > STREAM_MAX_SPANS)
		return "off-CPU frame with more than " NUM(STREAM_MAX_SPANS) " further intervals";
	if (v->ntop > STREAM_MAX_TOP)
		return "off-CPU frame with more than " NUM(STREAM_MAX_TOP) " stack words";
	if (v->nstack > 0 && (v->ntop == 0 || v->nmore > 0 || v->nstack > STREAM_MAX_OFFCPU_STACK))
		return "off-CPU stack copy without stack-top words, with further intervals or over "
		       NUM(STREAM_MAX_OFFCPU_STACK) " bytes";
	return NULL;
}

/* A sample's weight is a power of two (bpf/heap.bpf.c keeps a block of size s with
 * probability 1/w, w the power of two that brings s * w to the interval). */
static int
power_of_two(uint64_t w)
{
	return w && !(w & (w - 1));
}

static const char *
alloc_weight(const void *p)
{
	return power_of_two(((const struct fr_alloc *)p)->weight) ?
		NULL : "allocation weight is not a power of two";
}

static const char *
heap_weight(const void *p)
{
	return power_of_two(((const struct fr_heap_stack *)p)->weight) ?
		NULL : "allocation weight is not a power of two";
}

static const char *
alloc_regs(const void *p)
{
	const struct fr_alloc *v = p;
	if (v->nregs > STREAM_MAX_REGS || v->stack_len > STREAM_MAX_STACK)
		return "too many registers or stack bytes";
	if ((unsigned)__builtin_popcountll(v->reg_mask) != v->nregs)
		return "register count does not match the register mask";
	return NULL;
}

static const char *
alloc_write(const void *p)
{
	const struct fr_alloc *v = p;
	if (alloc_weight(p) || v->nuser > STREAM_MAX_IPS)
		return "allocation with a bad weight or more than " NUM(STREAM_MAX_IPS) " addresses";
	return v->abi && alloc_regs(p) ? "allocation with inconsistent registers or stack" : NULL;
}

/* Each module asked for ends one way; sums of corrupt counts must not wrap to a match. */
static const char *
debuginfod_sums(const void *p)
{
	const struct fr_debuginfod *v = p;
	const uint64_t parts[] = { v->fetched, v->not_found, v->failed, v->out_of_time,
				   v->oversized };
	uint64_t sum = 0;

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if (__builtin_add_overflow(sum, parts[i], &sum))
			return "debuginfod outcomes do not add up to the modules queried";
	if (sum != v->queried)
		return "debuginfod outcomes do not add up to the modules queried";
	return v->requests > v->queried ? "more debuginfod fetches than modules queried" : NULL;
}

/* ---- the rows ---- */

#define T struct fr_target
static const struct frame_field target_fields[] = {
	U32(pid), U32(cpu_frequency), U64(start_time), U32(flags), STR(kind), STR(exe),
	STR(comm), STR(unwind_requested), STR(unwind_mode), STR(unwind_reason), STR(profiles),
	STR(kernel_release),
	APPENDED(1),
	U32(calib_samples), U32(calib_mapped_permille), U32(calib_deep_permille),
	U32(calib_cycles), STR(calib_verdict),
	APPENDED(1),
	STR(fallback_reason), U64(since),
	APPENDED(1),
	STR(scope_requested), STR(scope_effective), STR(scope_cgroup), STR(scope_reason),
	APPENDED(1),
	SCALAR(FK_U32, offcpu_percent, 4, .dflt = 100),
	RANGE(offcpu_percent, 1, 100, "off-CPU probability outside 1..100 percent"),
	APPENDED(1),
	U64(window_nanos),
	APPENDED(1),
	STR(sample_type), STR(sample_unit),
	/* For a container target (empty when only the heap group after it is written). */
	APPENDED_IF(2, container_runtime.len),
	STR(container_runtime), STR(container_id), STR(container_name),
	STR(container_started_at), STR(k8s_namespace), STR(k8s_pod_name), STR(k8s_pod_uid),
	APPENDED_IF(8, alloc_interval),
	U64(alloc_interval), STR(allocator_requested), STR(allocator_detected),
	STR(allocator_module), U32(allocator_complete), STR(allocator_reason), STR(heap_scope),
	APPENDED_IF(2, cpu_event.len),
	STR(cpu_event), STR(cpu_event_reason),
	APPENDED_IF(2, cpu_list.len),
	STR(cpu_list),
	APPENDED_IF(4, physical_percent),
	U32(physical_percent),
	RANGE(physical_percent, 1, 100, "physical memory probability outside 1..100 percent"),
};
#undef T

#define T struct fr_mmap
static const struct frame_field mmap_fields[] = {
	U64(time), U32(pid), U32(tid), X64(start), X64(len), X64(pgoff), U32(prot), U32(flags),
	BID(build_id), STR(path), CHECK(mmap_no_wrap),
};
#undef T

#define T struct fr_comm
static const struct frame_field comm_fields[] = {
	U64(time), U32(pid), U32(tid), U32(flags), STR(comm),
};
#undef T

#define T struct fr_task
static const struct frame_field task_fields[] = {
	U64(time), U32(pid), U32(ppid), U32(tid), U32(ptid),
	APPENDED(1),
	U32(flags),
};
#undef T

#define T struct fr_sample
static const struct frame_field sample_fields[] = {
	U64(time), U32(pid), U32(tid), U32(cpu), RESERVED(reserved), U64(period), U16(nkernel),
	U16(nuser),
	ARRAY_(FK_ARRAY, FK_U64, ips, COUNT_SUM, nkernel, nuser, STREAM_MAX_IPS,
	       "too many addresses", "sample with more than " NUM(STREAM_MAX_IPS) " addresses",
	       .stride = sizeof(uint64_t), .hex = 1),
};
#undef T

#define T struct fr_lost
static const struct frame_field lost_fields[] = { U64(time), U64(count), U32(kind) };
#undef T

#define T struct fr_ksym
static const struct frame_field ksym_fields[] = {
	X64(start), X64(end), STR(name), STR(module),
	ORDERED(start, end, "symbol ends before it starts"),
};
#undef T

#define T struct fr_round
static const struct frame_field round_fields[] = { U64(time) };
#undef T

#define T struct fr_jit
static const struct frame_field jit_fields[] = {
	U64(time), U32(files), U64(symbols), U64(dropped), U64(truncated), U64(malformed),
	U64(rereads), U64(named), U64(unnamed),
};
#undef T

#define T struct fr_target_exit
static const struct frame_field target_exit_fields[] = { U64(time), U32(pid), I32(status) };
#undef T

#define T struct fr_end
static const struct frame_field end_fields[] = { U64(time), U32(reason) };
#undef T

#define T struct fr_warning
static const struct frame_field warning_fields[] = { U64(time), STR(text) };
#undef T

/* import appends where the capture's module starts; a frame without both words has none. */
#define T struct fr_usym
static const struct frame_field usym_fields[] = {
	BID(build_id), STR(path), X64(start), X64(end), STR(name),
	ORDERED(start, end, "symbol ends before it starts"),
	APPENDED_IF(16, min_vaddr),
	X64(min_vaddr), X64(fo_min_vaddr),
};
#undef T

#define T struct fr_sample_regs
static const struct frame_field sample_regs_fields[] = {
	U64(time), U32(pid), U32(tid), U32(cpu), U32(abi), U64(period), U16(nkernel),
	U16(nregs), X64(reg_mask), U32(stack_len), CHECK(regs_counts),
	ARRAY(FK_U64, kips, nkernel, STREAM_MAX_IPS, "too many kernel addresses", NULL,
	      .hex = 1),
	ARRAY(FK_U64, regs, nregs, STREAM_MAX_REGS, "too many registers", NULL, .hex = 1),
	PACKED(FK_U8, stack, stack_len, STREAM_MAX_STACK, "too many stack bytes", NULL),
};
#undef T

#define T struct offcpu_span
static const struct frame_field span_fields[] = { U64(start), U64(end), U32(flags) };
#undef T

/* An off-CPU interval: [start, end) of a known phase. */
#define INTERVAL                                                                            \
	ORDERED(start, end, "interval ends before it starts"),                             \
	RANGE(phase, PHASE_BLOCKED, PHASE_YIELDED, "unknown off-CPU phase")

/* The further intervals of an off-CPU frame, written when there are some or when a block
 * follows them, so that a frame of one interval keeps the layout of the first version. */
#define SPANS                                                                               \
	APPENDED_IF(4, nmore),                                                              \
	U32(nmore),                                                                         \
	PACKED(FK_REC, more, nmore, STREAM_MAX_SPANS, "too many off-CPU intervals",         \
	       "off-CPU frame with more than " NUM(STREAM_MAX_SPANS) " further intervals",  \
	       RECORDS(span_fields), .elem_check = span_rules)

#define T struct fr_offcpu
static const struct frame_field offcpu_fields[] = {
	U64(start), U64(end), U32(pid), U32(tid), U32(cpu), U32(phase), U32(flags),
	U16(nkernel), U16(nuser), INTERVAL,
	ARRAY_(FK_ARRAY, FK_U64, ips, COUNT_SUM, nkernel, nuser, STREAM_MAX_IPS,
	       "too many addresses", NULL, .stride = sizeof(uint64_t), .hex = 1),
	SPANS,
	APPENDED_IF(4, ntop),
	U32(ntop), RANGE(ntop, 1, STREAM_MAX_TOP, "bad count of stack words"),
	ARRAY_(FK_PACKED, FK_U64, top, COUNT_SPANS, nmore, ntop,
	       (STREAM_MAX_SPANS + 1) * STREAM_MAX_TOP, "bad count of stack words", NULL,
	       .hex = 1),
	APPENDED_IF(20, nstack),
	X64(sp), X64(bp), U32(nstack),
	RANGE(nstack, 1, STREAM_MAX_OFFCPU_STACK, "bad off-CPU stack copy"),
	RANGE(nmore, 0, 0, "bad off-CPU stack copy"), /* a copy goes with one interval only */
	PACKED(FK_U8, stack, nstack, STREAM_MAX_OFFCPU_STACK, "bad off-CPU stack copy", NULL),
};
#undef T

#define T struct fr_alloc
static const struct frame_field alloc_fields[] = {
	U64(time), U32(pid), U32(tid), X64(addr), U64(size), U64(weight), U32(flags),
	U16(nuser), CHECK(alloc_weight),
	ARRAY(FK_U64, ips, nuser, STREAM_MAX_IPS, "too many addresses", NULL, .hex = 1),
	APPENDED_IF(18, abi),
	U32(abi), U16(nregs), X64(reg_mask), U32(stack_len), CHECK(alloc_regs),
	ARRAY(FK_U64, regs, nregs, STREAM_MAX_REGS, "too many registers", NULL, .hex = 1),
	PACKED(FK_U8, stack, stack_len, STREAM_MAX_STACK, "too many stack bytes", NULL),
};
#undef T

#define T struct fr_heap_free
static const struct frame_field heap_free_fields[] = {
	U64(time), U32(pid), U32(tid), X64(addr), X64(new_addr),
	NONZERO(addr, "free of address 0"),
};
#undef T

#define T struct fr_heap_reset
static const struct frame_field heap_reset_fields[] = {
	U64(time), U32(pid), U32(reason),
	RANGE(reason, HEAP_RESET_EXEC, HEAP_RESET_REATTACH, "unknown heap reset reason"),
};
#undef T

#define T struct fr_page_alloc
static const struct frame_field page_alloc_fields[] = {
	U64(time), U32(pid), U32(tid), X64(pfn), U32(order), U32(flags),
	RANGE(order, 0, STREAM_MAX_PAGE_ORDER, "page order above " NUM(STREAM_MAX_PAGE_ORDER)),
	U16(nuser),
	ARRAY(FK_U64, ips, nuser, STREAM_MAX_IPS, "too many addresses", NULL, .hex = 1),
};
#undef T

#define T struct fr_page_free
static const struct frame_field page_free_fields[] = {
	U64(time), U32(pid), X64(pfn), U32(order),
	RANGE(order, 0, STREAM_MAX_PAGE_ORDER, "page order above " NUM(STREAM_MAX_PAGE_ORDER)),
};
#undef T

#define T struct fr_mapping
static const struct frame_field mapping_fields[] = {
	U32(id), U32(pid), X64(start), X64(limit), X64(offset), U32(flags), BID(build_id),
	STR(path), NONZERO(id, "mapping id 0"),
	ORDERED(start, limit, "mapping ends before it starts"),
};
#undef T

#define T struct fr_function
static const struct frame_field function_fields[] = {
	U32(id), U32(start_line), STR(name), STR(system_name), STR(filename),
	NONZERO(id, "function id 0"),
};
#undef T

#define T struct fr_line
static const struct frame_field line_fields[] = { U32(function_id), U32(line) };
#undef T

#define T struct fr_location
static const struct frame_field location_fields[] = {
	U32(id), U32(mapping_id), X64(address), U16(nlines),
	ARRAY(FK_REC, lines, nlines, STREAM_MAX_LINES, "too many lines",
	      "location with too many lines", RECORDS(line_fields),
	      .elem_check = line_function),
	NONZERO(id, "location id 0"),
};
#undef T

/* Location ids, leaf first: every stack frame carries them so. */
#define LOCS                                                                                \
	U16(nlocs),                                                                         \
	ARRAY(FK_U32, locs, nlocs, STREAM_MAX_LOCS, "too many locations",                  \
	      "stack with too many locations", .nonzero = 1)

#define T struct fr_stack
static const struct frame_field stack_fields[] = {
	U64(time), U32(pid), U32(tid), U32(cpu), U32(flags), U64(period), LOCS,
};
#undef T

#define T struct fr_offcpu_stack
static const struct frame_field offcpu_stack_fields[] = {
	U64(start), U64(end), U32(pid), U32(tid), U32(cpu), U32(phase), U32(flags),
	U32(stack_flags), INTERVAL, LOCS, SPANS,
};
#undef T

#define T struct fr_heap_stack
static const struct frame_field heap_stack_fields[] = {
	U64(time), U32(pid), U32(tid), X64(addr), U64(size), U64(weight), U32(flags),
	U32(stack_flags), CHECK(heap_weight), LOCS,
};
#undef T

#define T struct fr_page_stack
static const struct frame_field page_stack_fields[] = {
	U64(time), U32(pid), U32(tid), X64(pfn), U32(order), U32(flags), U32(stack_flags),
	RANGE(order, 0, STREAM_MAX_PAGE_ORDER, "page order above " NUM(STREAM_MAX_PAGE_ORDER)),
	LOCS,
};
#undef T

#define T struct fr_debuginfod
static const struct frame_field debuginfod_fields[] = {
	U64(queried), U64(requests), U64(fetched), U64(not_found), U64(failed),
	U64(out_of_time), U64(oversized), U64(bytes_fetched), CHECK(debuginfod_sums),
};
#undef T

#define T struct fr_window_heap_stack
static const struct frame_field window_heap_stack_fields[] = {
	U32(index), U32(pid), U32(tid), U64(alloc_objects), U64(alloc_space),
	U64(inuse_objects), U64(inuse_space), LOCS,
};
#undef T

#define T struct fr_window_page_stack
static const struct frame_field window_page_stack_fields[] = {
	U32(index), U32(pid), U32(tid), U64(alloc_pages), U64(alloc_bytes), U64(usage_pages),
	U64(usage_bytes), LOCS,
};
#undef T

#define T struct fr_window_start
static const struct frame_field window_start_fields[] = {
	U32(index), U64(start), U64(end),
	ORDERED(start, end, "window ends before it starts"),
};
#undef T

#define T struct fr_window_stack
static const struct frame_field window_stack_fields[] = {
	U32(index), U32(pid), U32(tid), U64(count), U64(nanos), LOCS,
};
#undef T

#define T struct fr_stat
static const struct frame_field stat_fields[] = { STR(key), U64(value) };
#undef T

#define T struct fr_window_end
static const struct frame_field window_end_fields[] = {
	U32(index), U64(start), U64(end), U32(reason), U16(nstats),
	ARRAY(FK_REC, stats, nstats, STREAM_MAX_STATS, "too many statistics",
	      "too many window statistics", RECORDS(stat_fields)),
	ORDERED(start, end, "window ends before it starts"),
};
#undef T

#define T struct fr_forget
static const struct frame_field forget_fields[] = {
	U32(pid), U32(tid), U32(n),
	PACKED(FK_U32, ids, n, STREAM_MAX_FORGET, "more mappings than the limit",
	       "forget frame with more than " NUM(STREAM_MAX_FORGET) " mappings"),
};
#undef T

#define T struct fr_file
static const struct frame_field file_fields[] = {
	U32(index), U32(flags), STR(kind), STR(name), STR(temp), CHECK(file_names),
};
#undef T

#define T struct fr_modules
static const struct frame_field modules_fields[] = {
	U32(index), U16(n),
	PACKED(FK_BID, ids, n, STREAM_MAX_MODULES, "too many modules", NULL,
	       .elem_check = module_bid),
};
#undef T

#define T struct fr_export
static const struct frame_field export_fields[] = {
	U32(index), U32(status), U32(attempts), U64(rejected), STR(error),
	RANGE(status, 2, 4, "unknown export status"),
};
#undef T

/* Indexed by type. */
static const struct frame_desc rows[] = {
	ROW(FR_TARGET, "target", struct fr_target, target_fields),
	ROW(FR_MMAP, "mmap", struct fr_mmap, mmap_fields),
	ROW(FR_COMM, "comm", struct fr_comm, comm_fields),
	ROW(FR_FORK, "fork", struct fr_task, task_fields),
	ROW(FR_EXIT, "exit", struct fr_task, task_fields),
	ROW(FR_SAMPLE, "sample", struct fr_sample, sample_fields),
	ROW(FR_LOST, "lost", struct fr_lost, lost_fields),
	ROW(FR_KSYM, "ksym", struct fr_ksym, ksym_fields),
	ROW(FR_ROUND, "round", struct fr_round, round_fields),
	ROW(FR_TARGET_EXIT, "target-exit", struct fr_target_exit, target_exit_fields),
	ROW(FR_END, "end", struct fr_end, end_fields),
	ROW(FR_WARNING, "warning", struct fr_warning, warning_fields),
	ROW(FR_USYM, "usym", struct fr_usym, usym_fields),
	ROW(FR_SAMPLE_REGS, "sample-regs", struct fr_sample_regs, sample_regs_fields,
	    .write_check = regs_write),
	ROW(FR_OFFCPU, "offcpu", struct fr_offcpu, offcpu_fields, .write_check = offcpu_write),
	ROW(FR_ALLOC, "alloc", struct fr_alloc, alloc_fields, .write_check = alloc_write),
	ROW(FR_HEAP_FREE, "heap-free", struct fr_heap_free, heap_free_fields),
	ROW(FR_HEAP_RESET, "heap-reset", struct fr_heap_reset, heap_reset_fields),
	ROW(FR_PAGE_ALLOC, "page-alloc", struct fr_page_alloc, page_alloc_fields),
	ROW(FR_MAPPING, "mapping", struct fr_mapping, mapping_fields),
	ROW(FR_FUNCTION, "function", struct fr_function, function_fields),
	ROW(FR_LOCATION, "location", struct fr_location, location_fields),
	ROW(FR_STACK, "stack", struct fr_stack, stack_fields),
	ROW(FR_OFFCPU_STACK, "offcpu-stack", struct fr_offcpu_stack, offcpu_stack_fields),
	ROW(FR_HEAP_STACK, "heap-stack", struct fr_heap_stack, heap_stack_fields),
	ROW(FR_DEBUGINFOD, "debuginfod", struct fr_debuginfod, debuginfod_fields),
	ROW(FR_JIT, "jit", struct fr_jit, jit_fields),
	ROW(FR_PAGE_STACK, "page-stack", struct fr_page_stack, page_stack_fields),
	ROW(FR_PAGE_FREE, "page-free", struct fr_page_free, page_free_fields),
	ROW(FR_WINDOW_START, "window-start", struct fr_window_start, window_start_fields),
	ROW(FR_WINDOW_STACK, "window-stack", struct fr_window_stack, window_stack_fields),
	ROW(FR_WINDOW_END, "window-end", struct fr_window_end, window_end_fields),
	ROW(FR_WINDOW_OFFCPU_STACK, "window-offcpu-stack", struct fr_window_stack,
	    window_stack_fields),
	ROW(FR_FORGET, "forget", struct fr_forget, forget_fields),
	ROW(FR_WINDOW_HEAP_STACK, "window-heap-stack", struct fr_window_heap_stack,
	    window_heap_stack_fields),
	ROW(FR_WINDOW_PAGE_STACK, "window-page-stack", struct fr_window_page_stack,
	    window_page_stack_fields),
	ROW(FR_FILE, "file", struct fr_file, file_fields),
	ROW(FR_MODULES, "modules", struct fr_modules, modules_fields),
	ROW(FR_EXPORT, "export", struct fr_export, export_fields),
};

#define NTYPES (sizeof(rows) / sizeof(rows[0]))

const struct frame_desc *
stream_frame_desc(uint32_t type)
{
	return type < NTYPES && rows[type].name ? &rows[type] : NULL;
}

uint32_t
stream_frame_types(void)
{
	return NTYPES;
}

const char *
stream_frame_name(uint32_t type)
{
	const struct frame_desc *d = stream_frame_desc(type);
	return d ? d->name : "unknown";
}

int
stream_check_frame(const struct frame *f, char *err, size_t errlen)
{
	union stream_any_frame u;

	return stream_frame_desc(f->type) ? stream_get_frame(f, &u, err, errlen) : 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Sampled allocations of the target process, from uprobes on its allocator (docs/heap.md).
 *
 * An entry probe notes the call in "pending" under the thread id (the size, the old block
 * of a realloc, the out-pointer of posix_memalign) and decides there whether the block is
 * sampled: a block of size s below the mean interval is kept with probability 1/w, w the
 * smallest power of two with s * w >= interval, and then stands for w blocks, so weights
 * and weight * size summed are unbiased estimates of the count and bytes allocated.  The
 * return probe of the same call (its stack pointer tells it from an allocator call nested
 * inside, as glibc's realloc(NULL, n) calls malloc) sends a sampled block to the "events"
 * ring buffer with its user stack and keeps its address in "live"; free of a live address
 * sends a free, realloc of one a move.  The free of any other address costs one failed
 * look-up.  Losses are counted in "counters", never silently dropped.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "heap_shared.h"

/*
 * The registers a uprobe sees, read through this view rather than vmlinux.h's struct
 * pt_regs: that type is CO-RE-relocated, and one relocation makes libbpf parse the kernel's
 * whole BTF at load (about 10 ms of collect's start) for offsets that are user ABI and
 * never move.  x86_64: the order of uapi asm/ptrace.h; arm64: user_pt_regs, which the
 * kernel's pt_regs begins with.
 */
#if defined(__TARGET_ARCH_x86)
struct uregs {
	__u64 r15, r14, r13, r12, bp, bx, r11, r10, r9, r8, ax, cx, dx, si, di, orig_ax, ip,
		cs, flags, sp, ss;
};
#define R(ctx) ((const struct uregs *)(ctx))
#define U_PARM1(ctx) (R(ctx)->di)
#define U_PARM2(ctx) (R(ctx)->si)
#define U_PARM3(ctx) (R(ctx)->dx)
#define U_PARM4(ctx) (R(ctx)->cx)
#define U_RC(ctx) (R(ctx)->ax)
#define U_SP(ctx) (R(ctx)->sp)
#define U_IP(ctx) (R(ctx)->ip)
#define U_FP(ctx) (R(ctx)->bp)
#elif defined(__TARGET_ARCH_arm64)
struct uregs {
	__u64 regs[31], sp, pc, pstate;
};
#define R(ctx) ((const struct uregs *)(ctx))
#define U_PARM1(ctx) (R(ctx)->regs[0])
#define U_PARM2(ctx) (R(ctx)->regs[1])
#define U_PARM3(ctx) (R(ctx)->regs[2])
#define U_PARM4(ctx) (R(ctx)->regs[3])
#define U_RC(ctx) (R(ctx)->regs[0])
#define U_SP(ctx) (R(ctx)->sp)
#define U_IP(ctx) (R(ctx)->pc)
#define U_FP(ctx) (R(ctx)->regs[29])
#define U_LR(ctx) (R(ctx)->regs[30])
#else
#error "the allocator program knows the registers of x86_64 and arm64 only"
#endif

const volatile __u32 target_tgid = 0;
const volatile __u64 interval = 524288;     /* --alloc-interval */
/* Copy registers and stack (--unwind dwarf): set by collect, also while attached (the
 * unwind fallback's switch to DWARF). */
volatile __u32 dwarf = 0;
const volatile __u64 wakeup_bytes = 1 << 20; /* wake collect when this much is pending */

/* The stack pointer a return probe sees, against the entry's: the return has popped the
 * return address on x86_64; on aarch64 it lives in a register. */
#if defined(__TARGET_ARCH_x86)
#define RET_SP_DELTA 8
#else
#define RET_SP_DELTA 0
#endif

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, HEAP_MAX_PENDING);
	__type(key, __u32);
	__type(value, struct heap_pending);
} pending SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HEAP_MAX_LIVE);
	/* Entries come only with sampled blocks, so allocating each as it comes costs little,
	 * and a preallocated map of this size costs collect's start some 10 ms of page
	 * clearing and memory charging (and its end as much to free them). */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, __u8);
} live SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, HEAP_C_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void
count(__u32 c)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &c);
	if (v)
		__sync_fetch_and_add(v, 1);
}

/* The weight a block of size bytes is sampled with, or 0 when it is not. */
static __always_inline __u64
sample_weight(__u64 size)
{
	__u64 s = size ? size : 1;
	if (s >= interval)
		return 1;
	__u64 w = (interval + s - 1) / s - 1;
	w |= w >> 1;
	w |= w >> 2;
	w |= w >> 4;
	w |= w >> 8;
	w |= w >> 16;
	w |= w >> 32;
	w++;
	__u64 r = (__u64)bpf_get_prandom_u32() << 32 | bpf_get_prandom_u32();
	return (r & (w - 1)) == 0 ? w : 0;
}

static __always_inline int
enter(struct pt_regs *ctx, __u32 call, __u64 size, __u64 old, __u64 memptr)
{
	__u64 id = bpf_get_current_pid_tgid();
	if ((__u32)(id >> 32) != target_tgid)
		return 0;
	__u32 tid = (__u32)id;
	__u64 sp = U_SP(ctx);
	count(HEAP_C_CALLS);
	struct heap_pending *p = bpf_map_lookup_elem(&pending, &tid);
	if (p) {
		/* Deeper than an open call of the thread: the allocator calls itself, and the
		 * outer call is the one the program asked for. */
		if (p->sp > sp)
			return 0;
		count(HEAP_C_UNFINISHED);
	}
	__u64 weight = sample_weight(size);
	/* An unsampled plain allocation needs nothing at its return, and (glibc, musl) makes
	 * no nested allocator call a note would have to hide. */
	if (!weight && call == HEAP_CALL_ALLOC) {
		if (p)
			bpf_map_delete_elem(&pending, &tid);
		return 0;
	}
	struct heap_pending n = { .sp = sp, .size = size, .old = old, .memptr = memptr,
				  .weight = weight, .call = call };
	bpf_map_update_elem(&pending, &tid, &n, BPF_ANY);
	return 0;
}

static __always_inline void
send_free(__u32 tid, __u32 kind, __u64 addr, __u64 new_addr)
{
	struct heap_free_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(HEAP_C_RING_DROPS);
		return;
	}
	e->time = bpf_ktime_get_ns();
	e->kind = kind;
	e->tid = tid;
	e->addr = addr;
	e->new_addr = new_addr;
	bpf_ringbuf_submit(e, 0);
}

/* The user stack at the return, by the frame-pointer walk. */
static __always_inline void
take_stack(struct pt_regs *ctx, struct heap_alloc_event *e)
{
	long n = bpf_get_stack(ctx, e->ips, sizeof(e->ips), BPF_F_USER_STACK);
	if (n <= 0) {
		e->nips = 0;
		e->flags |= HEAP_EV_NO_STACK;
		count(HEAP_C_STACK_ERR);
	} else {
		e->nips = (__u32)n / 8;
	}
}

/* Under DWARF also the registers and a copy of the stack, for unwind's CFI walk. */
static __always_inline void
take_copy(struct pt_regs *ctx, struct heap_deep_event *d)
{
	__u64 sp = U_SP(ctx);
	d->regs[0] = U_IP(ctx);
	d->regs[1] = sp;
	d->regs[2] = U_FP(ctx);
#if defined(__TARGET_ARCH_arm64)
	d->regs[3] = U_LR(ctx);
#else
	d->regs[3] = 0;
#endif
	/* The stack may end closer to sp than a whole copy: shorter copies then. */
	if (bpf_probe_read_user(d->stack, HEAP_DEEP_BYTES, (void *)sp) == 0)
		d->stack_len = HEAP_DEEP_BYTES;
	else if (bpf_probe_read_user(d->stack, 4096, (void *)sp) == 0)
		d->stack_len = 4096;
	else if (bpf_probe_read_user(d->stack, 512, (void *)sp) == 0)
		d->stack_len = 512;
	else {
		d->stack_len = 0;
		count(HEAP_C_STACK_ERR);
	}
}

static __always_inline void
fill(struct heap_alloc_event *e, __u32 tid, __u64 addr, __u64 size, __u64 weight,
     __u32 flags)
{
	e->time = bpf_ktime_get_ns();
	e->kind = HEAP_EV_ALLOC;
	e->tid = tid;
	e->addr = addr;
	e->size = size;
	e->weight = weight;
	e->flags = flags;
}

static __always_inline void
send_alloc(struct pt_regs *ctx, __u32 tid, __u64 addr, __u64 size, __u64 weight)
{
	__u32 flags = 0;
	__u8 one = 1;
	if (bpf_map_update_elem(&live, &addr, &one, BPF_ANY) < 0) {
		flags |= HEAP_EV_UNTRACKED;
		count(HEAP_C_EVICTED);
	}
	__u64 wake = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ?
		     BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	/* Read once: collect may switch it meanwhile, and the record's size follows it. */
	if (dwarf) {
		struct heap_deep_event *d = bpf_ringbuf_reserve(&events, sizeof(*d), 0);
		if (d) {
			fill(&d->e, tid, addr, size, weight, flags);
			take_stack(ctx, &d->e);
			take_copy(ctx, d);
			bpf_ringbuf_submit(d, wake);
			return;
		}
	} else {
		struct heap_alloc_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
		if (e) {
			fill(e, tid, addr, size, weight, flags);
			take_stack(ctx, e);
			bpf_ringbuf_submit(e, wake);
			return;
		}
	}
	count(HEAP_C_RING_DROPS);
	if (!flags)
		bpf_map_delete_elem(&live, &addr);
}

/* A realloc of a live block: it moves (or, realloc(p, 0), is freed); 1 when it was one. */
static __always_inline int
realloc_live(__u32 tid, const struct heap_pending *p, __u64 addr)
{
	__u64 old = p->old;
	if (!old || !bpf_map_lookup_elem(&live, &old))
		return 0;
	if (!addr) {
		/* A failed realloc leaves the block; realloc(p, 0) frees it. */
		if (p->size == 0) {
			bpf_map_delete_elem(&live, &old);
			send_free(tid, HEAP_EV_FREE, old, 0);
		}
		return 1;
	}
	if (addr != old) {
		__u8 one = 1;
		bpf_map_delete_elem(&live, &old);
		if (bpf_map_update_elem(&live, &addr, &one, BPF_ANY) < 0) {
			count(HEAP_C_EVICTED);
			send_free(tid, HEAP_EV_FREE, old, 0);
			return 1;
		}
		send_free(tid, HEAP_EV_MOVE, old, addr);
	}
	return 1;
}

static __always_inline int
leave(struct pt_regs *ctx, int memalign)
{
	__u64 id = bpf_get_current_pid_tgid();
	if ((__u32)(id >> 32) != target_tgid)
		return 0;
	__u32 tid = (__u32)id;
	struct heap_pending *pp = bpf_map_lookup_elem(&pending, &tid);
	if (!pp || pp->sp + RET_SP_DELTA != U_SP(ctx))
		return 0; /* not noted, or the return of a call nested in the noted one */
	struct heap_pending p = *pp;
	bpf_map_delete_elem(&pending, &tid);
	__u64 addr = U_RC(ctx);
	if (memalign) {
		if (addr != 0 || !p.memptr ||
		    bpf_probe_read_user(&addr, sizeof(addr), (void *)p.memptr) < 0)
			return 0;
	}
	if (p.call == HEAP_CALL_REALLOC && realloc_live(tid, &p, addr))
		return 0;
	if (p.weight && addr)
		send_alloc(ctx, tid, addr, p.size, p.weight);
	return 0;
}

/* ---- what each entry probe does, by the function's argument layout ---- */

static __always_inline int
on_malloc(struct pt_regs *ctx)
{
	return enter(ctx, HEAP_CALL_ALLOC, U_PARM1(ctx), 0, 0);
}

static __always_inline int
on_calloc(struct pt_regs *ctx)
{
	__u64 n = U_PARM1(ctx), size = U_PARM2(ctx);
	/* Factors that could overflow: such a request fails (or is absurd); not sampled. */
	if ((n | size) >> 32)
		return 0;
	__u64 total = n * size;
	/* calloc may call malloc (musl): noted even when not sampled. */
	return enter(ctx, HEAP_CALL_WRAPPER, total, 0, 0);
}

static __always_inline int
on_realloc(struct pt_regs *ctx)
{
	return enter(ctx, HEAP_CALL_REALLOC, U_PARM2(ctx), U_PARM1(ctx), 0);
}

/* aligned_alloc(alignment, size): glibc's calls malloc for a small alignment. */
static __always_inline int
on_aligned_alloc(struct pt_regs *ctx)
{
	return enter(ctx, HEAP_CALL_WRAPPER, U_PARM2(ctx), 0, 0);
}

static __always_inline int
on_posix_memalign(struct pt_regs *ctx)
{
	return enter(ctx, HEAP_CALL_MEMALIGN, U_PARM3(ctx), 0, U_PARM1(ctx));
}

/* __rust_realloc(ptr, old_size, align, new_size) */
static __always_inline int
on_rust_realloc(struct pt_regs *ctx)
{
	return enter(ctx, HEAP_CALL_REALLOC, U_PARM4(ctx), U_PARM1(ctx), 0);
}

static __always_inline int
on_free(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	if ((__u32)(id >> 32) != target_tgid)
		return 0;
	__u64 addr = U_PARM1(ctx);
	if (!addr || bpf_map_delete_elem(&live, &addr) < 0)
		return 0;
	send_free((__u32)id, HEAP_EV_FREE, addr, 0);
	return 0;
}

/* ---- uprobe_multi (Linux 6.12+): one program for every entry, one for every return, the
 * attach cookie saying which layout (HEAP_ROLE_*); collect loads these, or the ones below ---- */

SEC("uprobe")
int heap_entry_multi(struct pt_regs *ctx)
{
	switch (bpf_get_attach_cookie(ctx)) {
	case HEAP_ROLE_MALLOC: return on_malloc(ctx);
	case HEAP_ROLE_CALLOC: return on_calloc(ctx);
	case HEAP_ROLE_REALLOC: return on_realloc(ctx);
	case HEAP_ROLE_ALIGNED_ALLOC: return on_aligned_alloc(ctx);
	case HEAP_ROLE_POSIX_MEMALIGN: return on_posix_memalign(ctx);
	case HEAP_ROLE_RUST_REALLOC: return on_rust_realloc(ctx);
	case HEAP_ROLE_FREE: return on_free(ctx);
	}
	return 0;
}

SEC("uretprobe")
int heap_ret_multi(struct pt_regs *ctx)
{
	return leave(ctx, bpf_get_attach_cookie(ctx) == HEAP_ROLE_POSIX_MEMALIGN);
}

/* ---- a uprobe each (tracefs): one entry program per argument layout, two return
 * programs ---- */

SEC("uprobe")
int heap_malloc(struct pt_regs *ctx)
{
	return on_malloc(ctx);
}

SEC("uprobe")
int heap_calloc(struct pt_regs *ctx)
{
	return on_calloc(ctx);
}

SEC("uprobe")
int heap_realloc(struct pt_regs *ctx)
{
	return on_realloc(ctx);
}

SEC("uprobe")
int heap_aligned_alloc(struct pt_regs *ctx)
{
	return on_aligned_alloc(ctx);
}

SEC("uprobe")
int heap_posix_memalign(struct pt_regs *ctx)
{
	return on_posix_memalign(ctx);
}

SEC("uprobe")
int heap_rust_realloc(struct pt_regs *ctx)
{
	return on_rust_realloc(ctx);
}

SEC("uprobe")
int heap_free(struct pt_regs *ctx)
{
	return on_free(ctx);
}

SEC("uretprobe")
int heap_ret(struct pt_regs *ctx)
{
	return leave(ctx, 0);
}

SEC("uretprobe")
int heap_ret_memalign(struct pt_regs *ctx)
{
	return leave(ctx, 1);
}

/* The benchmark's floor (bench/heap.sh): the same probes, doing nothing. */
SEC("uprobe")
int heap_empty(struct pt_regs *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";

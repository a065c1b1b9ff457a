/*
 * Typed encoders and decoders of the frames in docs/stream-format.md.
 * Each layout is written once as a pair of functions that mirror each other field by field.
 * Decoders stop at the first missing byte and report which frame was short; bytes past the
 * known fields are ignored so that fields can be appended in later versions.
 */
#include "stream.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- encoding cursor over the writer's scratch buffer ---- */

struct enc {
	struct stream_writer *w;
	size_t len;
	int bad;
};

/* Little-endian loads and stores through memcpy: one instruction each on the usual hosts,
 * where the byte-at-a-time loops they replace cost a call per field. */
static inline void
st16(uint8_t *p, uint16_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap16(v);
#endif
	memcpy(p, &v, 2);
}

static inline void
st32(uint8_t *p, uint32_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	memcpy(p, &v, 4);
}

static inline void
st64(uint8_t *p, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	memcpy(p, &v, 8);
}

static inline uint16_t
ld16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap16(v);
#endif
	return v;
}

static inline uint32_t
ld32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	return v;
}

static inline uint64_t
ld64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

static uint8_t *
enc_grow(struct enc *e, size_t n)
{
	struct stream_writer *w = e->w;
	if (e->bad)
		return NULL;
	size_t cap = w->scratch_cap ? w->scratch_cap : 4096;
	while (cap < e->len + n)
		cap *= 2;
	uint8_t *p = realloc(w->scratch, cap);
	if (!p) {
		e->bad = 1;
		snprintf(w->err, sizeof(w->err), "out of memory");
		return NULL;
	}
	w->scratch = p;
	w->scratch_cap = cap;
	p = w->scratch + e->len;
	e->len += n;
	return p;
}

/* n more bytes of the frame being encoded, or NULL once encoding failed. */
static inline uint8_t *
enc_room(struct enc *e, size_t n)
{
	if (e->bad || e->len + n > e->w->scratch_cap)
		return enc_grow(e, n);
	uint8_t *p = e->w->scratch + e->len;
	e->len += n;
	return p;
}

static void
put_u8(struct enc *e, uint8_t v)
{
	uint8_t *p = enc_room(e, 1);
	if (p)
		*p = v;
}

static inline void
put_u16(struct enc *e, uint16_t v)
{
	uint8_t *p = enc_room(e, 2);
	if (p)
		st16(p, v);
}

static inline void
put_u32(struct enc *e, uint32_t v)
{
	uint8_t *p = enc_room(e, 4);
	if (p)
		st32(p, v);
}

static inline void
put_u64(struct enc *e, uint64_t v)
{
	uint8_t *p = enc_room(e, 8);
	if (p)
		st64(p, v);
}

static void
put_bytes(struct enc *e, const void *src, size_t n)
{
	uint8_t *p = enc_room(e, n);
	if (p && n)
		memcpy(p, src, n);
}

/* Strings longer than the limit are cut: a name is never worth a failed frame. */
static void
put_str(struct enc *e, struct str s)
{
	uint16_t n = s.len > STREAM_MAX_STR ? STREAM_MAX_STR : s.len;
	const char *nul = n ? memchr(s.p, 0, n) : NULL;
	if (nul)
		n = (uint16_t)(nul - s.p);
	put_u16(e, n);
	put_bytes(e, s.p, n);
}

static int
enc_done(struct enc *e, uint32_t type)
{
	if (e->bad)
		return -1;
	return stream_write(e->w, type, e->w->scratch, (uint32_t)e->len);
}

/* ---- decoding cursor over one frame ---- */

struct dec {
	const uint8_t *p;
	size_t len, pos;
	const char *bad; /* first problem */
};

static inline const uint8_t *
take(struct dec *d, size_t n)
{
	if (d->bad)
		return NULL;
	if (d->len - d->pos < n) {
		d->bad = "frame too short";
		return NULL;
	}
	const uint8_t *p = d->p + d->pos;
	d->pos += n;
	return p;
}

static uint8_t
get_u8(struct dec *d)
{
	const uint8_t *p = take(d, 1);
	return p ? p[0] : 0;
}

static inline uint16_t
get_u16(struct dec *d)
{
	const uint8_t *p = take(d, 2);
	return p ? ld16(p) : 0;
}

static inline uint32_t
get_u32(struct dec *d)
{
	const uint8_t *p = take(d, 4);
	return p ? ld32(p) : 0;
}

static inline uint64_t
get_u64(struct dec *d)
{
	const uint8_t *p = take(d, 8);
	return p ? ld64(p) : 0;
}

static struct str
get_str(struct dec *d)
{
	struct str s = { "", 0 };
	uint16_t n = get_u16(d);
	if (n > STREAM_MAX_STR) {
		if (!d->bad)
			d->bad = "string longer than the limit";
		return s;
	}
	const uint8_t *p = take(d, n);
	if (!p)
		return s;
	if (memchr(p, 0, n)) {
		d->bad = "NUL byte inside a string";
		return s;
	}
	s.p = (const char *)p;
	s.len = n;
	return s;
}

static void
get_count(struct dec *d, uint16_t n, uint16_t max, const char *what)
{
	if (n > max && !d->bad)
		d->bad = what;
}

static int
dec_done(const struct frame *f, struct dec *d, char *err, size_t errlen)
{
	if (!d->bad)
		return 0;
	snprintf(err, errlen, "corrupt %s frame: %s", stream_frame_name(f->type), d->bad);
	return -1;
}

#define DEC_BEGIN(want)                                                               \
	struct dec d_ = { f->data, f->len, 0, NULL };                                     \
	struct dec *d = &d_;                                                              \
	if (f->type != (want))                                                           \
		d->bad = "unexpected frame type";
#define ENC_BEGIN() struct enc e_ = { w, 0, 0 }; struct enc *e = &e_

/* ---- the frames ---- */

int
stream_put_target(struct stream_writer *w, const struct fr_target *v)
{
	ENC_BEGIN();
	put_u32(e, v->pid);
	put_u32(e, v->cpu_frequency);
	put_u64(e, v->start_time);
	put_u32(e, v->flags);
	put_str(e, v->kind);
	put_str(e, v->exe);
	put_str(e, v->comm);
	put_str(e, v->unwind_requested);
	put_str(e, v->unwind_mode);
	put_str(e, v->unwind_reason);
	put_str(e, v->profiles);
	put_str(e, v->kernel_release);
	put_u32(e, v->calib_samples);
	put_u32(e, v->calib_mapped_permille);
	put_u32(e, v->calib_deep_permille);
	put_u32(e, v->calib_cycles);
	put_str(e, v->calib_verdict);
	put_str(e, v->fallback_reason);
	put_u64(e, v->since);
	put_str(e, v->scope_requested);
	put_str(e, v->scope_effective);
	put_str(e, v->scope_cgroup);
	put_str(e, v->scope_reason);
	put_u32(e, v->offcpu_percent ? v->offcpu_percent : 100);
	put_u64(e, v->window_nanos);
	put_str(e, v->sample_type);
	put_str(e, v->sample_unit);
	return enc_done(e, FR_TARGET);
}

int
stream_get_target(const struct frame *f, struct fr_target *v, char *err, size_t errlen)
{
	DEC_BEGIN(FR_TARGET);
	v->pid = get_u32(d);
	v->cpu_frequency = get_u32(d);
	v->start_time = get_u64(d);
	v->flags = get_u32(d);
	v->kind = get_str(d);
	v->exe = get_str(d);
	v->comm = get_str(d);
	v->unwind_requested = get_str(d);
	v->unwind_mode = get_str(d);
	v->unwind_reason = get_str(d);
	v->profiles = get_str(d);
	v->kernel_release = get_str(d);
	/* Appended fields: a writer that predates them ends the frame here. */
	v->calib_samples = v->calib_mapped_permille = v->calib_deep_permille = 0;
	v->calib_cycles = 0;
	v->calib_verdict = (struct str){ "", 0 };
	if (!d->bad && d->pos < d->len) {
		v->calib_samples = get_u32(d);
		v->calib_mapped_permille = get_u32(d);
		v->calib_deep_permille = get_u32(d);
		v->calib_cycles = get_u32(d);
		v->calib_verdict = get_str(d);
	}
	v->fallback_reason = (struct str){ "", 0 };
	v->since = 0;
	if (!d->bad && d->pos < d->len) {
		v->fallback_reason = get_str(d);
		v->since = get_u64(d);
	}
	v->scope_requested = v->scope_effective = (struct str){ "", 0 };
	v->scope_cgroup = v->scope_reason = (struct str){ "", 0 };
	if (!d->bad && d->pos < d->len) {
		v->scope_requested = get_str(d);
		v->scope_effective = get_str(d);
		v->scope_cgroup = get_str(d);
		v->scope_reason = get_str(d);
	}
	v->offcpu_percent = 100;
	if (!d->bad && d->pos < d->len) {
		v->offcpu_percent = get_u32(d);
		if (!d->bad && (v->offcpu_percent < 1 || v->offcpu_percent > 100))
			d->bad = "off-CPU probability outside 1..100 percent";
	}
	v->window_nanos = 0;
	if (!d->bad && d->pos < d->len)
		v->window_nanos = get_u64(d);
	v->sample_type = v->sample_unit = (struct str){ "", 0 };
	if (!d->bad && d->pos < d->len) {
		v->sample_type = get_str(d);
		v->sample_unit = get_str(d);
	}
	return dec_done(f, d, err, errlen);
}

static void
put_build_id(struct enc *e, uint8_t len, const uint8_t *id)
{
	uint8_t buf[STREAM_BUILD_ID_MAX] = { 0 };
	if (len > STREAM_BUILD_ID_MAX)
		len = STREAM_BUILD_ID_MAX;
	memcpy(buf, id, len);
	put_u8(e, len);
	put_bytes(e, buf, sizeof(buf));
}

static uint8_t
get_build_id(struct dec *d, uint8_t *id)
{
	uint8_t len = get_u8(d);
	const uint8_t *p = take(d, STREAM_BUILD_ID_MAX);
	if (len > STREAM_BUILD_ID_MAX && !d->bad)
		d->bad = "build id longer than 20 bytes";
	if (p)
		memcpy(id, p, STREAM_BUILD_ID_MAX);
	return d->bad ? 0 : len;
}

int
stream_put_mmap(struct stream_writer *w, const struct fr_mmap *v)
{
	ENC_BEGIN();
	put_u64(e, v->time);
	put_u32(e, v->pid);
	put_u32(e, v->tid);
	put_u64(e, v->start);
	put_u64(e, v->len);
	put_u64(e, v->pgoff);
	put_u32(e, v->prot);
	put_u32(e, v->flags);
	put_build_id(e, v->build_id_len, v->build_id);
	put_str(e, v->path);
	return enc_done(e, FR_MMAP);
}

int
stream_get_mmap(const struct frame *f, struct fr_mmap *v, char *err, size_t errlen)
{
	DEC_BEGIN(FR_MMAP);
	v->time = get_u64(d);
	v->pid = get_u32(d);
	v->tid = get_u32(d);
	v->start = get_u64(d);
	v->len = get_u64(d);
	v->pgoff = get_u64(d);
	v->prot = get_u32(d);
	v->flags = get_u32(d);
	v->build_id_len = get_build_id(d, v->build_id);
	v->path = get_str(d);
	if (!d->bad && v->start + v->len < v->start)
		d->bad = "mapping wraps around the address space";
	return dec_done(f, d, err, errlen);
}

int
stream_put_comm(struct stream_writer *w, const struct fr_comm *v)
{
	ENC_BEGIN();
	put_u64(e, v->time);
	put_u32(e, v->pid);
	put_u32(e, v->tid);
	put_u32(e, v->flags);
	put_str(e, v->comm);
	return enc_done(e, FR_COMM);
}

int
stream_get_comm(const struct frame *f, struct fr_comm *v, char *err, size_t errlen)
{
	DEC_BEGIN(FR_COMM);
	v->time = get_u64(d);
	v->pid = get_u32(d);
	v->tid = get_u32(d);
	v->flags = get_u32(d);
	v->comm = get_str(d);
	return dec_done(f, d, err, errlen);
}

int
stream_put_task(struct stream_writer *w, uint32_t type, const struct fr_task *v)
{
	ENC_BEGIN();
	put_u64(e, v->time);
	put_u32(e, v->pid);
	put_u32(e, v->ppid);
	put_u32(e, v->tid);
	put_u32(e, v->ptid);
	put_u32(e, type == FR_EXIT ? v->flags : 0);
	return enc_done(e, type);
}

int
stream_get_task(const struct frame *f, struct fr_task *v, char *err, size_t errlen)
{
	DEC_BEGIN(f->type == FR_EXIT ? FR_EXIT : FR_FORK);
	v->time = get_u64(d);
	v->pid = get_u32(d);
	v->ppid = get_u32(d);
	v->tid = get_u32(d);
	v->ptid = get_u32(d);
	/* Appended: a writer that predates it ends the frame here. */
	v->flags = !d->bad && d->pos < d->len ? get_u32(d) : 0;
	return dec_done(f, d, err, errlen);
}

int
stream_put_sample(struct stream_writer *w, const struct fr_sample *v)
{
	ENC_BEGIN();
	if ((unsigned)v->nkernel + v->nuser > STREAM_MAX_IPS) {
		snprintf(w->err, sizeof(w->err), "sample with more than %d addresses",
			 STREAM_MAX_IPS);
		return -1;
	}
	put_u64(e, v->time);
	put_u32(e, v->pid);
	put_u32(e, v->tid);
	put_u32(e, v->cpu);
	put_u32(e, 0);
	put_u64(e, v->period);
	put_u16(e, v->nkernel);
	put_u16(e, v->nuser);
	unsigned n = (unsigned)v->nkernel + v->nuser;
	uint8_t *p = enc_room(e, (size_t)n * 8);
	for (unsigned i = 0; p && i < n; i++)
		st64(p + (size_t)i * 8, v->ips[i]);
	return enc_done(e, FR_SAMPLE);
}

int
stream_get_sample(const struct frame *f, struct fr_sample *v, char *err, size_t errlen)
{
	DEC_BEGIN(FR_SAMPLE);
	v->time = get_u64(d);
	v->pid = get_u32(d);
	v->tid = get_u32(d);
	v->cpu = get_u32(d);
	(void)get_u32(d);
	v->period = get_u64(d);
	v->nkernel = get_u16(d);
	v->nuser = get_u16(d);
	if (!d->bad && (unsigned)v->nkernel + v->nuser > STREAM_MAX_IPS)
		d->bad = "too many addresses";
	const uint8_t *p = d->bad ? NULL : take(d, ((size_t)v->nkernel + v->nuser) * 8);
	for (unsigned i = 0; p && i < (unsigned)v->nkernel + v->nuser; i++)
		v->ips[i] = ld64(p + (size_t)i * 8);
	return dec_done(f, d, err, errlen);
}

int
stream_put_lost(struct stream_writer *w, const struct fr_lost *v)
{
	ENC_BEGIN();
	put_u64(e, v->time);
	put_u64(e, v->count);
	put_u32(e, v->kind);
	return enc_done(e, FR_LOST);
}

int
stream_get_lost(const struct frame *f, struct fr_lost *v, char *err, size_t errlen)
{
	DEC_BEGIN(FR_LOST);
	v->time = get_u64(d);
	v->count = get_u64(d);
	v->kind = get_u32(d);
	return dec_done(f, d, err, errlen);
}

int
stream_put_ksym(struct stream_writer *w, const struct fr_ksym *v)
{
	ENC_BEGIN();
	put_u64(e, v->start);
	put_u64(e, v->end);
	put_str(e, v->name);
	put_str(e, v->module);
	return enc_done(e, FR_KSYM);
}

int
stream_get_ksym(const struct frame *f, struct fr_ksym *v, char *err, size_t errlen)
{
	DEC_BEGIN(FR_KSYM);
	v->start = get_u64(d);
	v->end = get_u64(d);
	v->name = get_str(d);
	v->module = get_str(d);
	if (!d->bad && v->end < v->start)
		d->bad = "symbol ends before it starts";
	return dec_done(f, d, err, errlen);
}

int
stream_put_round(struct stream_writer *w, const struct fr_round *v)
{
	ENC_BEGIN();
	put_u64(e, v->time);
	return enc_done(e, FR_ROUND);
}

int
stream_get_round(const struct frame *f, struct fr_round *v, char *err, size_t errlen)
{
	DEC_BEGIN(FR_ROUND);
	v->time = get_u64(d);
	return dec_done(f, d, err, errlen);
}

int
stream_put_target_exit(struct stream_writer *w, const struct fr_target_exit *v)
{
	ENC_BEGIN();
	put_u64(e, v->time);
	put_u32(e, v->pid);
	put_u32(e, (uint32_t)v->status);
	return enc_done(e, FR_TARGET_EXIT);
}

int
stream_get_target_exit(const struct frame *f, struct fr_target_exit *v, char *err,
		       size_t errlen)
{
	DEC_BEGIN(FR_TARGET_EXIT);
	v->time = get_u64(d);
	v->pid = get_u32(d);
	v->status = (int32_t)get_u32(d);
	return dec_done(f, d, err, errlen);
}

int
stream_put_end(struct stream_writer *w, const struct fr_end *v)
{
	ENC_BEGIN();
	put_u64(e, v->time);
	put_u32(e, v->reason);
	return enc_done(e, FR_END);
}

int
stream_get_end(const struct frame *f, struct fr_end *v, char *err, size_t errlen)
{
	DEC_BEGIN(FR_END);
	v->time = get_u64(d);
	v->reason = get_u32(d);
	return dec_done(f, d, err, errlen);
}

int
stream_put_warning(struct stream_writer *w, const struct fr_warning *v)
{
	ENC_BEGIN();
	put_u64(e, v->time);
	put_str(e, v->text);
	return enc_done(e, FR_WARNING);
}

int
stream_get_warning(const struct frame *f, struct fr_warning *v, char *err, size_t errlen)
{
	DEC_BEGIN(FR_WARNING);
	v->time = get_u64(d);
	v->text = get_str(d);
	return dec_done(f, d, err, errlen);
}

int
stream_put_usym(struct stream_writer *w, const struct fr_usym *v)
{
	ENC_BEGIN();
	put_build_id(e, v->build_id_len, v->build_id);
	put_str(e, v->path);
	put_u64(e, v->start);
	put_u64(e, v->end);
	put_str(e, v->name);
	return enc_done(e, FR_USYM);
}

int
stream_get_usym(const struct frame *f, struct fr_usym *v, char *err, size_t errlen)
{
	DEC_BEGIN(FR_USYM);
	v->build_id_len = get_build_id(d, v->build_id);
	v->path = get_str(d);
	v->start = get_u64(d);
	v->end = get_u64(d);
	v->name = get_str(d);
	if (!d->bad && v->end < v->start)
		d->bad = "symbol ends before it starts";
	return dec_done(f, d, err, errlen);
}

int
stream_put_sample_regs(struct stream_writer *w, const struct fr_sample_regs *v)
{
	ENC_BEGIN();
	if (v->nkernel > STREAM_MAX_IPS || v->nregs > STREAM_MAX_REGS ||
	    v->stack_len > STREAM_MAX_STACK ||
	    (unsigned)__builtin_popcountll(v->reg_mask) != v->nregs) {
		snprintf(w->err, sizeof(w->err), "sample with inconsistent registers or stack");
		return -1;
	}
	put_u64(e, v->time);
	put_u32(e, v->pid);
	put_u32(e, v->tid);
	put_u32(e, v->cpu);
	put_u32(e, v->abi);
	put_u64(e, v->period);
	put_u16(e, v->nkernel);
	put_u16(e, v->nregs);
	put_u64(e, v->reg_mask);
	put_u32(e, v->stack_len);
	for (unsigned i = 0; i < v->nkernel; i++)
		put_u64(e, v->kips[i]);
	for (unsigned i = 0; i < v->nregs; i++)
		put_u64(e, v->regs[i]);
	put_bytes(e, v->stack, v->stack_len);
	return enc_done(e, FR_SAMPLE_REGS);
}

int
stream_get_sample_regs(const struct frame *f, struct fr_sample_regs *v, char *err,
		       size_t errlen)
{
	DEC_BEGIN(FR_SAMPLE_REGS);
	v->time = get_u64(d);
	v->pid = get_u32(d);
	v->tid = get_u32(d);
	v->cpu = get_u32(d);
	v->abi = get_u32(d);
	v->period = get_u64(d);
	v->nkernel = get_u16(d);
	v->nregs = get_u16(d);
	v->reg_mask = get_u64(d);
	v->stack_len = get_u32(d);
	if (!d->bad && (v->nkernel > STREAM_MAX_IPS || v->nregs > STREAM_MAX_REGS ||
			v->stack_len > STREAM_MAX_STACK))
		d->bad = "too many kernel addresses, registers or stack bytes";
	if (!d->bad && (unsigned)__builtin_popcountll(v->reg_mask) != v->nregs)
		d->bad = "register count does not match the register mask";
	for (unsigned i = 0; !d->bad && i < v->nkernel; i++)
		v->kips[i] = get_u64(d);
	for (unsigned i = 0; !d->bad && i < v->nregs; i++)
		v->regs[i] = get_u64(d);
	v->stack = d->bad ? NULL : take(d, v->stack_len);
	return dec_done(f, d, err, errlen);
}

int
stream_put_mapping(struct stream_writer *w, const struct fr_mapping *v)
{
	ENC_BEGIN();
	put_u32(e, v->id);
	put_u32(e, v->pid);
	put_u64(e, v->start);
	put_u64(e, v->limit);
	put_u64(e, v->offset);
	put_u32(e, v->flags);
	put_build_id(e, v->build_id_len, v->build_id);
	put_str(e, v->path);
	return enc_done(e, FR_MAPPING);
}

int
stream_get_mapping(const struct frame *f, struct fr_mapping *v, char *err, size_t errlen)
{
	DEC_BEGIN(FR_MAPPING);
	v->id = get_u32(d);
	v->pid = get_u32(d);
	v->start = get_u64(d);
	v->limit = get_u64(d);
	v->offset = get_u64(d);
	v->flags = get_u32(d);
	v->build_id_len = get_build_id(d, v->build_id);
	v->path = get_str(d);
	if (!d->bad && v->id == 0)
		d->bad = "mapping id 0";
	if (!d->bad && v->limit < v->start)
		d->bad = "mapping ends before it starts";
	return dec_done(f, d, err, errlen);
}

int
stream_put_function(struct stream_writer *w, const struct fr_function *v)
{
	ENC_BEGIN();
	put_u32(e, v->id);
	put_u32(e, v->start_line);
	put_str(e, v->name);
	put_str(e, v->system_name);
	put_str(e, v->filename);
	return enc_done(e, FR_FUNCTION);
}

int
stream_get_function(const struct frame *f, struct fr_function *v, char *err, size_t errlen)
{
	DEC_BEGIN(FR_FUNCTION);
	v->id = get_u32(d);
	v->start_line = get_u32(d);
	v->name = get_str(d);
	v->system_name = get_str(d);
	v->filename = get_str(d);
	if (!d->bad && v->id == 0)
		d->bad = "function id 0";
	return dec_done(f, d, err, errlen);
}

int
stream_put_location(struct stream_writer *w, const struct fr_location *v)
{
	ENC_BEGIN();
	if (v->nlines > STREAM_MAX_LINES) {
		snprintf(w->err, sizeof(w->err), "location with too many lines");
		return -1;
	}
	put_u32(e, v->id);
	put_u32(e, v->mapping_id);
	put_u64(e, v->address);
	put_u16(e, v->nlines);
	for (unsigned i = 0; i < v->nlines; i++) {
		put_u32(e, v->lines[i].function_id);
		put_u32(e, v->lines[i].line);
	}
	return enc_done(e, FR_LOCATION);
}

int
stream_get_location(const struct frame *f, struct fr_location *v, char *err, size_t errlen)
{
	DEC_BEGIN(FR_LOCATION);
	v->id = get_u32(d);
	v->mapping_id = get_u32(d);
	v->address = get_u64(d);
	v->nlines = get_u16(d);
	get_count(d, v->nlines, STREAM_MAX_LINES, "too many lines");
	for (unsigned i = 0; !d->bad && i < v->nlines; i++) {
		v->lines[i].function_id = get_u32(d);
		v->lines[i].line = get_u32(d);
		if (!d->bad && v->lines[i].function_id == 0)
			d->bad = "line with function id 0";
	}
	if (!d->bad && v->id == 0)
		d->bad = "location id 0";
	return dec_done(f, d, err, errlen);
}

static void
put_locs(struct enc *e, uint16_t n, const uint32_t *locs)
{
	uint8_t *p = enc_room(e, 2 + (size_t)n * 4);
	if (!p)
		return;
	st16(p, n);
	for (unsigned i = 0; i < n; i++)
		st32(p + 2 + (size_t)i * 4, locs[i]);
}

static uint16_t
get_locs(struct dec *d, uint32_t *locs)
{
	uint16_t n = get_u16(d);
	get_count(d, n, STREAM_MAX_LOCS, "too many locations");
	if (d->bad)
		return 0;
	/* The ids that are there are checked first, so a zero id is reported as such even
	 * in a frame that also ends early. */
	size_t have = (d->len - d->pos) / 4, m = n < have ? n : have;
	const uint8_t *p = d->p + d->pos;
	uint32_t zero = 0;
	for (size_t i = 0; i < m; i++)
		zero |= !(locs[i] = ld32(p + i * 4));
	if (zero) {
		d->bad = "location id 0";
		return 0;
	}
	return take(d, (size_t)n * 4) ? n : 0;
}

int
stream_put_stack(struct stream_writer *w, const struct fr_stack *v)
{
	ENC_BEGIN();
	if (v->nlocs > STREAM_MAX_LOCS) {
		snprintf(w->err, sizeof(w->err), "stack with too many locations");
		return -1;
	}
	put_u64(e, v->time);
	put_u32(e, v->pid);
	put_u32(e, v->tid);
	put_u32(e, v->cpu);
	put_u32(e, v->flags);
	put_u64(e, v->period);
	put_locs(e, v->nlocs, v->locs);
	return enc_done(e, FR_STACK);
}

int
stream_get_stack(const struct frame *f, struct fr_stack *v, char *err, size_t errlen)
{
	DEC_BEGIN(FR_STACK);
	v->time = get_u64(d);
	v->pid = get_u32(d);
	v->tid = get_u32(d);
	v->cpu = get_u32(d);
	v->flags = get_u32(d);
	v->period = get_u64(d);
	v->nlocs = get_locs(d, v->locs);
	return dec_done(f, d, err, errlen);
}

int
stream_put_window_start(struct stream_writer *w, const struct fr_window_start *v)
{
	ENC_BEGIN();
	put_u32(e, v->index);
	put_u64(e, v->start);
	put_u64(e, v->end);
	return enc_done(e, FR_WINDOW_START);
}

int
stream_get_window_start(const struct frame *f, struct fr_window_start *v, char *err,
			size_t errlen)
{
	DEC_BEGIN(FR_WINDOW_START);
	v->index = get_u32(d);
	v->start = get_u64(d);
	v->end = get_u64(d);
	if (!d->bad && v->end < v->start)
		d->bad = "window ends before it starts";
	return dec_done(f, d, err, errlen);
}

int
stream_put_window_stack(struct stream_writer *w, const struct fr_window_stack *v)
{
	ENC_BEGIN();
	if (v->nlocs > STREAM_MAX_LOCS) {
		snprintf(w->err, sizeof(w->err), "stack with too many locations");
		return -1;
	}
	put_u32(e, v->index);
	put_u32(e, v->pid);
	put_u32(e, v->tid);
	put_u64(e, v->count);
	put_u64(e, v->nanos);
	put_locs(e, v->nlocs, v->locs);
	return enc_done(e, FR_WINDOW_STACK);
}

int
stream_get_window_stack(const struct frame *f, struct fr_window_stack *v, char *err,
			size_t errlen)
{
	DEC_BEGIN(FR_WINDOW_STACK);
	v->index = get_u32(d);
	v->pid = get_u32(d);
	v->tid = get_u32(d);
	v->count = get_u64(d);
	v->nanos = get_u64(d);
	v->nlocs = get_locs(d, v->locs);
	return dec_done(f, d, err, errlen);
}

int
stream_put_window_end(struct stream_writer *w, const struct fr_window_end *v)
{
	ENC_BEGIN();
	if (v->nstats > STREAM_MAX_STATS) {
		snprintf(w->err, sizeof(w->err), "too many window statistics");
		return -1;
	}
	put_u32(e, v->index);
	put_u64(e, v->start);
	put_u64(e, v->end);
	put_u32(e, v->reason);
	put_u16(e, v->nstats);
	for (unsigned i = 0; i < v->nstats; i++) {
		put_str(e, v->stats[i].key);
		put_u64(e, v->stats[i].value);
	}
	return enc_done(e, FR_WINDOW_END);
}

int
stream_get_window_end(const struct frame *f, struct fr_window_end *v, char *err, size_t errlen)
{
	DEC_BEGIN(FR_WINDOW_END);
	v->index = get_u32(d);
	v->start = get_u64(d);
	v->end = get_u64(d);
	v->reason = get_u32(d);
	v->nstats = get_u16(d);
	get_count(d, v->nstats, STREAM_MAX_STATS, "too many statistics");
	for (unsigned i = 0; !d->bad && i < v->nstats; i++) {
		v->stats[i].key = get_str(d);
		v->stats[i].value = get_u64(d);
	}
	if (!d->bad && v->end < v->start)
		d->bad = "window ends before it starts";
	return dec_done(f, d, err, errlen);
}

int
stream_put_file(struct stream_writer *w, const struct fr_file *v)
{
	ENC_BEGIN();
	put_u32(e, v->index);
	put_u32(e, v->flags);
	put_str(e, v->kind);
	put_str(e, v->name);
	put_str(e, v->temp);
	return enc_done(e, FR_FILE);
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

int
stream_get_file(const struct frame *f, struct fr_file *v, char *err, size_t errlen)
{
	DEC_BEGIN(FR_FILE);
	v->index = get_u32(d);
	v->flags = get_u32(d);
	v->kind = get_str(d);
	v->name = get_str(d);
	v->temp = get_str(d);
	if (!d->bad && (!plain_name(v->name) || !plain_name(v->temp)))
		d->bad = "file name is not a plain name in the output directory";
	return dec_done(f, d, err, errlen);
}

int
stream_put_forget(struct stream_writer *w, const struct fr_forget *v, const uint32_t *ids)
{
	ENC_BEGIN();
	if (v->n > STREAM_MAX_FORGET) {
		snprintf(w->err, sizeof(w->err), "forget frame with more than %d mappings",
			 STREAM_MAX_FORGET);
		return -1;
	}
	put_u32(e, v->pid);
	put_u32(e, v->tid);
	put_u32(e, v->n);
	for (uint32_t i = 0; i < v->n; i++)
		put_u32(e, ids[i]);
	return enc_done(e, FR_FORGET);
}

int
stream_get_forget(const struct frame *f, struct fr_forget *v, char *err, size_t errlen)
{
	DEC_BEGIN(FR_FORGET);
	v->pid = get_u32(d);
	v->tid = get_u32(d);
	v->n = get_u32(d);
	if (v->n > STREAM_MAX_FORGET && !d->bad)
		d->bad = "more mappings than the limit";
	v->ids = d->bad ? NULL : take(d, (size_t)v->n * 4);
	return dec_done(f, d, err, errlen);
}

uint32_t
stream_forget_id(const struct fr_forget *v, uint32_t i)
{
	return ld32(v->ids + (size_t)i * 4);
}

#define BID_BYTES (1 + STREAM_BUILD_ID_MAX)

int
stream_put_modules(struct stream_writer *w, uint32_t index, const struct fr_bid *ids,
		   uint16_t n)
{
	ENC_BEGIN();
	put_u32(e, index);
	put_u16(e, n);
	for (uint16_t i = 0; i < n; i++) {
		uint8_t b[BID_BYTES] = { 0 };
		b[0] = ids[i].len > STREAM_BUILD_ID_MAX ? STREAM_BUILD_ID_MAX : ids[i].len;
		memcpy(b + 1, ids[i].id, b[0]);
		put_bytes(e, b, sizeof(b));
	}
	return enc_done(e, FR_MODULES);
}

int
stream_get_modules(const struct frame *f, struct fr_modules *v, char *err, size_t errlen)
{
	DEC_BEGIN(FR_MODULES);
	v->index = get_u32(d);
	v->n = get_u16(d);
	v->ids = take(d, (size_t)v->n * BID_BYTES);
	for (uint16_t i = 0; v->ids && i < v->n; i++)
		if (v->ids[(size_t)i * BID_BYTES] > STREAM_BUILD_ID_MAX)
			d->bad = "build id longer than 20 bytes";
	return dec_done(f, d, err, errlen);
}

struct fr_bid
stream_module(const struct fr_modules *v, uint16_t i)
{
	struct fr_bid b;
	const uint8_t *p = v->ids + (size_t)i * BID_BYTES;
	b.len = p[0];
	memcpy(b.id, p + 1, STREAM_BUILD_ID_MAX);
	return b;
}

/* ---- off-CPU frames ---- */

void
stream_span_pack(uint8_t *spans, uint32_t i, const struct offcpu_span *s)
{
	uint8_t *p = spans + (size_t)i * OFFCPU_SPAN_BYTES;
	st64(p, s->start);
	st64(p + 8, s->end);
	st32(p + 16, s->flags);
}

static struct offcpu_span
span_at(const uint8_t *spans, uint32_t i, uint32_t frame_flags)
{
	const uint8_t *p = spans + (size_t)i * OFFCPU_SPAN_BYTES;
	return (struct offcpu_span){ .start = ld64(p), .end = ld64(p + 8),
				     .flags = ld32(p + 16) | (frame_flags & ~OFFCPU_SPAN_FLAGS) };
}

struct offcpu_span
stream_span_unpack(const uint8_t *spans, uint32_t i)
{
	return span_at(spans, i, 0);
}

/* Interval i of a frame whose own interval is [start, end) with flags. */
static struct offcpu_span
frame_span(uint64_t start, uint64_t end, uint32_t flags, const uint8_t *more, uint32_t i)
{
	if (i == 0)
		return (struct offcpu_span){ start, end, flags };
	return span_at(more, i - 1, flags);
}

struct offcpu_span
stream_offcpu_span(const struct fr_offcpu *v, uint32_t i)
{
	return frame_span(v->start, v->end, v->flags, v->more, i);
}

struct offcpu_span
stream_offcpu_stack_span(const struct fr_offcpu_stack *v, uint32_t i)
{
	return frame_span(v->start, v->end, v->flags, v->more, i);
}

uint64_t
stream_offcpu_top(const struct fr_offcpu *v, uint32_t i, uint32_t w)
{
	return ld64(v->top + ((size_t)i * v->ntop + w) * 8);
}

/* The further intervals of an off-CPU frame, present only when there are some or when a
 * block follows them (always), so a frame of one interval keeps the layout of the first
 * version. */
static int
put_spans(struct enc *e, uint32_t n, const uint8_t *spans, int always)
{
	if (n == 0 && !always)
		return 0;
	if (n > STREAM_MAX_SPANS) {
		snprintf(e->w->err, sizeof(e->w->err), "off-CPU frame with more than %d intervals",
			 STREAM_MAX_SPANS + 1);
		return -1;
	}
	put_u32(e, n);
	put_bytes(e, spans, (size_t)n * OFFCPU_SPAN_BYTES);
	return 0;
}

int
stream_put_offcpu(struct stream_writer *w, const struct fr_offcpu *v)
{
	ENC_BEGIN();
	if ((unsigned)v->nkernel + v->nuser > STREAM_MAX_IPS) {
		snprintf(w->err, sizeof(w->err), "off-CPU interval with more than %d addresses",
			 STREAM_MAX_IPS);
		return -1;
	}
	put_u64(e, v->start);
	put_u64(e, v->end);
	put_u32(e, v->pid);
	put_u32(e, v->tid);
	put_u32(e, v->cpu);
	put_u32(e, v->phase);
	put_u32(e, v->flags);
	put_u16(e, v->nkernel);
	put_u16(e, v->nuser);
	for (unsigned i = 0; i < (unsigned)v->nkernel + v->nuser; i++)
		put_u64(e, v->ips[i]);
	if (put_spans(e, v->nmore, v->more, v->ntop > 0) < 0)
		return -1;
	if (v->ntop > 0) {
		if (v->ntop > STREAM_MAX_TOP) {
			snprintf(w->err, sizeof(w->err), "off-CPU frame with more than %d stack words",
				 STREAM_MAX_TOP);
			return -1;
		}
		put_u32(e, v->ntop);
		put_bytes(e, v->top, ((size_t)v->nmore + 1) * v->ntop * 8);
	}
	if (v->nstack > 0) {
		if (v->ntop == 0 || v->nmore > 0 || v->nstack > STREAM_MAX_OFFCPU_STACK) {
			snprintf(w->err, sizeof(w->err),
				 "off-CPU stack copy without stack-top words, with further intervals "
				 "or over %d bytes", STREAM_MAX_OFFCPU_STACK);
			return -1;
		}
		put_u64(e, v->sp);
		put_u64(e, v->bp);
		put_u32(e, v->nstack);
		put_bytes(e, v->stack, v->nstack);
	}
	return enc_done(e, FR_OFFCPU);
}

static void
check_interval(struct dec *d, uint64_t start, uint64_t end, uint32_t phase)
{
	if (!d->bad && end < start)
		d->bad = "interval ends before it starts";
	if (!d->bad && (phase < PHASE_BLOCKED || phase > PHASE_YIELDED))
		d->bad = "unknown off-CPU phase";
}

/* The spans after a frame's known fields, when there are bytes for a count. */
static const uint8_t *
get_spans(struct dec *d, uint32_t *n)
{
	*n = 0;
	if (d->bad || d->len - d->pos < 4)
		return NULL;
	uint32_t count = get_u32(d);
	if (count > STREAM_MAX_SPANS) {
		d->bad = "too many off-CPU intervals";
		return NULL;
	}
	const uint8_t *p = take(d, (size_t)count * OFFCPU_SPAN_BYTES);
	for (uint32_t i = 0; p && i < count; i++) {
		struct offcpu_span s = span_at(p, i, 0);
		if (s.end < s.start) {
			d->bad = "interval ends before it starts";
			return NULL;
		}
		if (s.flags & ~OFFCPU_SPAN_FLAGS) {
			d->bad = "unknown off-CPU interval flags";
			return NULL;
		}
	}
	if (p)
		*n = count;
	return p;
}

int
stream_get_offcpu(const struct frame *f, struct fr_offcpu *v, char *err, size_t errlen)
{
	DEC_BEGIN(FR_OFFCPU);
	v->start = get_u64(d);
	v->end = get_u64(d);
	v->pid = get_u32(d);
	v->tid = get_u32(d);
	v->cpu = get_u32(d);
	v->phase = get_u32(d);
	v->flags = get_u32(d);
	v->nkernel = get_u16(d);
	v->nuser = get_u16(d);
	check_interval(d, v->start, v->end, v->phase);
	if (!d->bad && (unsigned)v->nkernel + v->nuser > STREAM_MAX_IPS)
		d->bad = "too many addresses";
	const uint8_t *p = d->bad ? NULL : take(d, ((size_t)v->nkernel + v->nuser) * 8);
	for (unsigned i = 0; p && i < (unsigned)v->nkernel + v->nuser; i++) {
		uint64_t x = 0;
		for (int b = 0; b < 8; b++)
			x |= (uint64_t)p[i * 8 + b] << (8 * b);
		v->ips[i] = x;
	}
	v->more = get_spans(d, &v->nmore);
	v->ntop = 0;
	v->top = NULL;
	if (!d->bad && d->len - d->pos >= 4) {
		v->ntop = get_u32(d);
		if (v->ntop == 0 || v->ntop > STREAM_MAX_TOP)
			d->bad = "bad count of stack words";
		else
			v->top = take(d, ((size_t)v->nmore + 1) * v->ntop * 8);
	}
	v->sp = v->bp = 0;
	v->nstack = 0;
	v->stack = NULL;
	if (!d->bad && v->ntop && d->len - d->pos >= 20) {
		v->sp = get_u64(d);
		v->bp = get_u64(d);
		uint32_t n = get_u32(d);
		if (n == 0 || n > STREAM_MAX_OFFCPU_STACK || v->nmore > 0)
			d->bad = "bad off-CPU stack copy";
		else if ((v->stack = take(d, n)))
			v->nstack = n;
	}
	return dec_done(f, d, err, errlen);
}

int
stream_put_offcpu_stack(struct stream_writer *w, const struct fr_offcpu_stack *v)
{
	ENC_BEGIN();
	if (v->nlocs > STREAM_MAX_LOCS) {
		snprintf(w->err, sizeof(w->err), "stack with too many locations");
		return -1;
	}
	put_u64(e, v->start);
	put_u64(e, v->end);
	put_u32(e, v->pid);
	put_u32(e, v->tid);
	put_u32(e, v->cpu);
	put_u32(e, v->phase);
	put_u32(e, v->flags);
	put_u32(e, v->stack_flags);
	put_locs(e, v->nlocs, v->locs);
	if (put_spans(e, v->nmore, v->more, 0) < 0)
		return -1;
	return enc_done(e, FR_OFFCPU_STACK);
}

int
stream_get_offcpu_stack(const struct frame *f, struct fr_offcpu_stack *v, char *err,
			size_t errlen)
{
	DEC_BEGIN(FR_OFFCPU_STACK);
	v->start = get_u64(d);
	v->end = get_u64(d);
	v->pid = get_u32(d);
	v->tid = get_u32(d);
	v->cpu = get_u32(d);
	v->phase = get_u32(d);
	v->flags = get_u32(d);
	v->stack_flags = get_u32(d);
	check_interval(d, v->start, v->end, v->phase);
	v->nlocs = get_locs(d, v->locs);
	v->more = get_spans(d, &v->nmore);
	return dec_done(f, d, err, errlen);
}

int
stream_put_window_offcpu_stack(struct stream_writer *w, const struct fr_window_stack *v)
{
	ENC_BEGIN();
	if (v->nlocs > STREAM_MAX_LOCS) {
		snprintf(w->err, sizeof(w->err), "stack with too many locations");
		return -1;
	}
	put_u32(e, v->index);
	put_u32(e, v->pid);
	put_u32(e, v->tid);
	put_u64(e, v->count);
	put_u64(e, v->nanos);
	put_locs(e, v->nlocs, v->locs);
	return enc_done(e, FR_WINDOW_OFFCPU_STACK);
}

int
stream_get_window_offcpu_stack(const struct frame *f, struct fr_window_stack *v, char *err,
			       size_t errlen)
{
	DEC_BEGIN(FR_WINDOW_OFFCPU_STACK);
	v->index = get_u32(d);
	v->pid = get_u32(d);
	v->tid = get_u32(d);
	v->count = get_u64(d);
	v->nanos = get_u64(d);
	v->nlocs = get_locs(d, v->locs);
	return dec_done(f, d, err, errlen);
}

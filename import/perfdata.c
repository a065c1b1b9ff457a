/*
 * perf.data containers: the 104-byte file header with its attribute, data and feature
 * sections, or the 16-byte pipe header followed by records that carry the same metadata
 * in-band.  Every offset and size is checked against the bytes that exist before use.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

#include "import.h"

#define PERF_MAGIC 0x32454c4946524550ull /* "PERFILE2" read little-endian */
#define FILE_HEADER 104
#define PIPE_HEADER 16

enum {
	REC_HEADER_ATTR = 64,
	REC_TRACING_DATA = 66,
	REC_BUILD_ID = 67,
	REC_FINISHED_ROUND = 68,
	REC_AUXTRACE = 71,
	REC_HEADER_FEATURE = 80,
	REC_COMPRESSED = 81,
	REC_FINISHED_INIT = 82,
	REC_COMPRESSED2 = 83,
	REC_SIMPLEPERF = 32768,
	REC_SP_EVENT_ID = 32774,
};

size_t
perfdata_record_size(const struct imp *m, const uint8_t *r, uint32_t *type)
{
	*type = bo32(m->bo, r);
	size_t size = bo16(m->bo, r + 6);
	/* simpleperf's private records keep the high half of their size in misc. */
	if (*type >= REC_SIMPLEPERF && m->format != FMT_PERF)
		size |= (size_t)bo16(m->bo, r + 4) << 16;
	return size < 8 || size > IMP_REC_MAX ? 0 : size;
}

static int
header_attr(struct imp *m, const uint8_t *r, size_t size, uint64_t off)
{
	if (m->nattrs == IMP_MAX_ATTRS)
		return imp_fail(m, off, "more than %d event attributes", IMP_MAX_ATTRS);
	if (size < 8 + 64)
		return imp_fail(m, off, "attribute record of %zu bytes is too short", size);
	size_t asize = bo32(m->bo, r + 12);
	if (asize < 64 || asize > size - 8)
		return imp_fail(m, off, "attribute size %zu does not fit its record", asize);
	struct attr *a = &m->attrs[m->nattrs];
	if (attr_parse(m, r + 8, asize, off + 8, a) < 0)
		return -1;
	for (size_t o = 8 + asize; o + 8 <= size; o += 8)
		if (ids_add(m, bo64(m->bo, r + o), (uint32_t)m->nattrs) < 0)
			return imp_fail(m, off, "out of memory");
	m->nattrs++;
	return 0;
}

/* The attrs are complete at the first kernel record.  Until the default event is chosen
 * (pipe mode: when the first sample is due) the samples read are counted for the choice. */
static int
kernel_record(struct imp *m, uint32_t type, const uint8_t *r, size_t size, uint64_t off)
{
	if ((!m->prepared && events_prepare(m) < 0) || (!m->opened && out_open(m) < 0))
		return -1;
	if (type == PERF_RECORD_SAMPLE && m->chosen < 0 && !m->counted)
		records_count_sample(m, r, size);
	return order_push(m, records_time(m, type, r, size), r, size, off);
}

static int
compressed(struct imp *m, uint32_t type, const uint8_t *r, size_t size, uint64_t off)
{
	if (m->in_z)
		return imp_fail(m, off, "compressed record inside compressed data");
	size_t hdr = type == REC_COMPRESSED ? 8 : 16;
	if (size < hdr)
		return imp_fail(m, off, "compressed record of %zu bytes is too short", size);
	size_t n = size - hdr;
	if (type == REC_COMPRESSED2 && bo64(m->bo, r + 8) <= n)
		n = (size_t)bo64(m->bo, r + 8); /* the rest is padding to 8 bytes */
	else if (type == REC_COMPRESSED2)
		return imp_fail(m, off, "compressed data size exceeds its record");
	return zstd_feed(m, r + hdr, n, off);
}

/* The counting pass (file mode, several events): samples, and what reaches them. */
static int
count_record(struct imp *m, uint32_t type, const uint8_t *r, size_t size, uint64_t off)
{
	if (type == PERF_RECORD_SAMPLE)
		records_count_sample(m, r, size);
	else if (type == REC_COMPRESSED || type == REC_COMPRESSED2)
		return compressed(m, type, r, size, off);
	else if (type == REC_SP_EVENT_ID && m->format != FMT_PERF)
		return simpleperf_record(m, type, r, size, off);
	return 0;
}

int
perfdata_record(struct imp *m, const uint8_t *r, size_t size, uint64_t off)
{
	uint32_t type = bo32(m->bo, r);
	if (m->counting)
		return count_record(m, type, r, size, off);
	if (type < REC_HEADER_ATTR)
		return kernel_record(m, type, r, size, off);
	if (type >= REC_SIMPLEPERF) {
		if (type == REC_SP_EVENT_ID && m->counted)
			return 0; /* its ids were added by the counting pass */
		return m->format == FMT_PERF ? (records_skip(m, type), 0)
					     : simpleperf_record(m, type, r, size, off);
	}
	switch (type) {
	case REC_HEADER_ATTR:
		return header_attr(m, r, size, off);
	case REC_HEADER_FEATURE:
		if (size < 16)
			return imp_fail(m, off, "feature record of %zu bytes is too short", size);
		return features_parse(m, bo64(m->bo, r + 8), r + 16, size - 16, off + 16);
	case REC_BUILD_ID:
		return features_add_buildid(m, r, size);
	case REC_FINISHED_ROUND:
		return records_round(m);
	case REC_COMPRESSED:
	case REC_COMPRESSED2:
		return compressed(m, type, r, size, off);
	default:
		/* 65-82: perf's own metadata (id index, thread and cpu maps, time conversion,
		 * stat, auxtrace) that a CPU profile does not use. */
		if (type > REC_FINISHED_INIT)
			records_skip(m, type);
		return 0;
	}
}

/* Bytes that follow some pipe records outside their size: tracing data, AUX trace. */
static uint64_t
pipe_payload(const struct imp *m, uint32_t type, const uint8_t *r, size_t size)
{
	if (type == REC_TRACING_DATA && size >= 12)
		return ((uint64_t)bo32(m->bo, r + 8) + 7) & ~7ull;
	if (type == REC_AUXTRACE && size >= 16)
		return bo64(m->bo, r + 8);
	return 0;
}

static int
all_text(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((p[i] < 0x20 || p[i] > 0x7e) && p[i] != '\n' && p[i] != '\t' && p[i] != '\r')
			return 0;
	return 1;
}

/* perf record -o - > file may end with perf's own banner text: note it and stop there. */
static int
pipe_tail(struct imp *m, uint64_t off, int *done)
{
	size_t left;
	*done = 1;
	if (m->src.fd >= 0) {
		/* Read up to a banner's worth: more than that is no banner. */
		(void)src_get(&m->src, off, 4097);
		left = m->src.base == off ? m->src.size : 0;
	} else {
		left = off < m->src.size ? m->src.size - (size_t)off : 0;
	}
	if (left == 0)
		return 0;
	const uint8_t *p = src_get(&m->src, off, left);
	if (!p || left > 4096 || !all_text(p, left))
		return imp_fail(m, off, "truncated or corrupt record (%zu bytes left)", left);
	imp_note(m, "ignored %zu bytes of text after the last record at offset %llu", left,
		 (unsigned long long)off);
	return 0;
}

static int
pipe_run(struct imp *m)
{
	uint64_t off = PIPE_HEADER;
	for (;;) {
		uint32_t type;
		size_t size = 0;
		const uint8_t *r = src_get(&m->src, off, 8);
		if (r)
			size = perfdata_record_size(m, r, &type);
		if (size && (r = src_get(&m->src, off, size)) != NULL) {
			uint64_t extra = pipe_payload(m, type, r, size);
			if (perfdata_record(m, r, size, off) < 0)
				return -1;
			off += size;
			if (extra && !src_get(&m->src, off + extra - 1, 1))
				return imp_fail(m, off, "record payload runs past the end");
			off += extra;
			continue;
		}
		int done;
		if (pipe_tail(m, off, &done) < 0 || done)
			return m->err[0] ? -1 : 0;
	}
}

struct section {
	uint64_t off, size;
};

static int
section_at(struct imp *m, const uint8_t *p, uint64_t at, const char *what, struct section *s)
{
	s->off = bo64(m->bo, p);
	s->size = bo64(m->bo, p + 8);
	if (s->off > m->src.size || s->size > m->src.size - s->off)
		return imp_fail(m, at, "%s section [%llu, +%llu) lies past the end of the file "
				"(%zu bytes): truncated", what, (unsigned long long)s->off,
				(unsigned long long)s->size, m->src.size);
	return 0;
}

static int
file_attrs(struct imp *m, const uint8_t *h)
{
	struct section as, ids;
	uint64_t esize = bo64(m->bo, h + 16);
	if (section_at(m, h + 24, 24, "attribute", &as) < 0)
		return -1;
	if (esize < 16 + 64 || esize > 16 + 4096)
		return imp_fail(m, 16, "attribute entry size %llu is out of range",
				(unsigned long long)esize);
	if (as.size % esize || as.size / esize > IMP_MAX_ATTRS || as.size == 0)
		return imp_fail(m, 32, "attribute section of %llu bytes does not hold 1 to %d "
				"entries of %llu", (unsigned long long)as.size, IMP_MAX_ATTRS,
				(unsigned long long)esize);
	for (uint64_t o = as.off; o < as.off + as.size; o += esize) {
		const uint8_t *e = m->src.map + o;
		struct attr *a = &m->attrs[m->nattrs];
		if (attr_parse(m, e, esize - 16, o, a) < 0 ||
		    section_at(m, e + esize - 16, o + esize - 16, "event id", &ids) < 0)
			return -1;
		for (uint64_t i = 0; i + 8 <= ids.size; i += 8)
			if (ids_add(m, bo64(m->bo, m->src.map + ids.off + i), (uint32_t)m->nattrs) < 0)
				return imp_fail(m, o, "out of memory");
		m->nattrs++;
	}
	return 0;
}

static int
file_features(struct imp *m, const uint8_t *h, const struct section *data)
{
	uint64_t idx = data->off + data->size;
	for (unsigned bit = 0; bit < 256; bit++) {
		if (!(bo64(m->bo, h + 72 + 8 * (bit / 64)) & (1ull << (bit % 64))))
			continue;
		const uint8_t *e = src_get(&m->src, idx, 16);
		struct section s;
		if (!e)
			return imp_fail(m, idx, "feature index runs past the end of the file: truncated");
		if (section_at(m, e, idx, "feature", &s) < 0 ||
		    features_parse(m, bit, m->src.map + s.off, (size_t)s.size, s.off) < 0)
			return -1;
		idx += 16;
	}
	return 0;
}

static int
file_records(struct imp *m, const struct section *data)
{
	for (uint64_t off = data->off, end = data->off + data->size; off < end;) {
		uint32_t type;
		size_t size = end - off >= 8 ? perfdata_record_size(m, m->src.map + off, &type) : 0;
		if (size == 0)
			return imp_fail(m, off, "corrupt record header");
		if (size > end - off)
			return imp_fail(m, off, "record of %zu bytes runs past the data section", size);
		if (perfdata_record(m, m->src.map + off, size, off) < 0)
			return -1;
		off += size;
		src_done(&m->src, off);
	}
	return 0;
}

/* A file is read twice when it has several events and no --event: first to count each
 * event's samples, so the default is one that has them (events.c), then to import. */
static int
file_count(struct imp *m, const struct section *data)
{
	m->counting = 1;
	int rc = file_records(m, data);
	m->counting = 0;
	if (rc < 0 || zstd_finish(m) < 0)
		return -1;
	zstd_release(m);
	m->counted = 1;
	m->src.released = 0;
	return events_choose(m);
}

static int
file_run(struct imp *m)
{
	const uint8_t *h = src_get(&m->src, 0, FILE_HEADER);
	struct section data;
	if (m->src.fd >= 0)
		return imp_fail(m, 0, "a file-mode capture must be a regular file, not a pipe");
	if (!h)
		return imp_fail(m, 0, "file header is truncated");
	if (section_at(m, h + 40, 40, "data", &data) < 0 || file_attrs(m, h) < 0 ||
	    file_features(m, h, &data) < 0)
		return -1;
	kallsyms_begin(m);
	if (m->nattrs > 1 && !m->want_event && file_count(m, &data) < 0)
		return -1;
	return file_records(m, &data);
}

int
perfdata_run(struct imp *m)
{
	const uint8_t *p = src_get(&m->src, 0, PIPE_HEADER);
	uint64_t magic;
	if (!p)
		return imp_fail(m, 0, "too short for a perf.data header");
	memcpy(&magic, p, 8);
	if (magic != PERF_MAGIC && __builtin_bswap64(magic) != PERF_MAGIC)
		return imp_fail(m, 0, "not a perf.data or simpleperf capture (no PERFILE2 magic)");
	m->bo.swap = magic != PERF_MAGIC;
	uint64_t hsize = bo64(m->bo, p + 8);
	if (hsize != PIPE_HEADER && hsize < FILE_HEADER)
		return imp_fail(m, 8, "header size %llu is neither 16 (pipe) nor 104 (file)",
				(unsigned long long)hsize);
	m->pipe_mode = hsize == PIPE_HEADER;
	if (m->pipe_mode && m->format == FMT_SIMPLEPERF)
		return imp_fail(m, 8, "simpleperf writes no pipe-mode captures");
	int rc = m->pipe_mode ? pipe_run(m) : file_run(m);
	if (rc < 0 || zstd_finish(m) < 0)
		return -1;
	return records_finish(m);
}

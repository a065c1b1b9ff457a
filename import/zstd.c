/*
 * PERF_RECORD_COMPRESSED and COMPRESSED2: zstd frames whose concatenated output is an
 * ordinary record stream.  A record may straddle two compressed records, so the output is
 * one continuous buffer: complete records are handled as soon as they are there, and the
 * unfinished tail waits for the next compressed record.  The buffer holds at most one
 * record plus one decompression step, whatever the capture's size.
 */
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "import.h"

#define ZSTEP (256u << 10)

static int
grow(struct imp *m, size_t need)
{
	if (m->zcap - m->zlen >= need)
		return 0;
	size_t cap = m->zlen + need;
	uint8_t *b = realloc(m->zbuf, cap);
	if (!b)
		return -1;
	m->zbuf = b;
	m->zcap = cap;
	return 0;
}

/* Handles every complete record at the start of the buffer and keeps the rest. */
static int
drain(struct imp *m, uint64_t off)
{
	size_t pos = 0;
	while (m->zlen - pos >= 8) {
		uint32_t type;
		size_t size = perfdata_record_size(m, m->zbuf + pos, &type);
		if (size == 0)
			return imp_fail(m, off, "corrupt record header at byte %zu of the "
					"decompressed data", pos);
		if (size > m->zlen - pos)
			break;
		if (perfdata_record(m, m->zbuf + pos, size, off) < 0)
			return -1;
		pos += size;
	}
	memmove(m->zbuf, m->zbuf + pos, m->zlen - pos);
	m->zlen -= pos;
	return 0;
}

int
zstd_feed(struct imp *m, const uint8_t *p, size_t n, uint64_t off)
{
	if (!m->zctx && !(m->zctx = ZSTD_createDCtx()))
		return imp_fail(m, off, "out of memory");
	ZSTD_inBuffer in = { p, n, 0 };
	int full = 1;
	m->in_z = 1;
	m->zoff = off;
	while (in.pos < in.size || full) {
		if (grow(m, ZSTEP) < 0) {
			m->in_z = 0;
			return imp_fail(m, off, "out of memory");
		}
		ZSTD_outBuffer out = { m->zbuf + m->zlen, m->zcap - m->zlen, 0 };
		size_t rc = ZSTD_decompressStream(m->zctx, &out, &in);
		if (ZSTD_isError(rc)) {
			m->in_z = 0;
			return imp_fail(m, off, "corrupt compressed record: %s",
					ZSTD_getErrorName(rc));
		}
		m->zlen += out.pos;
		full = out.pos == out.size;
		if (drain(m, off) < 0) {
			m->in_z = 0;
			return -1;
		}
		if (out.pos == 0 && in.pos == in.size)
			break;
	}
	m->in_z = 0;
	return 0;
}

int
zstd_finish(struct imp *m)
{
	if (m->zlen)
		return imp_fail(m, m->zoff, "compressed data ends inside a record (%zu bytes "
				"left over)", m->zlen);
	return 0;
}

void
zstd_release(struct imp *m)
{
	ZSTD_freeDCtx(m->zctx);
	m->zctx = NULL;
}

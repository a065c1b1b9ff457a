/*
 * Event attributes, event ids and perf's feature sections: the build-id table, the OS
 * release and arch strings, event names and the clock reference.  Feature payloads are the
 * same in a file's feature sections and in a pipe's HEADER_FEATURE records.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"

enum {
	FEAT_BUILD_ID = 2,
	FEAT_OSRELEASE = 4,
	FEAT_ARCH = 6,
	FEAT_EVENT_DESC = 12,
	FEAT_PMU_MAPPINGS = 16,
	FEAT_CLOCK_DATA = 29,
	FEAT_SP_FILE = 128,
	FEAT_SP_META_INFO = 129,
};

#define MISC_BUILD_ID_SIZE 0x8000

int
attr_parse(struct imp *m, const uint8_t *p, size_t n, uint64_t off, struct attr *a)
{
	if (n < 64)
		return imp_fail(m, off, "event attribute of %zu bytes is too short", n);
	memset(a, 0, sizeof(*a));
	a->type = bo32(m->bo, p);
	a->size = bo32(m->bo, p + 4);
	a->config = bo64(m->bo, p + 8);
	a->period = bo64(m->bo, p + 16);
	a->sample_type = bo64(m->bo, p + 24);
	a->read_format = bo64(m->bo, p + 32);
	a->flags = bo_flags(m->bo, p + 40);
	/* Fields of later attr versions: absent in older captures. */
	a->branch_sample_type = n >= 80 ? bo64(m->bo, p + 72) : 0;
	a->sample_regs_user = n >= 96 ? bo64(m->bo, p + 80) : 0;
	a->sample_stack_user = n >= 96 ? bo32(m->bo, p + 88) : 0;
	a->clockid = n >= 96 ? (int32_t)bo32(m->bo, p + 92) : -1;
	uint64_t st = a->sample_type;
#define N(bits) (8 * __builtin_popcountll(st & (bits)))
	a->time_at = (uint16_t)(8 + N(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID));
	a->id_at = (uint16_t)((st & PERF_SAMPLE_IDENTIFIER) ? 8 : (st & PERF_SAMPLE_ID) ?
			      8 + N(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				    PERF_SAMPLE_ADDR) : 0);
	a->sid_size = (uint16_t)N(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
				  PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER);
	a->ip_at = (uint16_t)(8 + N(PERF_SAMPLE_IDENTIFIER));
	a->tid_at = (uint16_t)(a->ip_at + N(PERF_SAMPLE_IP));
	a->cpu_at = (uint16_t)(a->time_at + N(PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
					      PERF_SAMPLE_STREAM_ID));
	a->period_at = (uint16_t)(a->cpu_at + N(PERF_SAMPLE_CPU));
	a->fixed_end = (uint16_t)(a->period_at + N(PERF_SAMPLE_PERIOD));
#undef N
	return 0;
}

int
ids_add(struct imp *m, uint64_t id, uint32_t attr)
{
	if (m->nids == m->capids) {
		size_t cap = m->capids ? 2 * m->capids : 64;
		struct idmap *v = realloc(m->ids, cap * sizeof(*v));
		if (!v)
			return -1;
		m->ids = v;
		m->capids = cap;
	}
	m->ids[m->nids++] = (struct idmap){ id, attr };
	m->ids_sorted = 0;
	return 0;
}

static int
id_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct idmap *)a)->id, y = ((const struct idmap *)b)->id;
	return x < y ? -1 : x > y;
}

int
ids_find(struct imp *m, uint64_t id)
{
	if (!m->ids_sorted) {
		if (m->nids) /* a capture without ids has no array to sort */
			qsort(m->ids, m->nids, sizeof(*m->ids), id_cmp);
		m->ids_sorted = 1;
	}
	struct idmap key = { id, 0 };
	const struct idmap *f = m->nids ? bsearch(&key, m->ids, m->nids, sizeof(key), id_cmp)
					: NULL;
	return f ? (int)f->attr : -1;
}

/* The generic name of a hardware or software event (cycles, cpu-clock), or NULL. */
const char *
attr_generic_name(const struct attr *a, char *buf, size_t n)
{
	static const char *const hw[] = { "cycles", "instructions", "cache-references",
					  "cache-misses", "branches", "branch-misses",
					  "bus-cycles", "stalled-cycles-frontend",
					  "stalled-cycles-backend", "ref-cycles" };
	static const char *const sw[] = { "cpu-clock", "task-clock", "page-faults",
					  "context-switches", "cpu-migrations",
					  "minor-faults", "major-faults", "alignment-faults",
					  "emulation-faults", "dummy", "bpf-output",
					  "cgroup-switches" };
	if (a->type == 0 && a->config < sizeof(hw) / sizeof(hw[0]))
		snprintf(buf, n, "%s", hw[a->config]);
	else if (a->type == 1 && a->config < sizeof(sw) / sizeof(sw[0]))
		snprintf(buf, n, "%s", sw[a->config]);
	else
		return NULL;
	return buf;
}

static const char *
pmu_name(const struct imp *m, uint32_t type, char *buf, size_t n)
{
	for (size_t i = 0; i < m->npmus; i++)
		if (m->pmus[i].type == type)
			return m->pmus[i].name;
	snprintf(buf, n, "pmu%u", type);
	return buf;
}

/* The name perf would print without EVENT_DESC: a hybrid PMU's generic event (the PMU
 * type in config's high half, PERF_PMU_TYPE_SHIFT) as "cpu_core/cycles/", the PMU from
 * PMU_MAPPINGS. */
const char *
attr_default_name(const struct imp *m, const struct attr *a, char *buf, size_t n)
{
	char pb[16], gb[32];
	uint32_t pmu = (a->type == 0 || a->type == 3) ? (uint32_t)(a->config >> 32) : 0;
	struct attr plain = *a;
	plain.config &= 0xffffffffull;
	if (pmu && a->type == 0 && attr_generic_name(&plain, gb, sizeof(gb)))
		snprintf(buf, n, "%s/%s/", pmu_name(m, pmu, pb, sizeof(pb)), gb);
	else if (pmu)
		snprintf(buf, n, "%s/config=%#llx/", pmu_name(m, pmu, pb, sizeof(pb)),
			 (unsigned long long)plain.config);
	else if (attr_generic_name(a, buf, n))
		;
	else if (a->type == 2)
		snprintf(buf, n, "tracepoint:%llu", (unsigned long long)a->config);
	else if (a->type >= 6)
		snprintf(buf, n, "%s/config=%#llx/", pmu_name(m, a->type, pb, sizeof(pb)),
			 (unsigned long long)a->config);
	else
		snprintf(buf, n, "event:%u:%#llx", a->type, (unsigned long long)a->config);
	return buf;
}

/* perf_header_string: u32 len, then len bytes holding a NUL-terminated string. */
static int
get_string(struct imp *m, const uint8_t *p, size_t n, uint64_t off, char *dst, size_t dn,
	   size_t *used)
{
	if (n < 4 || bo32(m->bo, p) > n - 4)
		return imp_fail(m, off, "feature string runs past its section");
	size_t len = bo32(m->bo, p);
	size_t s = strnlen((const char *)p + 4, len);
	snprintf(dst, dn, "%.*s", (int)s, (const char *)p + 4);
	*used = 4 + len;
	return 0;
}

static int
event_desc(struct imp *m, const uint8_t *p, size_t n, uint64_t off)
{
	if (n < 8)
		return imp_fail(m, off, "event description section is too short");
	size_t nr = bo32(m->bo, p), asz = bo32(m->bo, p + 4), o = 8;
	for (size_t i = 0; i < nr; i++) {
		char name[64];
		size_t used;
		if (asz > n - o || n - o - asz < 4)
			return imp_fail(m, off + o, "event description runs past its section");
		o += asz;
		size_t nids = bo32(m->bo, p + o);
		o += 4;
		if (get_string(m, p + o, n - o, off + o, name, sizeof(name), &used) < 0)
			return -1;
		o += used;
		if (nids > (n - o) / 8)
			return imp_fail(m, off + o, "event description ids run past its section");
		o += 8 * nids;
		if (i < m->nattrs)
			snprintf(m->attrs[i].name, sizeof(m->attrs[i].name), "%s", name);
	}
	return 0;
}

/* u32 nr, then nr × {u32 type, perf_header_string name}.  Only names: a section that does
 * not parse is left (the events keep numbered PMU names), not fatal. */
static int
pmu_mappings(struct imp *m, const uint8_t *p, size_t n)
{
	size_t nr = n >= 4 ? bo32(m->bo, p) : 0, o = 4;
	for (size_t i = 0; i < nr && m->npmus < IMP_MAX_PMUS && n - o >= 8; i++) {
		uint32_t type = bo32(m->bo, p + o), len = bo32(m->bo, p + o + 4);
		if (len > n - o - 8)
			break;
		struct pmu *u = &m->pmus[m->npmus++];
		u->type = type;
		snprintf(u->name, sizeof(u->name), "%.*s",
			 (int)strnlen((const char *)p + o + 8, len), (const char *)p + o + 8);
		o += 8 + len;
	}
	return 0;
}

static uint32_t
path_hash(const char *p, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)p[i]) * 16777619u;
	return h % (sizeof(((struct imp *)0)->bids) / sizeof(((struct imp *)0)->bids[0]));
}

int
features_zero_id(const uint8_t *id, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (id[i])
			return 0;
	return 1;
}

/* header, s32 pid, u8 build_id[20], u8 size, u8 pad[3], char filename[]. */
int
features_add_buildid(struct imp *m, const uint8_t *r, size_t size)
{
	if (size <= 36)
		return 0;
	size_t plen = strnlen((const char *)r + 36, size - 36);
	struct buildid *b = malloc(sizeof(*b) + plen + 1);
	if (!b)
		return imp_fail(m, 0, "out of memory");
	b->len = (bo16(m->bo, r + 4) & MISC_BUILD_ID_SIZE) && r[32] <= 20 ? r[32] : 20;
	memcpy(b->id, r + 12, 20);
	/* Zeros are no build id (simpleperf writes them for files it could not read): taken
	 * for one, they would make every such file the same module. */
	if (features_zero_id(r + 12, 20)) {
		free(b);
		return 0;
	}
	/* Without the size flag (older perf, simpleperf) a 16-byte id (MD5, UUID) is padded
	 * to 20 with zeros; a real 20-byte id ends in four zero bytes once in 2^32. */
	if (b->len == 20 && !(bo16(m->bo, r + 4) & MISC_BUILD_ID_SIZE) &&
	    !memcmp(b->id + 16, "\0\0\0\0", 4))
		b->len = 16;
	memcpy(b->path, r + 36, plen);
	b->path[plen] = 0;
	uint32_t h = path_hash(b->path, plen);
	b->next = m->bids[h];
	m->bids[h] = b;
	return 0;
}

const struct buildid *
features_find_buildid(const struct imp *m, const char *path, size_t n)
{
	for (const struct buildid *b = m->bids[path_hash(path, n)]; b; b = b->next)
		if (strlen(b->path) == n && memcmp(b->path, path, n) == 0)
			return b;
	return NULL;
}

static int
build_ids(struct imp *m, const uint8_t *p, size_t n, uint64_t off)
{
	for (size_t o = 0; o + 8 <= n;) {
		size_t size = bo16(m->bo, p + o + 6);
		if (size < 8 || size > n - o)
			return imp_fail(m, off + o, "build-id entry of %zu bytes is corrupt", size);
		if (features_add_buildid(m, p + o, size) < 0)
			return -1;
		o += size;
	}
	return 0;
}

/* u32 version, u32 clockid, u64 wall_clock_ns, u64 clockid_time_ns. */
static void
clock_data(struct imp *m, const uint8_t *p, size_t n)
{
	if (n < 24)
		return;
	m->clockid = bo32(m->bo, p + 4);
	m->clock_offset = (int64_t)(bo64(m->bo, p + 8) - bo64(m->bo, p + 16));
	m->have_clock_data = 1;
}

int
features_parse(struct imp *m, uint64_t feat, const uint8_t *p, size_t n, uint64_t off)
{
	size_t used;
	switch (feat) {
	case FEAT_BUILD_ID:
		return build_ids(m, p, n, off);
	case FEAT_OSRELEASE:
		return get_string(m, p, n, off, m->osrelease, sizeof(m->osrelease), &used);
	case FEAT_ARCH:
		return get_string(m, p, n, off, m->arch, sizeof(m->arch), &used);
	case FEAT_EVENT_DESC:
		return event_desc(m, p, n, off);
	case FEAT_PMU_MAPPINGS:
		return pmu_mappings(m, p, n);
	case FEAT_CLOCK_DATA:
		clock_data(m, p, n);
		return 0;
	case FEAT_SP_FILE:
		if (m->format == FMT_PERF)
			return 0;
		m->simpleperf = 1;
		return simpleperf_file_section(m, p, n, off);
	case FEAT_SP_META_INFO:
		if (m->format == FMT_PERF)
			return 0;
		m->simpleperf = 1;
		return simpleperf_meta_info(m, p, n);
	default:
		return 0; /* hostname, cmdline, topology...: nothing the windows need */
	}
}

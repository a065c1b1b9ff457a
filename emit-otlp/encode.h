/*
 * One window as one ExportProfilesServiceRequest (opentelemetry-proto v1.11.0): one
 * Profile per pprof sample type of each of the window's profiles, all sharing one
 * dictionary (dict.h), under one Resource and one InstrumentationScope.
 *
 * The encoder knows no profile kind: a source is a set of window stacks (lib/winmodel.h)
 * with its sample types, a function giving each stack's value of each type, and its period,
 * so a new kind (heap, with its four sample types) is one more source.  The timestamped CPU
 * timeline (lib/timeline.h, --timeline) is a source of its own: one cpu/nanoseconds Profile
 * whose samples carry aligned values and timestamps_unix_nano.
 */
#ifndef EO_ENCODE_H
#define EO_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "dict.h"
#include "pbtypes.h"
#include "timeline.h"
#include "winmodel.h"

#define ENCODE_MAX_VALUES 4     /* sample types of one source */
#define ENCODE_MAX_SOURCES 4
#define ENCODE_MAX_PROFILES (ENCODE_MAX_SOURCES * ENCODE_MAX_VALUES + 1)

struct encode_vt {
	const char *type, *unit;
};

struct encode_source {
	const struct wset *set;
	unsigned nvalues;
	struct encode_vt vt[ENCODE_MAX_VALUES];
	uint64_t (*value)(const struct wstack *s, unsigned i);
	struct encode_vt period_type;   /* type NULL: none */
	int64_t period;
};

struct encode_window {
	const struct encode_source *src;
	unsigned nsrc;
	const struct timeline *tl;      /* NULL: no timeline profile */
	int64_t tl_period;              /* its period, cpu nanoseconds (0: none) */
	uint64_t start, end;            /* the window, stream clock */
	int64_t clock_offset_ns;
	OtResource *resource;
	OtScope *scope;
};

struct esample {
	int32_t stack;
	uint32_t nattrs;
	int32_t attrs[3];
	size_t vals;            /* first of its values (aggregated) or of its points (timeline) */
	uint32_t n;             /* timeline: points */
};

struct tlpoint {
	int32_t key[4];         /* stack, then the attributes */
	uint32_t at;            /* its place in the timeline: time order within a sample */
	int64_t value;
	uint64_t ts;
};

struct encoder {
	struct dict d;
	int32_t k_pid, k_tid, k_tname;
	struct esample *es;
	size_t nes, cap_es;
	size_t first[ENCODE_MAX_SOURCES + 2]; /* each source's first sample, the timeline's */
	int64_t *vals;
	size_t nvals, cap_vals;
	uint64_t *ts;
	size_t cap_ts;
	struct tlpoint *pts;    /* the timeline's points, sorted by sample identity */
	size_t npts, cap_pts;
	OtSample *samples, **psamples;
	size_t cap_samples;
	OtProfile profiles[ENCODE_MAX_PROFILES], *pprofiles[ENCODE_MAX_PROFILES];
	OtValueType vts[2 * ENCODE_MAX_PROFILES];
	uint8_t ids[ENCODE_MAX_PROFILES][16];
	size_t nprofiles;
	uint64_t tl_samples, tl_errors;  /* of the last window: encoded, not convertible */
	char err[200];
};

void encoder_init(struct encoder *e, const struct defs *defs);
void encoder_release(struct encoder *e);
/* A timeline sample goes in the window's request: its time is inside the window and has a
 * Unix time.  encode_count_points counts those that do and do not, as encoder_run will
 * (tl_samples, tl_errors) without encoding. */
int encode_point_ok(const struct encode_window *w, const struct tl_sample *s);
void encode_count_points(const struct encode_window *w, uint64_t *ok, uint64_t *errors);
/* Encodes w into a new buffer (*buf, *len; the caller frees it).  0, or -1 with e->err. */
int encoder_run(struct encoder *e, const struct encode_window *w, uint8_t **buf, size_t *len);

#endif

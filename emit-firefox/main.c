/*
 * emit-firefox: writes one gzip-compressed Firefox processed profile per window of the
 * framed stream, as JSON or as a JSLB container.
 *
 * Runs on the emitter skeleton (lib/emitter.h): the stream on stdin is copied to stdout
 * unchanged (tee-like), except that each window's FR_FILE goes out just before its
 * FR_WINDOW_END, the definitions and thread names kept for the whole stream.  It keeps the
 * FR_STACK frames aggregate forwards, each a timestamped sample of the next window to
 * close, up to --max-timeline-samples per window (the rest are counted and left out).  At FR_WINDOW_END it lays them out as one profile
 * (threads per PID/TID, samples in time order with CPU-time weights; with off-CPU data each
 * thread's FR_OFFCPU_STACK pieces form a track "NAME (off-CPU)" beside it, one sample per
 * piece at its start weighing its length, under the same --max-timeline-samples; with heap
 * data the sampled allocations and frees of each thread go in its nativeAllocations table,
 * fxalloc.h), writes it
 * to a fsynced temporary file in the output directory and announces it with FR_FILE, kind
 * "firefox", not required: commit renames it into place; the window's end carries the
 * timeline's counts.  A corrupt stream stops it with a one-line reason and exit status 1,
 * after removing the temporary file it was writing, if any.
 * Confined (lib/confine.h, docs/privileges.md) to files beneath the output directory.
 */
#include <err.h>
#include <string.h>
#include <time.h>

#include "defaults.h"
#include "defs.h"
#include "emitter.h"
#include "fxalloc.h"
#include "fxfile.h"
#include "fxmodel.h"
#include "parse.h"
#include "stream.h"
#include "timeline.h"

#define EM_X86_64_ 62
#define EM_AARCH64_ 183

static struct env {
	enum fx_format format;
	uint64_t max_samples;
} env = {
	.format = FX_JSON,
	.max_samples = RP_DEFAULT_MAX_TIMELINE_SAMPLES,
};

struct state {
	struct timeline tl;
	struct fxalloc fa;
	struct fxmodel model;
	uint32_t last_index;    /* of the window written last, when have_index */
	int have_index;
};

static struct state s;

static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

static void
fill_meta(const struct emitter *e, const struct fr_window_end *we, struct fxmeta *mt)
{
	const struct defs *d = &e->defs;

	*mt = (struct fxmeta){
		.start = we->start, .end = we->end, .clock_offset_ns = e->hdr.clock_offset_ns,
		.monotonic = e->hdr.clockid == CLOCK_MONOTONIC,
		.cpu_frequency = d->cpu_frequency, .defs = d,
		.arch = e->hdr.e_machine == EM_X86_64_ ? "x86_64"
			: e->hdr.e_machine == EM_AARCH64_ ? "aarch64" : NULL,
	};
	mt->product = d->comm.len ? defs_str(d, d->comm)
		      : d->exe.len ? base_name(defs_str(d, d->exe)) : "rustprofile";
}

/* Writes the window's profile to a new file, or gives the window up. */
static void
write_window(struct emitter *e, const struct fr_window_end *we)
{
	struct fxmeta mt;
	char why[300];

	if (fxmodel_build(&s.model, &s.tl, &s.fa) < 0)
		errx(1, "%s: window %u: %s", e->in.name, we->index, s.model.err);
	struct emitter_file *f = emitter_create(e, "firefox",
						env.format == FX_JSLB ? "jslb.gz" : "json.gz");
	fill_meta(e, we, &mt);
	if (fxfile_write(f->t.fd, env.format, &s.model, &s.tl, &mt, why, sizeof(why)) < 0)
		emitter_give_up(e, "cannot write '%s/%s': %s", e->output, f->name, why);
	emitter_finish(e, NULL, 0, "firefox");
}

static void
add_stat(struct fr_window_end *we, const char *key, uint64_t value)
{
	if (we->nstats < STREAM_MAX_STATS)
		we->stats[we->nstats++] = (struct fr_stat){ { key, (uint16_t)strlen(key) }, value };
}

/* The window's timeline counts go into its statistics for the diagnostics: the drop count
 * replaces aggregate's event_order.timeline_events_dropped, and firefox.* keys are added
 * (the allocation ones when the target has a heap profile). */
static void
add_timeline_stats(const struct emitter *e, struct fr_window_end *we)
{
	static const struct str key_drop = { "event_order.timeline_events_dropped", 35 };
	uint64_t dropped = s.tl.dropped;
	int found = 0;

	for (unsigned i = 0; i < we->nstats; i++) {
		if (we->stats[i].key.len == key_drop.len &&
		    memcmp(we->stats[i].key.p, key_drop.p, key_drop.len) == 0) {
			we->stats[i].value += dropped;
			found = 1;
		}
	}
	if (!found)
		add_stat(we, key_drop.p, dropped);
	add_stat(we, "firefox.dropped_samples", dropped);
	add_stat(we, "firefox.timeline_samples", s.tl.n);
	if (e->heap || s.fa.seen) {
		add_stat(we, "firefox.native_allocations", s.fa.tl.n);
		add_stat(we, "firefox.dropped_allocations", s.fa.tl.dropped);
	}
}

static void
end_window(struct emitter *e, struct fr_window_end *we)
{
	/* Behind fanout a shed window leaves a gap, and its frees here. */
	if (s.have_index && we->index != s.last_index + 1)
		fxalloc_drop_before(&s.fa, we->start);
	s.have_index = 1;
	s.last_index = we->index;
	write_window(e, we);
	add_timeline_stats(e, we);
	e->restated = 1;
	timeline_clear(&s.tl);
	fxalloc_clear(&s.fa);
}

/* Decodes f into v with the typed decoder dec, or stops with the stream's name. */
#define DECODE(e, dec, f, v)                                                         \
	do {                                                                         \
		char why_[200];                                                      \
		if (dec((f), (v), why_, sizeof(why_)) < 0)                           \
			errx(1, "%s: %s", (e)->in.name, why_);                       \
	} while (0)

/* Keeps a sample or an off-CPU piece of the next window to close. */
static const char *
frame(struct emitter *e, const struct frame *f)
{
	static union {
		struct fr_stack stack;
		struct fr_offcpu_stack off;
		struct fr_heap_stack heap;
		struct fr_heap_free free;
		struct fr_heap_reset reset;
	} u;                    /* large (a stack): keep it off the stack */

	switch (f->type) {
	case FR_STACK:
		DECODE(e, stream_get_stack, f, &u.stack);
		if (timeline_add(&s.tl, &u.stack) < 0)
			errx(1, "out of memory");
		break;
	case FR_OFFCPU_STACK:
		DECODE(e, stream_get_offcpu_stack, f, &u.off);
		if (timeline_add_offcpu(&s.tl, &u.off) < 0)
			errx(1, "out of memory");
		break;
	case FR_HEAP_STACK:
		DECODE(e, stream_get_heap_stack, f, &u.heap);
		if (fxalloc_stack(&s.fa, &u.heap) < 0)
			errx(1, "out of memory");
		break;
	case FR_HEAP_FREE:
		DECODE(e, stream_get_heap_free, f, &u.free);
		if (fxalloc_free(&s.fa, &u.free) < 0)
			errx(1, "out of memory");
		break;
	case FR_HEAP_RESET:
		DECODE(e, stream_get_heap_reset, f, &u.reset);
		fxalloc_reset(&s.fa, u.reset.pid);
		break;
	}
	return NULL;
}

static void
init(struct emitter *e)
{
	timeline_init(&s.tl, env.max_samples);
	fxalloc_init(&s.fa, env.max_samples);
	fxmodel_init(&s.model, &e->defs);
}

static void
release(struct emitter *e)
{
	(void)e;
	fxmodel_release(&s.model);
	fxalloc_release(&s.fa);
	timeline_release(&s.tl);
}

static void
option(int key, const char *value)
{
	char e[200];

	if (key == 'f') {
		if (strcmp(value, "json") && strcmp(value, "jslb"))
			errx(1, "--format: '%s' is not json or jslb", value);
		env.format = strcmp(value, "json") ? FX_JSLB : FX_JSON;
		return;
	}
	/* 2^24 keeps a window's sample columns well inside jslb's u32 offsets */
	if (parse_u64(value, 1, 1u << 24, &env.max_samples, e, sizeof(e)) < 0)
		errx(1, "--max-timeline-samples: %s", e);
}

static const struct emitter_ops firefox_ops = {
	.name = "emit-firefox",
	.synopsis = "usage: emit-firefox [--output DIR] [--format json|jslb]\n"
		    "                    [--max-timeline-samples N] < stream > stream\n",
	.writes = "a gzip-compressed Firefox processed profile (firefox-...json.gz or .jslb.gz) to a\n"
		  "temporary file in DIR, announced by a file frame before the window's end frame\n"
		  "(the commit stage renames it into place).\n",
	.output_help = "directory for the temporary files (default .)",
	.column = 30,
	.options = (const struct emitter_option[]){
		{ "format", required_argument, 'f', "-f, --format json|jslb",
		  "processed-profile JSON, or the same profile in a\n"
		  "JsonSlabs container (default json)" },
		{ "max-timeline-samples", required_argument, 'n', "-n, --max-timeline-samples N",
		  "timestamped samples kept per window, and apart\n"
		  "allocations; later ones are left out and counted\n"
		  "(default "
	  RP_DEFAULT_TEXT(RP_DEFAULT_MAX_TIMELINE_SAMPLES) ")" },
		{ 0 },
	},
	.stray_is_error = 1,
	/* Behind fanout, the windows shed for it are missing. */
	.order_rules = ORDER_WINDOW_GAPS,
	.option = option,
	.init = init,
	.release = release,
	.frame = frame,
	.end = end_window,
};

int
main(int argc, char **argv)
{
	return emitter_main(&firefox_ops, argc, argv);
}

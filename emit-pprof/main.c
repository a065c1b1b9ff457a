/*
 * emit-pprof: writes one gzip-compressed CPU pprof per window of the framed stream.
 *
 * Runs on the emitter skeleton (lib/emitter.h): the stream on stdin is copied to stdout
 * unchanged (tee-like), the target, mapping, function and location definitions and thread
 * names kept for the whole stream.  It encodes each window's FR_WINDOW_STACK frames as they
 * pass.  At FR_WINDOW_END it writes the profile to a fsynced temporary file in the output
 * directory, then emits FR_MODULES (the build ids the window refers to, for the module
 * cache's retention) and FR_FILE naming it, then forwards the FR_WINDOW_END.  Renaming into
 * place is the commit stage's job.
 * FR_FORGET gives back the definitions of what no later window can name (lib/defs.h).
 * With off-CPU data (a target flagged TARGET_OFFCPU) the window's FR_WINDOW_OFFCPU_STACK
 * frames make a second, required profile "off-cpu-..." (intervals/count,
 * off_cpu/nanoseconds); a target whose profiles leave out cpu gets no CPU profile.
 * A heap target's FR_WINDOW_HEAP_STACKs make "heap-..."; a physical one's
 * FR_WINDOW_PAGE_STACKs "physical-alloc-..." and "physical-usage-..." as its profiles ask
 * (docs/physical.md).
 * A corrupt or truncated stream stops it with a one-line reason and exit status 1 (4 when
 * the stream ended early, 3 when its reader stopped: lib/stream.h), after removing the
 * temporary files of the window it was writing, if any.
 * Confined (lib/confine.h, docs/privileges.md) to files beneath the output directory.
 */
#include <stdio.h>

#include "emitter.h"
#include "gzfile.h"
#include "modules.h"
#include "profile.h"
#include "stream.h"

/* Go's pprof writer uses gzip.BestSpeed too: profiles compress well at level 1 already. */
#define GZIP_LEVEL 1

struct state {
	struct profile prof;
	struct profile off;     /* the off-CPU profile of the same window */
	struct profile heap;    /* the heap profile of the same window */
	struct profile palloc, pusage; /* its physical-alloc and physical-usage profiles */
	struct gzfile gz;
	char err[200];
};

static struct state s;  /* large (gzip buffer): keep it off the stack */

/* Gzips the finished profile buffers into f's file, or gives the window up. */
static void
write_profile(struct emitter *e, const struct profile *p, struct emitter_file *f)
{
	const struct pb *parts[] = { &p->samples, &p->rest, &p->strs.enc };
	size_t i;

	if (gzfile_open(&s.gz, f->t.fd, GZIP_LEVEL) < 0)
		goto gzfail;
	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if (gzfile_write(&s.gz, parts[i]->buf, parts[i]->len) < 0)
			goto gzfail;
	if (gzfile_finish(&s.gz) < 0)
		goto gzfail;
	return;
gzfail:
	gzfile_release(&s.gz);
	emitter_give_up(e, "cannot write '%s': %s", f->t.path, s.gz.err);
}

/* Ends one profile of the window and writes it to a new file. */
static void
write_kind(struct emitter *e, const struct emitter_profile *k)
{
	struct profile *p = k->physical == 1 ? &s.palloc : k->physical == 2 ? &s.pusage :
			    k->heap ? &s.heap : k->offcpu ? &s.off : &s.prof;

	if (profile_end(p, &e->we, e->hdr.clock_offset_ns) < 0)
		emitter_give_up(e, "%s: %s", e->in.name, p->err);
	struct emitter_file *f = emitter_create(e, k->prefix, "pb.gz");
	write_profile(e, p, f);
	emitter_finish(e, NULL, FILE_REQUIRED, k->kind);
}

/* After the window's profiles: the build ids they refer to, before their file frames. */
static void
end_window(struct emitter *e, struct fr_window_end *we)
{
	const struct profile *written[5] = { &s.prof, &s.off, &s.heap, &s.palloc, &s.pusage };

	if (modules_announce(&e->out, we->index, written, 5) < 0)
		emitter_give_up(e, "%s: %s", e->out.name,
				e->out.err[0] ? e->out.err : "out of memory");
}

static void
init(struct emitter *e)
{
	profile_init(&s.prof, &e->defs);
	profile_init(&s.off, &e->defs);
	s.off.offcpu = 1;
	profile_init(&s.heap, &e->defs);
	s.heap.heap = 1;
	profile_init(&s.palloc, &e->defs);
	s.palloc.physical = 1;
	profile_init(&s.pusage, &e->defs);
	s.pusage.physical = 2;
}

static void
release(struct emitter *e)
{
	(void)e;
	gzfile_release(&s.gz);
	profile_release(&s.prof);
	profile_release(&s.off);
	profile_release(&s.heap);
	profile_release(&s.palloc);
	profile_release(&s.pusage);
}

static const char *
begin(struct emitter *e, const struct fr_window_start *ws)
{
	if (profile_begin(&s.prof, ws) < 0 || (e->offcpu && profile_begin(&s.off, ws) < 0) ||
	    (e->heap && profile_begin(&s.heap, ws) < 0) ||
	    (e->physical_alloc && profile_begin(&s.palloc, ws) < 0) ||
	    (e->physical_usage && profile_begin(&s.pusage, ws) < 0))
		return s.prof.err[0] ? s.prof.err : s.off.err[0] ? s.off.err :
		       s.heap.err[0] ? s.heap.err : s.palloc.err[0] ? s.palloc.err : s.pusage.err;
	return NULL;
}

/* A page stack goes into each physical profile the window has. */
static const char *
page_stack(struct emitter *e, const struct fr_window_page_stack *st)
{
	if (e->physical_alloc && profile_add_page_stack(&s.palloc, st) < 0)
		return s.palloc.err;
	if (e->physical_usage && profile_add_page_stack(&s.pusage, st) < 0)
		return s.pusage.err;
	return NULL;
}

static const char *
heap_stack(struct emitter *e, const struct fr_window_heap_stack *st)
{
	(void)e;
	return profile_add_heap_stack(&s.heap, st) < 0 ? s.heap.err : NULL;
}

static const char *
stack(struct emitter *e, int offcpu, const struct fr_window_stack *st)
{
	struct profile *p = offcpu ? &s.off : &s.prof;

	(void)e;
	/* Off-CPU stacks only in a window whose target collects them. */
	if (offcpu && !p->open) {
		snprintf(s.err, sizeof(s.err), "off-CPU stack of window %u outside that window",
			 st->index);
		return s.err;
	}
	return profile_add_stack(p, st) < 0 ? p->err : NULL;
}

static const struct emitter_ops pprof_ops = {
	.name = "emit-pprof",
	.synopsis = "usage: emit-pprof [--output DIR] < stream > stream\n",
	.writes = "a gzip-compressed CPU pprof to a temporary file in DIR, announced by a file frame\n"
		  "before the window's end frame (the commit stage renames it into place).\n",
	.output_help = "directory for the temporary profile files (default .)",
	.column = 19,
	.order_rules = ORDER_UNIQUE_STACKS,
	.init = init,
	.release = release,
	.begin = begin,
	.stack = stack,
	.heap_stack = heap_stack,
	.page_stack = page_stack,
	.physical = 1,
	.profile = write_kind,
	.end = end_window,
};

int
main(int argc, char **argv)
{
	return emitter_main(&pprof_ops, argc, argv);
}

/* The emitter skeleton (emitter.h): the tee, the window model, the hand-over. */
#include "emitter.h"

#include <err.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "outname.h"

/* ---- the hand-over ---- */

void
emitter_give_up(struct emitter *e, const char *fmt, ...)
{
	va_list ap;

	for (int i = 0; i < e->nfiles; i++)
		tmpfile_discard(&e->files[i].t);
	e->nfiles = 0;
	va_start(ap, fmt);
	verrx(1, fmt, ap);
}

struct emitter_file *
emitter_create(struct emitter *e, const char *prefix, const char *ext)
{
	const struct fr_window_end *we = &e->we;
	struct emitter_file *f = &e->files[e->nfiles];

	if (e->nfiles == EMITTER_MAX_FILES)
		emitter_give_up(e, "window %u: too many files", we->index);
	if (outname_format(f->name, sizeof(f->name), prefix, e->hdr.session_id, we->index,
			   stream_unix_ns(we->start, e->hdr.clock_offset_ns), ext) < 0)
		emitter_give_up(e, "window %u: file name too long", we->index);
	if (tmpfile_create(&f->t, e->output, f->name) < 0)
		emitter_give_up(e, "%s", f->t.err);
	/* Counted once it exists: a failure from here on removes it too. */
	e->nfiles++;
	return f;
}

void
emitter_finish(struct emitter *e, struct bufout *b, uint32_t flags, const char *kind)
{
	struct emitter_file *f = &e->files[e->nfiles - 1];

	if ((b && bufout_flush(b) < 0) || tmpfile_finish(&f->t) < 0)
		emitter_give_up(e, "%s", f->t.err);
	snprintf(f->kind, sizeof(f->kind), "%s", kind);
	f->ff = (struct fr_file){
		.index = e->we.index, .flags = flags,
		.kind = { f->kind, (uint16_t)strlen(f->kind) },
		.name = { f->name, (uint16_t)strlen(f->name) },
		.temp = { f->t.name, (uint16_t)strlen(f->t.name) },
	};
}

/* The window's file frames, then its end frame (f, or e->we when the emitter changed it),
 * flushed.  After that the files are commit's; on a write error they are removed. */
static void
hand_over(struct emitter *e, const struct frame *f)
{
	int ok = 1;

	for (int i = 0; ok && i < e->nfiles; i++)
		ok = stream_put_file(&e->out, &e->files[i].ff) == 0;
	if (ok)
		ok = (e->restated ? stream_put_window_end(&e->out, &e->we)
				  : stream_forward(&e->out, f)) == 0;
	ok = ok && stream_flush(&e->out) == 0;
	for (int i = 0; i < e->nfiles; i++)
		ok ? tmpfile_release(&e->files[i].t) : tmpfile_discard(&e->files[i].t);
	e->nfiles = 0;
	if (!ok)
		errx(stream_writer_status(&e->out), "%s: %s", e->out.name, e->out.err);
}

/* ---- the window model ---- */

/* kind: 0 CPU, 1 off-CPU, 2 heap, 3 physical-alloc, 4 physical-usage. */
static void
end_profile(struct emitter *e, int kind)
{
	static const char *const prefix[] = { "cpu", "off-cpu", "heap", "physical-alloc",
					      "physical-usage" };
	const struct wset *set[] = { &e->wm.cpu, &e->wm.off, &e->wm.heap, NULL, NULL };
	struct emitter_profile p = { .offcpu = kind == 1, .heap = kind == 2,
				     .physical = kind >= 3 ? kind - 2 : 0,
				     .prefix = prefix[kind], .set = set[kind] };

	if (!e->ops->profile)
		return;
	snprintf(p.kind, sizeof(p.kind), "%s%s", e->ops->kind_prefix ? e->ops->kind_prefix : "",
		 p.prefix);
	e->ops->profile(e, &p);
}

static void
end_window(struct emitter *e, const struct frame *f)
{
	char why[200];

	if (stream_get_window_end(f, &e->we, why, sizeof(why)) < 0)
		errx(1, "%s: %s", e->in.name, why);
	if (!e->open || e->we.index != e->index)
		errx(1, "%s: window end %u without its window start", e->in.name, e->we.index);
	e->nfiles = 0;
	e->restated = 0;
	if (e->defs.profile_cpu)
		end_profile(e, 0);
	if (e->offcpu)
		end_profile(e, 1);
	if (e->heap)
		end_profile(e, 2);
	if (e->physical_alloc)
		end_profile(e, 3);
	if (e->physical_usage)
		end_profile(e, 4);
	if (e->ops->end)
		e->ops->end(e, &e->we);
	e->open = 0;
	winmodel_end(&e->wm);
	hand_over(e, f);
}

static const char *
begin_window(struct emitter *e, const struct frame *f)
{
	struct fr_window_start ws;

	if (stream_get_window_start(f, &ws, e->why, sizeof(e->why)) < 0)
		return e->why;
	if (e->open) {
		snprintf(e->why, sizeof(e->why), "window %u starts inside window %u", ws.index,
			 e->index);
		return e->why;
	}
	e->open = 1;
	e->index = ws.index;
	e->offcpu = e->defs.profile_offcpu;
	e->heap = e->defs.profile_heap;
	e->physical_alloc = e->ops->physical && e->defs.profile_physical_alloc;
	e->physical_usage = e->ops->physical && e->defs.profile_physical_usage;
	winmodel_begin(&e->wm, e->offcpu, e->heap);
	return e->ops->begin ? e->ops->begin(e, &ws) : NULL;
}

static const char *
take_stack(struct emitter *e, const struct frame *f)
{
	static struct fr_window_stack s;        /* large: keep it off the stack */
	int off = f->type == FR_WINDOW_OFFCPU_STACK;

	if ((off ? stream_get_window_offcpu_stack(f, &s, e->why, sizeof(e->why))
		 : stream_get_window_stack(f, &s, e->why, sizeof(e->why))) < 0)
		return e->why;
	if (!e->open || s.index != e->index) {
		snprintf(e->why, sizeof(e->why), "%sstack of window %u outside that window",
			 off ? "off-CPU " : "", s.index);
		return e->why;
	}
	if (e->ops->keep_stacks && winmodel_stack(&e->wm, off, &s) < 0)
		return e->wm.err;
	return e->ops->stack ? e->ops->stack(e, off, &s) : NULL;
}

static const char *
take_heap_stack(struct emitter *e, const struct frame *f)
{
	static struct fr_window_heap_stack s;   /* large: keep it off the stack */

	if (stream_get_window_heap_stack(f, &s, e->why, sizeof(e->why)) < 0)
		return e->why;
	if (!e->open || s.index != e->index || !e->heap) {
		snprintf(e->why, sizeof(e->why), "heap stack of window %u outside %s", s.index,
			 e->open && s.index == e->index ? "a window with a heap profile" :
			 "that window");
		return e->why;
	}
	if (e->ops->keep_stacks && winmodel_heap_stack(&e->wm, &s) < 0)
		return e->wm.err;
	return e->ops->heap_stack ? e->ops->heap_stack(e, &s) : NULL;
}

static const char *
take_page_stack(struct emitter *e, const struct frame *f)
{
	static struct fr_window_page_stack s;   /* large: keep it off the stack */

	if (stream_get_window_page_stack(f, &s, e->why, sizeof(e->why)) < 0)
		return e->why;
	if (!e->open || s.index != e->index || !(e->physical_alloc || e->physical_usage)) {
		snprintf(e->why, sizeof(e->why), "page stack of window %u outside %s", s.index,
			 e->open && s.index == e->index ? "a window with a physical profile" :
			 "that window");
		return e->why;
	}
	return e->ops->page_stack(e, &s);
}

/* One frame: a window end is handed over, anything else forwarded first. */
static void
on_frame(struct emitter *e, const struct frame *f)
{
	const char *why = NULL;

	if (f->type == FR_WINDOW_END) {
		end_window(e, f);
		return;
	}
	if (e->ops->before && (why = e->ops->before(e, f)))
		errx(1, "%s: %s", e->in.name, why);
	if (stream_forward(&e->out, f) < 0)
		errx(stream_writer_status(&e->out), "%s: %s", e->out.name, e->out.err);
	if (defs_take(&e->defs, f) < 0)
		errx(1, "%s: %s", e->in.name, e->defs.err);
	if (f->type == FR_WINDOW_START)
		why = begin_window(e, f);
	else if ((f->type == FR_WINDOW_STACK || f->type == FR_WINDOW_OFFCPU_STACK) &&
		 (e->ops->stack || e->ops->keep_stacks))
		why = take_stack(e, f);
	else if (f->type == FR_WINDOW_HEAP_STACK && (e->ops->heap_stack || e->ops->keep_stacks))
		why = take_heap_stack(e, f);
	else if (f->type == FR_WINDOW_PAGE_STACK && e->ops->page_stack)
		why = take_page_stack(e, f);
	if (!why && e->ops->keep_stacks && winmodel_frame(&e->wm, f) < 0)
		why = e->wm.err;
	if (!why && e->ops->frame)
		why = e->ops->frame(e, f);
	if (why)
		errx(1, "%s: %s", e->in.name, why);
}

/* ---- the tee ---- */

void
emitter_open(struct emitter *e, int in, int out)
{
	e->opened = 1;
	if (stream_reader_open(&e->in, in, "stdin", &e->hdr) < 0)
		errx(stream_reader_status(&e->in), "%s: %s", e->in.name, e->in.err);
	e->in.order.rules = e->ops->order_rules;
	if (stream_writer_open(&e->out, out, "stdout", &e->hdr) < 0)
		errx(stream_writer_status(&e->out), "%s: %s", e->out.name, e->out.err);
	e->opened = 2;
	e->in.flush_on_wait = &e->out; /* output never waits for input */
	defs_init(&e->defs);
	/* Without keep_stacks it stays empty: its windows hold no stack. */
	winmodel_init(&e->wm, &e->defs);
	e->open = e->nfiles = 0;
	e->opened = 3;
	if (e->ops->init)
		e->ops->init(e);
}

void
emitter_loop(struct emitter *e)
{
	struct frame f;
	int rc;

	while ((rc = stream_read(&e->in, &f)) > 0)
		on_frame(e, &f);
	if (rc < 0)
		errx(stream_reader_status(&e->in), "%s: %s", e->in.name, e->in.err);
	if (e->open)
		errx(STREAM_EXIT_INPUT_ENDED, "%s: truncated stream: it ends inside window %u",
		     e->in.name, e->index);
	if (!e->in.seen_end)
		errx(STREAM_EXIT_INPUT_ENDED,
		     "%s: truncated stream: it ended without an end frame", e->in.name);
	if (stream_flush(&e->out) < 0)
		errx(stream_writer_status(&e->out), "%s: %s", e->out.name, e->out.err);
}

void
emitter_release(struct emitter *e)
{
	if (e->opened >= 3 && e->ops->release)
		e->ops->release(e);
	if (e->opened >= 3) {
		winmodel_release(&e->wm);
		defs_release(&e->defs);
	}
	if (e->opened >= 2)
		stream_writer_release(&e->out);
	if (e->opened >= 1)
		stream_reader_release(&e->in);
	e->opened = 0;
}

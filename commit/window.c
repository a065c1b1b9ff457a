/* commit: what the stream announced, kept until the window it belongs to ends. */
#include "commit.h"

#include <err.h>
#include <stdarg.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "errbuf.h"

void *
commit_xrealloc(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		errx(1, "out of memory");
	p = realloc(p, n && size ? n * size : 1);
	if (!p)
		errx(1, "out of memory");
	return p;
}

char *
commit_xstrdup(struct str s)
{
	char *p = str_dup(s);

	if (!p)
		errx(1, "out of memory");
	return p;
}

/* Grows an array of *cap elements so one more fits. */
static void *
grow(void *p, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap ? *cap * 2 : 8;
	return commit_xrealloc(p, *cap, size);
}

int64_t
commit_unix(const struct commit *c, uint64_t event_time)
{
	return (int64_t)(event_time + (uint64_t)c->header.clock_offset_ns);
}

static void
target_free(struct commit_target *t)
{
	free(t->kind);
	free(t->exe);
	free(t->comm);
	free(t->kernel_release);
	free(t->unwind_requested);
	free(t->unwind_mode);
	free(t->unwind_reason);
	free(t->profiles);
	free(t->calib_verdict);
	free(t->fallback_reason);
	free(t->scope_requested);
	free(t->scope_effective);
	free(t->scope_cgroup);
	free(t->scope_reason);
	free(t->ctr_runtime);
	free(t->ctr_id);
	free(t->ctr_name);
	free(t->ctr_started_at);
	free(t->k8s_ns);
	free(t->k8s_pod);
	free(t->k8s_uid);
	free(t->allocator_requested);
	free(t->allocator_detected);
	free(t->allocator_module);
	free(t->allocator_reason);
	free(t->heap_scope);
	free(t->cpu_event);
	free(t->cpu_event_reason);
	free(t->cpu_list);
	memset(t, 0, sizeof(*t));
}

/* A later target frame (a followed restart) replaces the earlier one. */
void
commit_set_target(struct commit *c, const struct fr_target *t)
{
	struct commit_target *d = &c->target;

	target_free(d);
	d->have = 1;
	d->pid = t->pid;
	d->cpu_frequency = t->cpu_frequency;
	d->kind = commit_xstrdup(t->kind);
	d->exe = commit_xstrdup(t->exe);
	d->comm = commit_xstrdup(t->comm);
	d->kernel_release = commit_xstrdup(t->kernel_release);
	d->unwind_requested = commit_xstrdup(t->unwind_requested);
	d->unwind_mode = commit_xstrdup(t->unwind_mode);
	d->unwind_reason = commit_xstrdup(t->unwind_reason);
	d->profiles = commit_xstrdup(t->profiles);
	d->calib_samples = t->calib_samples;
	d->calib_mapped_permille = t->calib_mapped_permille;
	d->calib_deep_permille = t->calib_deep_permille;
	d->calib_cycles = t->calib_cycles;
	d->calib_verdict = commit_xstrdup(t->calib_verdict);
	d->fallback_reason = commit_xstrdup(t->fallback_reason);
	d->scope_requested = commit_xstrdup(t->scope_requested);
	d->scope_effective = commit_xstrdup(t->scope_effective);
	d->scope_cgroup = commit_xstrdup(t->scope_cgroup);
	d->scope_reason = commit_xstrdup(t->scope_reason);
	d->ctr_runtime = commit_xstrdup(t->container_runtime);
	d->ctr_id = commit_xstrdup(t->container_id);
	d->ctr_name = commit_xstrdup(t->container_name);
	d->ctr_started_at = commit_xstrdup(t->container_started_at);
	d->k8s_ns = commit_xstrdup(t->k8s_namespace);
	d->k8s_pod = commit_xstrdup(t->k8s_pod_name);
	d->k8s_uid = commit_xstrdup(t->k8s_pod_uid);
	d->heap = (t->flags & TARGET_HEAP) != 0;
	d->heap_requested = t->alloc_interval != 0;
	d->allocator_requested = commit_xstrdup(t->allocator_requested);
	d->allocator_detected = commit_xstrdup(t->allocator_detected);
	d->allocator_module = commit_xstrdup(t->allocator_module);
	d->allocator_reason = commit_xstrdup(t->allocator_reason);
	d->allocator_complete = t->allocator_complete;
	d->heap_scope = commit_xstrdup(t->heap_scope);
	d->physical = (t->flags & TARGET_PHYSICAL) != 0;
	d->physical_percent = t->physical_percent;
	d->cpu_event = commit_xstrdup(t->cpu_event);
	d->cpu_event_reason = commit_xstrdup(t->cpu_event_reason);
	d->cpu_list = commit_xstrdup(t->cpu_list);
}

void
commit_add_warning(struct commit *c, const struct fr_warning *w)
{
	if (c->nwarnings >= COMMIT_MAX_WARNINGS) {
		c->warnings_dropped++;
		return;
	}
	c->warnings = grow(c->warnings, c->nwarnings, &c->warnings_cap, sizeof(*c->warnings));
	c->warnings[c->nwarnings].time = w->time;
	c->warnings[c->nwarnings].text = commit_xstrdup(w->text);
	c->nwarnings++;
}

static struct commit_open *
find_open(struct commit *c, uint32_t index)
{
	for (size_t i = 0; i < c->nopen; i++)
		if (c->open[i].index == index)
			return &c->open[i];
	return NULL;
}

int
commit_window_start(struct commit *c, const struct fr_window_start *w, char *err,
		    size_t errlen)
{
	if (find_open(c, w->index))
		return errbuf_fail(err, errlen, "window %u started twice", w->index);
	if (w->end < w->start)
		return errbuf_fail(err, errlen, "window %u ends before it starts", w->index);
	c->open = grow(c->open, c->nopen, &c->open_cap, sizeof(*c->open));
	c->open[c->nopen++] = (struct commit_open){ w->index, w->start, w->end };
	return 0;
}

/* The order rules (lib/order.c) have put f inside the open window, once for its kind. */
int
commit_add_file(struct commit *c, const struct fr_file *f, char *err, size_t errlen)
{
	struct commit_open *o = find_open(c, f->index);
	struct commit_file d;

	if (!o)
		return errbuf_fail(err, errlen, "file frame for window %u outside that window", f->index);
	if (commit_accept_file(c, f, o->start, &d, err, errlen) < 0)
		return -1;
	c->files = grow(c->files, c->nfiles, &c->files_cap, sizeof(*c->files));
	c->files[c->nfiles++] = d;
	return 0;
}

void
commit_file_release(struct commit_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	free(f->kind);
	free(f->name);
	free(f->temp);
	memset(f, 0, sizeof(*f));
	f->fd = -1;
}

static int
is_pprof(const struct commit_file *f)
{
	size_t n = strlen(f->name);

	return n >= 6 && strcmp(f->name + n - 6, ".pb.gz") == 0;
}

/* Moves the window's files into b, pprof files first, keeping stream order otherwise. */
static void
take_files(struct commit *c, uint32_t index, struct commit_batch *b)
{
	size_t kept = 0;

	b->files = commit_xrealloc(NULL, c->nfiles, sizeof(*b->files));
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < c->nfiles; i++)
			if (c->files[i].index == index && is_pprof(&c->files[i]) == !pass)
				b->files[b->nfiles++] = c->files[i];
	for (size_t i = 0; i < c->nfiles; i++)
		if (c->files[i].index != index)
			c->files[kept++] = c->files[i];
	c->nfiles = kept;
}

/*
 * Warnings go to the window whose [start, end) holds their time.  Windows end in time
 * order, so a window takes every waiting warning older than its end: that also gives it
 * warnings from before the first window and late ones whose window is already out.  The
 * final window takes the rest.
 */
static void
take_warnings(struct commit *c, const struct fr_window_end *we, struct commit_batch *b)
{
	size_t kept = 0, extra = c->warnings_dropped ? 1 : 0;
	int final = we->reason == WINDOW_FINAL;
	char buf[96];

	b->warnings = commit_xrealloc(NULL, c->nwarnings + extra, sizeof(*b->warnings));
	for (size_t i = 0; i < c->nwarnings; i++) {
		if (final || c->warnings[i].time < we->end)
			b->warnings[b->nwarnings++] = c->warnings[i].text;
		else
			c->warnings[kept++] = c->warnings[i];
	}
	c->nwarnings = kept;
	if (extra) {
		snprintf(buf, sizeof(buf), "%llu further warnings were not kept",
			 (unsigned long long)c->warnings_dropped);
		b->warnings[b->nwarnings++] = commit_xstrdup((struct str){ buf, (uint16_t)strlen(buf) });
		c->warnings_dropped = 0;
	}
}

int
commit_take_window(struct commit *c, const struct fr_window_end *we, struct commit_batch *b,
		   char *err, size_t errlen)
{
	struct commit_open *o = find_open(c, we->index);

	memset(b, 0, sizeof(*b));
	if (!o)
		return errbuf_fail(err, errlen, "end of window %u without its start", we->index);
	while (we->index >= c->starts_cap)
		c->starts = grow(c->starts, we->index, &c->starts_cap, sizeof(*c->starts));
	c->starts[we->index] = o->start;
	c->nstarts = (size_t)we->index + 1;
	*o = c->open[--c->nopen];
	b->end = we;
	take_files(c, we->index, b);
	take_warnings(c, we, b);
	return 0;
}

void
commit_batch_release(struct commit_batch *b)
{
	for (size_t i = 0; i < b->nfiles; i++)
		commit_file_release(&b->files[i]);
	for (size_t i = 0; i < b->nwarnings; i++)
		free(b->warnings[i]);
	free(b->files);
	free(b->warnings);
	memset(b, 0, sizeof(*b));
}

void
commit_remove_pending(struct commit *c)
{
	for (size_t i = 0; i < c->nfiles; i++)
		if (fs_unlink_at(c->dirfd, c->files[i].temp) < 0)
			warn("cannot remove '%s/%s'", c->dir, c->files[i].temp);
}

void
commit_release(struct commit *c)
{
	struct commit_batch all = { .files = c->files, .nfiles = c->nfiles };

	commit_batch_release(&all);
	for (size_t i = 0; i < c->nwarnings; i++)
		free(c->warnings[i].text);
	free(c->warnings);
	free(c->open);
	for (size_t i = 0; i < c->npublished; i++) {
		for (size_t k = 0; k < c->published[i].n; k++)
			free(c->published[i].names[k]);
		free(c->published[i].names);
	}
	free(c->published);
	free(c->starts);
	target_free(&c->target);
}

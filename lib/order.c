#include "order.h"

#include <stdio.h>
#include <string.h>

#include "stream.h"

static int
fail(char *err, size_t errlen, const struct frame *f, const char *what, const char *rule)
{
	snprintf(err, errlen, "%s frame %s: %s", stream_frame_name(f->type), what, rule);
	return -1;
}

static uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int
window_start(struct stream_order *o, const struct frame *f, char *err, size_t errlen)
{
	struct fr_window_start ws;
	char what[96];

	if (stream_get_window_start(f, &ws, err, errlen) < 0)
		return 0; /* corrupt: the stage's own decoder says so */
	if (o->open) {
		snprintf(what, sizeof(what), "for window %u inside window %u", ws.index, o->index);
		return fail(err, errlen, f, what, "a window ends before the next starts");
	}
	if ((int64_t)ws.index < o->next ||
	    (!(o->rules & ORDER_WINDOW_GAPS) && (int64_t)ws.index != o->next)) {
		snprintf(what, sizeof(what), "for window %u where window %lld was due", ws.index,
			 (long long)o->next);
		return fail(err, errlen, f, what, o->rules & ORDER_WINDOW_GAPS ?
			    "window indexes increase" : "window indexes increase by one from 0");
	}
	o->open = 1;
	o->index = ws.index;
	o->nkinds = 0;
	stackset_clear(&o->stacks);
	stackset_clear(&o->offcpu_stacks);
	stackset_clear(&o->heap_stacks);
	stackset_clear(&o->page_stacks);
	return 0;
}

static int
window_end(struct stream_order *o, const struct frame *f, char *err, size_t errlen)
{
	static struct fr_window_end we; /* large; one at a time */
	char what[64];

	if (stream_get_window_end(f, &we, err, errlen) < 0)
		return 0;
	snprintf(what, sizeof(what), "for window %u", we.index);
	if (!o->open && o->next > 0 && we.index == o->next - 1)
		return fail(err, errlen, f, what, "a window ends once");
	if (!o->open || we.index != o->index)
		return fail(err, errlen, f, what, "a window ends after its window-start");
	o->open = 0;
	o->next = (int64_t)we.index + 1;
	return 0;
}

/* Window stacks: inside their window, and (ORDER_UNIQUE_STACKS) each distinct one once.
 * Here as above, a frame too short for its fields is left to the stage's decoder to call
 * corrupt (a stage that only forwards it, forwards it). */
static int
window_stack(struct stream_order *o, const struct frame *f, char *err, size_t errlen)
{
	static uint32_t locs[STREAM_MAX_LOCS];
	int heap = f->type == FR_WINDOW_HEAP_STACK || f->type == FR_WINDOW_PAGE_STACK;
	struct stackset *set = f->type == FR_WINDOW_STACK ? &o->stacks :
			       f->type == FR_WINDOW_PAGE_STACK ? &o->page_stacks :
			       heap ? &o->heap_stacks : &o->offcpu_stacks;
	/* Where the location count sits: after two u64 values, or four in a heap or page
	 * stack. */
	size_t at = heap ? 44 : 28;
	uint32_t index;
	uint16_t n;
	char what[64];
	int rc;

	if (f->len < at + 2)
		return 0;
	index = rd32(f->data);
	snprintf(what, sizeof(what), "of window %u", index);
	if (!o->open || index != o->index)
		return fail(err, errlen, f, what, "a window's stacks come inside that window");
	if (!(o->rules & ORDER_UNIQUE_STACKS))
		return 0;
	n = (uint16_t)(f->data[at] | f->data[at + 1] << 8);
	if (n > STREAM_MAX_LOCS || f->len < at + 2 + 4 * (size_t)n)
		return 0;
	for (uint16_t i = 0; i < n; i++)
		locs[i] = rd32(f->data + at + 2 + 4 * (size_t)i);
	rc = stackset_add(set, rd32(f->data + 4), rd32(f->data + 8), locs, n);
	if (rc < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	snprintf(what, sizeof(what), "of window %u repeats a stack", index);
	if (rc == 0)
		return fail(err, errlen, f, what, "each distinct stack comes once per window");
	return 0;
}

/* File frames: an emitter's, inside the open window, once per kind; a discarded one
 * (fanout) for a window that has ended. */
static int
file(struct stream_order *o, const struct frame *f, char *err, size_t errlen)
{
	struct fr_file ff;
	char what[128];

	if (stream_get_file(f, &ff, err, errlen) < 0)
		return 0;
	snprintf(what, sizeof(what), "of kind '%.*s' for window %u",
		 ff.kind.len > 40 ? 40 : ff.kind.len, ff.kind.p, ff.index);
	if (ff.flags & FILE_DISCARD)
		return (int64_t)ff.index < o->next ? 0 :
			fail(err, errlen, f, what, "a discarded file belongs to a window that ended");
	if (!o->open || ff.index != o->index)
		return fail(err, errlen, f, what, "a file comes inside its window, before its end");
	for (unsigned i = 0; i < o->nkinds; i++)
		if (ff.kind.len == strlen(o->kinds[i]) && !memcmp(o->kinds[i], ff.kind.p, ff.kind.len))
			return fail(err, errlen, f, what, "a window has one file of each kind");
	if (o->nkinds == ORDER_MAX_KINDS || ff.kind.len >= sizeof(o->kinds[0]))
		return fail(err, errlen, f, what, "a window has a few files of short kinds");
	memcpy(o->kinds[o->nkinds], ff.kind.p, ff.kind.len);
	o->kinds[o->nkinds++][ff.kind.len] = '\0';
	return 0;
}

/* stream_read may not ask about a frame of a type outside ORDER_RULED_TYPES read before the
 * end frame: a rule for another type needs its bit there too. */
int
stream_order_check(struct stream_order *o, const struct frame *f, char *err, size_t errlen)
{
	int windowed = f->type == FR_WINDOW_START || f->type == FR_WINDOW_STACK ||
		       f->type == FR_WINDOW_END || f->type == FR_WINDOW_OFFCPU_STACK ||
		       f->type == FR_WINDOW_HEAP_STACK || f->type == FR_WINDOW_PAGE_STACK;

	if (o->rules & ORDER_NONE)
		return 0;
	if (o->ended)
		return fail(err, errlen, f, "after the end frame", "the end frame is the last");
	if ((o->rules & ORDER_BEFORE_WINDOWS) && (windowed || f->type == FR_FILE))
		return fail(err, errlen, f, "in the input of a stage before the emitters",
			    f->type == FR_FILE ? "only emitters write file frames" :
			    "only aggregate writes window frames");
	switch (f->type) {
	case FR_END:
		if (o->open)
			return fail(err, errlen, f, "inside a window",
				    "the last window ends before the end frame");
		o->ended = 1;
		return 0;
	case FR_WINDOW_START:
		return window_start(o, f, err, errlen);
	case FR_WINDOW_END:
		return window_end(o, f, err, errlen);
	case FR_WINDOW_STACK:
	case FR_WINDOW_OFFCPU_STACK:
	case FR_WINDOW_HEAP_STACK:
	case FR_WINDOW_PAGE_STACK:
		return window_stack(o, f, err, errlen);
	case FR_FILE:
		return file(o, f, err, errlen);
	}
	return 0;
}

void
stream_order_release(struct stream_order *o)
{
	stackset_release(&o->stacks);
	stackset_release(&o->offcpu_stacks);
	stackset_release(&o->heap_stacks);
	stackset_release(&o->page_stacks);
}

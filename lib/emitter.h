/*
 * The skeleton every emitter stage runs on (emit-pprof, emit-svg, emit-collapsed,
 * emit-firefox; docs/emitters.md).  It owns what they have in common:
 *
 *   options   --output DIR and --help, the usage text around the emitter's own options,
 *             the check of DIR and the confinement to it (lib/confine.h)
 *   the tee   the stream read on stdin and copied to stdout unchanged, every frame before
 *             the emitter sees it, output flushed before input is waited for
 *   the model the definitions of the whole stream (lib/defs.h, FR_FORGET included) and the
 *             window open: its start frame checked and decoded, its window stacks decoded
 *             and checked to be inside it, its end decoded; for an emitter that lays a
 *             window out whole, its CPU and off-CPU stacks (lib/winmodel.h)
 *   hand-over the window's files created in DIR under their published names, finished,
 *             announced with FR_FILE frames before the window's end frame (commit renames
 *             them); removed, with one line and exit status 1, when the window is given up
 *   the end   a truncated stream (4), a reader gone (3), a corrupt one (1), one line each
 *
 * An emitter supplies its options and callbacks in a struct emitter_ops: confine (before
 * the confinement: more paths, a port), begin (a window starts), stack (one of its window
 * stacks, as it passes), before (any frame, before it is forwarded: frames of its own
 * ahead of it), frame (any frame, for what else it keeps), profile (the window ends:
 * write the file of one of its profiles with emitter_create / emitter_finish) and end
 * (after them).  With keep_stacks it needs none
 * but profile: each profile comes with its stacks (lib/winmodel.h).
 */
#ifndef RP_EMITTER_H
#define RP_EMITTER_H

#include <getopt.h>             /* no_argument, required_argument */
#include <stdint.h>

#include "bufout.h"
#include "confine.h"
#include "defs.h"
#include "stream.h"
#include "tmpfile.h"
#include "winmodel.h"

#define EMITTER_MAX_FILES 8     /* files of one window */

/* One option of an emitter's own, beside --output and --help. */
struct emitter_option {
	const char *name;       /* the long name */
	int has_arg;            /* no_argument or required_argument (getopt.h) */
	int key;                /* the short letter, handed to emitter_ops.option */
	const char *flags;      /* as the usage shows it: "-a, --annotate" */
	const char *help;       /* its help; each '\n' starts a line under the first */
};

struct emitter;

/* One profile of a window, as its target asks for them: CPU time (when the target's
 * profiles name cpu), then off-CPU time (when its target collects it). */
struct emitter_profile {
	int offcpu;
	int heap;               /* the heap profile (after the others, when its target has one) */
	/* The physical memory profiles, last (emitter_ops.physical): 1 physical-alloc, 2
	 * physical-usage, as the target asks for them. */
	int physical;
	const char *prefix;     /* of the file's name: "cpu", "off-cpu", "heap", ... */
	char kind[48];          /* of its file frame: emitter_ops.kind_prefix, then prefix */
	const struct wset *set; /* with keep_stacks: its stacks */
};

struct emitter_ops {
	const char *name;       /* "emit-pprof": the stage's name for the confinement */
	/* The usage: synopsis lines, then "Copies the rustprofile stream ... and writes, for
	 * every window," and the lines of writes, then the options. */
	const char *synopsis;
	const char *writes;
	const char *output_help;        /* --output's help: "directory for the ..." */
	int column;             /* where the options' help starts, after the indent */
	const struct emitter_option *options;   /* up to a NULL name; NULL for none */
	/* A stray argument is "unexpected argument 'X'", status 1, instead of the usage on
	 * stderr, status 2. */
	int stray_is_error;
	unsigned order_rules;   /* ORDER_* for the reader (lib/order.h) */
	int keep_stacks;        /* e->wm keeps each window's stacks until its end */
	/* It writes the physical memory profiles: profile is called for them too.  Other
	 * emitters let FR_WINDOW_PAGE_STACK frames pass. */
	int physical;

	/* An option of the emitter's own (value NULL without an argument); may exit. */
	void (*option)(int key, const char *value);
	/* Another mode than the tee (emit-svg --folded): after the options, the file it
	 * reads instead ("-" for stdin), or NULL for the tee; run_alone is then the stage. */
	const char *(*alone)(void);
	int (*run_alone)(void);

	/* Before the confinement: may list more paths in spec (the output directory first) and
	 * allow a TCP port (emit-otlp); NULL: the output directory only. */
	void (*confine)(const char *output, struct rp_confine_spec *spec);

	/* Before the first frame and after the last (or after a failure, the fuzz targets). */
	void (*init)(struct emitter *e);
	void (*release)(struct emitter *e);
	/* Each returns NULL, or the reason the stage stops: one line "<input>: <reason>". */
	const char *(*begin)(struct emitter *e, const struct fr_window_start *ws);
	/* A window stack (offcpu: an FR_WINDOW_OFFCPU_STACK) of the open window.  Without
	 * this callback or keep_stacks, window stacks are not even decoded. */
	const char *(*stack)(struct emitter *e, int offcpu, const struct fr_window_stack *s);
	/* An FR_WINDOW_HEAP_STACK of the open window (not decoded without this callback or
	 * keep_stacks). */
	const char *(*heap_stack)(struct emitter *e, const struct fr_window_heap_stack *s);
	/* An FR_WINDOW_PAGE_STACK of the open window (not decoded without this callback). */
	const char *(*page_stack)(struct emitter *e, const struct fr_window_page_stack *s);
	/* Before a frame other than a window end is forwarded: may write frames of its own to
	 * e->out ahead of it (emit-otlp's export results, which must precede the end frame). */
	const char *(*before)(struct emitter *e, const struct frame *f);
	/* Every frame but window ends, after the definitions and the callbacks above. */
	const char *(*frame)(struct emitter *e, const struct frame *f);
	/* The window ends: profile writes the file of each of its profiles, then end the
	 * rest.  end may change *we (its statistics) and set e->restated, and may write
	 * frames to e->out that go before the files. */
	const char *kind_prefix;        /* "svg-": the profiles' files are "svg-cpu", ... */
	void (*profile)(struct emitter *e, const struct emitter_profile *p);
	void (*end)(struct emitter *e, struct fr_window_end *we);
};

/* A file of the window being ended. */
struct emitter_file {
	struct tmpfile t;
	struct fr_file ff;
	char name[256];         /* the published name */
	char kind[48];          /* its file frame's kind */
};

struct emitter {
	const struct emitter_ops *ops;
	const char *output;     /* --output */
	struct stream_reader in;
	struct stream_writer out;
	struct stream_header hdr;
	struct defs defs;
	int open;               /* a window started and has not ended */
	int offcpu;             /* it has off-CPU stacks: its target said so at its start */
	int heap;               /* it has allocation stacks (the same) */
	/* It has page allocation stacks (TARGET_PHYSICAL), with these profiles asked. */
	int physical_alloc, physical_usage;
	uint32_t index;
	struct winmodel wm;     /* with keep_stacks: the open window's stacks */
	struct fr_window_end we;        /* the window end being handled */
	int restated;           /* end changed we: it is written instead of forwarded */
	struct emitter_file files[EMITTER_MAX_FILES];
	int nfiles;
	int opened;             /* what emitter_release has to release: 1 reader, 2 writer,
				 * 3 the emitter's state too */
	char why[200];
};

/* The whole stage: options, confinement, the tee until the end frame.  Returns the exit
 * status; every failure exits with one line. */
int emitter_main(const struct emitter_ops *ops, int argc, char **argv);

/* The tee on its own (the fuzz targets run it on each input), e->ops and e->output set:
 * opens the stream on in and out and the state, reads to the end, releases. */
void emitter_open(struct emitter *e, int in, int out);
void emitter_loop(struct emitter *e);
void emitter_release(struct emitter *e);

/* In end: creates the window's next file, "<prefix>-<session>-<index>-<start>.<ext>", in
 * the output directory.  Exits 1 (after removing the window's files) when it cannot. */
struct emitter_file *emitter_create(struct emitter *e, const char *prefix, const char *ext);
/* Finishes the file created last, its text in b flushed first when b is not NULL, and
 * announces it as kind with flags (FILE_REQUIRED for a profile commit must publish). */
void emitter_finish(struct emitter *e, struct bufout *b, uint32_t flags, const char *kind);
/* Gives the window up: removes its files, says why in one line, exits 1. */
void emitter_give_up(struct emitter *e, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 2, 3)));

#endif

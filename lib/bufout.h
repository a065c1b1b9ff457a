/*
 * A small buffered text writer into a temporary output file (lib/tmpfile.h), so derived
 * outputs are streamed to disk piece by piece instead of being built in memory whole.
 * After the first failed write every later call does nothing; bufout_flush reports it.
 */
#ifndef RP_BUFOUT_H
#define RP_BUFOUT_H

#include <stddef.h>

#include "tmpfile.h"

#define BUFOUT_SIZE (1u << 16)

struct bufout {
	struct tmpfile *t;      /* not owned */
	size_t len;
	int failed;
	char buf[BUFOUT_SIZE];
};

void bufout_init(struct bufout *b, struct tmpfile *t);
void bufout_put(struct bufout *b, const void *p, size_t n);
void bufout_puts(struct bufout *b, const char *s);
void bufout_printf(struct bufout *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Writes out what is buffered; 0, or -1 with the reason in b->t->err. */
int bufout_flush(struct bufout *b);

#endif

/*
 * Option values: humantime durations and bounded integers.  Each returns 0, or -1 with a
 * one-line reason in err that names the problem, not the option (the caller names that).
 */
#ifndef RP_PARSE_H
#define RP_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* "10s", "2m", "1h30m", "500ms", "250us", "1500ns", "1d", "0"; a bare number other than 0
 * is refused, as humantime does, because its unit would be a guess. */
int parse_duration(const char *s, uint64_t *ns, char *err, size_t errlen);

/* A decimal integer in [min, max]. */
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out, char *err,
	      size_t errlen);

#endif

/*
 * Option values: humantime durations and bounded integers.  Each returns 0, or -1 with a
 * one-line reason in err that names the problem, not the option (the caller names that).
 */
#ifndef RP_PARSE_H
#define RP_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* The Rust humantime crate's grammar: terms of a number and a unit, optionally separated by
 * whitespace ("10s", "1h30m", "1h 30m", "2days", "1w", "500us", "3M", "1y"); units ns, us/µs,
 * ms, s, m, h, d, w, M (30.44 days), y (365.25 days) and their long forms.  "0" is zero; a
 * bare number other than 0 is refused, as humantime does, because its unit would be a guess.
 * A total past UINT64_MAX nanoseconds (about 584 years) is refused. */
int parse_duration(const char *s, uint64_t *ns, char *err, size_t errlen);

/* A decimal integer in [min, max]. */
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out, char *err,
	      size_t errlen);

/* A byte size in [min, max]: a number, maybe with a fraction, and an optional unit,
 * case aside and maybe after a space: B, K/KB (1000), Ki/KiB (1024), M/MB, Mi/MiB, G/GB,
 * Gi/GiB, T/TB, Ti/TiB ("4096", "512KiB", "512 KiB", "1.5 MiB").  Fractions of a byte are
 * refused. */
int parse_bytes(const char *s, uint64_t min, uint64_t max, uint64_t *out, char *err,
		size_t errlen);

#endif

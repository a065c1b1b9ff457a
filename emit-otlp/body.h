/* A request body gzipped in memory (Content-Encoding: gzip), made once per window. */
#ifndef EO_BODY_H
#define EO_BODY_H

#include <stddef.h>
#include <stdint.h>

/* The gzip member of in (n bytes) in a new buffer *out (*outn bytes); 0, or -1 (out of
 * memory). */
int body_gzip(const uint8_t *in, size_t n, uint8_t **out, size_t *outn);
/* Frees the deflate state body_gzip keeps. */
void body_release(void);

#endif

/*
 * Output file names, exactly as the manual gives them:
 *   <kind>-<session-id>-<window-index>-<start-unix-nanos>.<ext>
 * with the session id as 16 lowercase hex digits and the window index as 6 decimal digits.
 */
#ifndef RP_OUTNAME_H
#define RP_OUTNAME_H

#include <stddef.h>
#include <stdint.h>

/* Writes the name into buf; returns its length, or -1 when it does not fit. */
int outname_format(char *buf, size_t len, const char *kind, uint64_t session_id,
		   uint32_t window_index, int64_t start_unix_nanos, const char *ext);

/* The common "<session-id>" text, 16 hex digits and a NUL. */
void outname_session(char buf[17], uint64_t session_id);

#endif

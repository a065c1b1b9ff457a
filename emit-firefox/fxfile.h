/*
 * A window's Firefox profile file: the processed profile gzip-compressed, either as JSON
 * text streamed straight into the file, or as a JSLB container (the JSON skeleton is built
 * in memory, then written with its slabs).
 */
#ifndef EF_FXFILE_H
#define EF_FXFILE_H

#include <stddef.h>

#include "fxwrite.h"

enum fx_format {
	FX_JSON,
	FX_JSLB,
};

/* Writes into the open file descriptor fd (not closed, not synced): 0, or -1 with err. */
int fxfile_write(int fd, enum fx_format fmt, const struct fxmodel *m,
		 const struct timeline *t, const struct fxmeta *meta, char *err, size_t errlen);

#endif

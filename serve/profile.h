/*
 * profile: reading one Firefox profile file (firefox-*.json.gz or firefox-*.jslb.gz) the
 * way serve may serve it: at most SERVE_MAX_COMPRESSED bytes on disk, at most
 * SERVE_MAX_DECOMPRESSED once inflated (a JSLB container counts again as the JSON it
 * stands for), and within the viewer's limits (threads, samples, stacks, functions), all
 * checked by parsing the JSON with jansson.
 */
#ifndef RP_SERVE_PROFILE_H
#define RP_SERVE_PROFILE_H

#include <stddef.h>
#include <stdint.h>

struct profile {
	uint8_t *data;		/* the inflated file: JSON text, or a JSLB container */
	size_t len;
	int jslb;
	char *json;		/* the JSON text (data itself for a JSON profile) */
	size_t json_len;
	void *doc;		/* the parsed document (json_t *) */
};

/* 0, or -1 with a one-line reason in err.  what names the file in that reason. */
int profile_load(const char *path, struct profile *out, char *err, size_t errlen);
void profile_free(struct profile *);

/* Inflates a gzip file of at most max_in bytes to at most max_out bytes (shared with the
 * diagnostics reader).  0, or -1 with a reason in err. */
int profile_gunzip_file(const char *path, uint64_t max_in, uint64_t max_out, uint8_t **out,
			size_t *outlen, char *err, size_t errlen);

#endif

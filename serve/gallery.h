/*
 * gallery: --directory.  The directory's entries named firefox-*.json.gz or
 * firefox-*.jslb.gz (at most SERVE_MAX_SCAN entries read, at most SERVE_MAX_LIST
 * profiles listed), each known by the SHA-256 of its file name, with the summary of its
 * window's diagnostics file (ignored above SERVE_MAX_DIAGNOSTICS bytes); and the built-in
 * page at GET / that shows them.
 */
#ifndef RP_SERVE_GALLERY_H
#define RP_SERVE_GALLERY_H

#include <stddef.h>

#include "serve.h"
#include "symapi.h"

/* GET /api/profiles */
void gallery_list(struct serve *, struct answer *);
/* GET /api/profile/ID: the decoded profile (JSON), its libs learnt for the symbol API. */
void gallery_profile(struct serve *, const char *id, struct answer *);
/* GET / */
void gallery_page(struct serve *, struct answer *);
/* The link that opens the profile at profile_path of this server in the Firefox Profiler,
 * with this server as its symbol server. */
void gallery_firefox_url(const struct serve *, const char *profile_path, char *link,
			 size_t len);
/* The id of a file name: 64 lower-case hex digits and a NUL. */
void gallery_id(const char *name, char out[65]);
/* 1 when name is a file name serve lists. */
int gallery_name_ok(const char *name);

#endif

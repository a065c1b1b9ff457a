/* gallery: listing and opening the profiles of --directory (see gallery.h). */
#include "gallery.h"

#include <dirent.h>
#include <jansson.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "profile.h"

void
gallery_id(const char *name, char out[65])
{
	struct sha256_ctx c;
	uint8_t d[SHA256_DIGEST_SIZE];

	sha256_init(&c);
	sha256_update(&c, strlen(name), (const uint8_t *)name);
	sha256_digest(&c, sizeof(d), d);
	for (int i = 0; i < SHA256_DIGEST_SIZE; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static int
ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && strcmp(s + n - t, tail) == 0;
}

int
gallery_name_ok(const char *name)
{
	return strncmp(name, "firefox-", 8) == 0 && !strchr(name, '/') &&
	       (ends_with(name, ".json.gz") || ends_with(name, ".jslb.gz"));
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The profile names of the directory, sorted; *scanned entries read, *more when the scan
 * stopped at its limit.  NULL (with *n 0) when the directory cannot be read. */
static char **
scan(const char *dir, size_t *n, size_t *scanned, int *more)
{
	char **names = calloc(SERVE_MAX_SCAN, sizeof(*names));
	DIR *dp = names ? opendir(dir) : NULL;
	struct dirent *d;

	*n = *scanned = 0;
	*more = 0;
	if (!dp) {
		free(names);
		return NULL;
	}
	while ((d = readdir(dp))) {
		if (*scanned == SERVE_MAX_SCAN) {
			*more = 1;
			break;
		}
		++*scanned;
		if (gallery_name_ok(d->d_name) && (names[*n] = strdup(d->d_name)))
			++*n;
	}
	closedir(dp);
	qsort(names, *n, sizeof(*names), cmp_names);
	return names;
}

static void
free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* The diagnostics summary of a window, or a note saying why there is none. */
static json_t *
summary(const char *dir, const char *name)
{
	const char *rest = name + strlen("firefox-");
	size_t stem = strcspn(rest, ".");
	char path[4096];
	struct stat st;
	json_error_t je;

	snprintf(path, sizeof(path), "%s/diagnostics-%.*s.json", dir, (int)stem, rest);
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return json_pack("{s:s}", "note", "no diagnostics file");
	if (st.st_size > SERVE_MAX_DIAGNOSTICS)
		return json_pack("{s:s, s:I}", "note", "diagnostics larger than 1 MiB: ignored",
				 "bytes", (json_int_t)st.st_size);
	json_t *d = json_load_file(path, 0, &je);
	if (!json_is_object(d)) {
		json_decref(d);
		return json_pack("{s:s}", "note", "diagnostics file is not JSON");
	}
	json_t *t = json_object_get(d, "target"), *cpu = json_object_get(d, "cpu");
	json_t *s = json_pack("{s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:I}",
		"window_index", json_object_get(d, "window_index"),
		"window_start_unix_nanos", json_object_get(d, "window_start_unix_nanos"),
		"window_end_unix_nanos", json_object_get(d, "window_end_unix_nanos"),
		"final_window", json_object_get(d, "final_window"),
		"target_kind", json_object_get(t, "kind"),
		"pid", json_object_get(t, "pid"),
		"executable", json_object_get(t, "executable"),
		"comm", json_object_get(t, "comm"),
		"cpu_samples", json_object_get(cpu, "samples"),
		"warnings", (json_int_t)json_array_size(json_object_get(d, "warnings")));
	json_decref(d);
	return s ? s : json_pack("{s:s}", "note", "diagnostics file has an unexpected shape");
}

/* encodeURIComponent: one path segment of a from-url link. */
static void
uri_component(const char *s, char *out, size_t outlen)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	for (; *s && n + 4 < outlen; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("-_.!~*'()", c)) {
			out[n++] = (char)c;
		} else {
			out[n++] = '%';
			out[n++] = hex[c >> 4];
			out[n++] = hex[c & 15];
		}
	}
	out[n] = 0;
}

/* The link that opens a served profile in the Firefox Profiler, with this server as its
 * symbol server. */
void
gallery_firefox_url(const struct serve *s, const char *profile_path, char *link, size_t len)
{
	char url[1024], a[3200], b[1600];

	snprintf(url, sizeof(url), "%s%s", s->base_url, profile_path);
	uri_component(url, a, sizeof(a));
	uri_component(s->base_url, b, sizeof(b));
	snprintf(link, len, "https://profiler.firefox.com/from-url/%s/?symbolServer=%s", a, b);
}

static json_t *
firefox_link(const struct serve *s, const char *profile_path)
{
	char link[5000];

	gallery_firefox_url(s, profile_path, link, sizeof(link));
	return json_string(link);
}

void
gallery_list(struct serve *s, struct answer *a)
{
	size_t n, scanned;
	int more;
	char **names = scan(s->directory, &n, &scanned, &more), id[65], path[100];
	json_t *list = json_array();

	if (!names) {
		json_decref(list);
		answer_error(a, 500, "cannot read the directory");
		return;
	}
	for (size_t i = 0; i < n && i < SERVE_MAX_LIST; i++) {
		gallery_id(names[i], id);
		snprintf(path, sizeof(path), "/api/profile/%s", id);
		json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s, s:o, s:o}",
			"id", id, "file", names[i],
			"format", ends_with(names[i], ".jslb.gz") ? "jslb" : "json",
			"url", path, "firefox_url", firefox_link(s, path),
			"diagnostics", summary(s->directory, names[i])));
	}
	answer_json(a, json_pack("{s:o, s:I, s:I, s:b}", "profiles", list,
				 "matched", (json_int_t)n, "scanned", (json_int_t)scanned,
				 "truncated", more || n > SERVE_MAX_LIST));
	free_names(names, n);
}

void
gallery_profile(struct serve *s, const char *id, struct answer *a)
{
	size_t n, scanned;
	int more;
	char **names = scan(s->directory, &n, &scanned, &more), got[65], path[4096], why[300];
	const char *name = NULL;
	struct profile p;

	if (strlen(id) != 64 || id[strspn(id, "0123456789abcdef")]) {
		answer_error(a, 400, "a profile id is 64 lower-case hex digits");
		goto out;
	}
	for (size_t i = 0; i < n && i < SERVE_MAX_LIST && !name; i++) {
		gallery_id(names[i], got);
		if (strcmp(got, id) == 0)
			name = names[i];
	}
	if (!name) {
		answer_error(a, 404, "no profile has that id");
		goto out;
	}
	snprintf(path, sizeof(path), "%s/%s", s->directory, name);
	if (profile_load(path, &p, why, sizeof(why)) < 0) {
		answer_error(a, 422, "%s: %s", name, why);
		goto out;
	}
	modindex_add_libs(&s->mods, p.doc);
	free(a->body);
	a->body = p.json == (char *)p.data ? (char *)p.data : p.json;
	a->len = p.json_len;
	if (p.json == (char *)p.data)
		p.data = NULL;
	p.json = NULL;
	profile_free(&p);
	a->status = 200;
	a->type = "application/json";
out:
	free_names(names, n);
}

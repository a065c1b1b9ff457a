/* modindex: breakpad ids to build ids (see modindex.h). */
#include "modindex.h"

#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "breakpad.h"

static int
id_ok(const char *id)
{
	size_t n = strlen(id);

	return n >= 4 && n <= 128 && n % 2 == 0 && id[strspn(id, "0123456789abcdef")] == 0;
}

static int
set_str(char **dst, const char *s)
{
	if (*dst || !s || !*s)
		return 0;
	return (*dst = strdup(s)) ? 0 : -1;
}

int
modindex_add(struct modindex *x, const char *build_id, const char *path,
	     const char *debug_name)
{
	struct modent *e = NULL;

	if (!id_ok(build_id))
		return -1;
	for (size_t i = 0; i < x->n && !e; i++)
		if (strcmp(x->e[i].build_id, build_id) == 0)
			e = &x->e[i];
	if (!e) {
		if (x->n == MODINDEX_MAX)
			return -1;
		if (x->n == x->cap) {
			size_t cap = x->cap ? x->cap * 2 : 64;
			struct modent *n = realloc(x->e, cap * sizeof(*n));
			if (!n)
				return -1;
			x->e = n;
			x->cap = cap;
		}
		e = &x->e[x->n++];
		memset(e, 0, sizeof(*e));
		strcpy(e->build_id, build_id);
		breakpad_id(build_id, e->breakpad);
	}
	return set_str(&e->path, path) < 0 || set_str(&e->debug_name, debug_name) < 0 ? -1 : 0;
}

void
modindex_add_libs(struct modindex *x, void *profile)
{
	json_t *libs = json_object_get(profile, "libs"), *l;
	size_t i;

	json_array_foreach(libs, i, l) {
		const char *id = json_string_value(json_object_get(l, "codeId"));
		if (id)
			modindex_add(x, id, json_string_value(json_object_get(l, "path")),
				     json_string_value(json_object_get(l, "debugName")));
	}
}

static void
scan_prefix(struct modindex *x, const char *dir, const char *xx)
{
	char path[4096], id[160];
	struct dirent *d;
	DIR *dp;

	if ((size_t)snprintf(path, sizeof(path), "%s/.build-id/%s", dir, xx) >= sizeof(path) ||
	    !(dp = opendir(path)))
		return;
	while ((d = readdir(dp))) {
		size_t n = strcspn(d->d_name, ".");
		if (n > 126 || (d->d_name[n] && strcmp(d->d_name + n, ".debug") != 0))
			continue;
		snprintf(id, sizeof(id), "%s%.*s", xx, (int)n, d->d_name);
		modindex_add(x, id, NULL, NULL);
	}
	closedir(dp);
}

void
modindex_scan(struct modindex *x, const char *dir)
{
	char path[4096];
	struct dirent *d;
	DIR *dp;

	if ((size_t)snprintf(path, sizeof(path), "%s/.build-id", dir) < sizeof(path) &&
	    (dp = opendir(path))) {
		while ((d = readdir(dp)))
			if (strlen(d->d_name) == 2 &&
			    strspn(d->d_name, "0123456789abcdef") == 2)
				scan_prefix(x, dir, d->d_name);
		closedir(dp);
	}
	/* a debuginfod cache: HEX/debuginfo */
	if ((dp = opendir(dir))) {
		while ((d = readdir(dp)))
			if (id_ok(d->d_name))
				modindex_add(x, d->d_name, NULL, NULL);
		closedir(dp);
	}
}

const struct modent *
modindex_find(const struct modindex *x, const char *breakpad, const char *debug_name)
{
	const struct modent *any = NULL;

	for (size_t i = 0; i < x->n; i++) {
		const struct modent *e = &x->e[i];
		if (strcasecmp(e->breakpad, breakpad) != 0)
			continue;
		if (e->debug_name && debug_name && strcmp(e->debug_name, debug_name) == 0)
			return e;
		if (!any || (!any->path && e->path))
			any = e;
	}
	return any;
}

void
modindex_free(struct modindex *x)
{
	for (size_t i = 0; i < x->n; i++) {
		free(x->e[i].path);
		free(x->e[i].debug_name);
	}
	free(x->e);
	memset(x, 0, sizeof(*x));
}

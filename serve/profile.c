/* profile: loading and checking a Firefox profile file (see profile.h). */
#include "profile.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "errbuf.h"
#include "jslb.h"
#include "serve.h"

static int
inflate_fd(int fd, uint64_t max_out, uint8_t **out, size_t *outlen, char *err, size_t errlen)
{
	static uint8_t in[1 << 16];
	z_stream z = { 0 };
	size_t cap = 1 << 20, n = 0;
	uint8_t *buf = malloc(cap);
	int zr = Z_OK;
	ssize_t r;

	/* 16 + MAX_WBITS: a gzip member only */
	if (!buf || inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
		free(buf);
		return errbuf_fail(err, errlen, "out of memory");
	}
	while (zr != Z_STREAM_END && (r = read(fd, in, sizeof(in))) > 0) {
		z.next_in = in;
		z.avail_in = (uInt)r;
		while (z.avail_in && zr != Z_STREAM_END) {
			if (n == max_out) {
				zr = Z_BUF_ERROR;	/* more output is due: over the cap */
				goto done;
			}
			if (n == cap) {
				size_t ncap = cap * 2 > max_out ? (size_t)max_out : cap * 2;
				uint8_t *nb = realloc(buf, ncap);
				if (!nb) {
					zr = Z_MEM_ERROR;
					goto done;
				}
				buf = nb;
				cap = ncap;
			}
			size_t room = (cap < max_out ? cap : (size_t)max_out) - n;
			z.next_out = buf + n;
			z.avail_out = (uInt)room;
			zr = inflate(&z, Z_NO_FLUSH);
			n += room - z.avail_out;
			if (zr != Z_OK && zr != Z_STREAM_END)
				goto done;
		}
	}
done:
	inflateEnd(&z);
	if (zr != Z_STREAM_END) {
		free(buf);
		if (zr == Z_BUF_ERROR)
			return errbuf_fail(err, errlen, "decompresses to more than %llu bytes",
					   (unsigned long long)max_out);
		return errbuf_fail(err, errlen, "%s", zr == Z_MEM_ERROR ? "out of memory" :
				   "not a complete gzip file");
	}
	*out = buf;
	*outlen = n;
	return 0;
}

int
profile_gunzip_file(const char *path, uint64_t max_in, uint64_t max_out, uint8_t **out,
		    size_t *outlen, char *err, size_t errlen)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK), rc;

	if (fd < 0)
		return errbuf_fail(err, errlen, "cannot open: %s", strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		rc = errbuf_fail(err, errlen, "not a regular file");
	else if ((uint64_t)st.st_size > max_in)
		rc = errbuf_fail(err, errlen, "%lld bytes: more than the %llu allowed",
				 (long long)st.st_size, (unsigned long long)max_in);
	else
		rc = inflate_fd(fd, max_out, out, outlen, err, errlen);
	close(fd);
	return rc;
}

static size_t
table_len(json_t *t)
{
	json_int_t n = json_integer_value(json_object_get(t, "length"));

	return n > 0 ? (size_t)n : 0;
}

/* The viewer's limits on the tables a thread (or the shared part) holds. */
static int
check_tables(json_t *o, const char *what, char *err, size_t errlen)
{
	size_t n;

	if ((n = table_len(json_object_get(o, "samples"))) > SERVE_MAX_SAMPLES)
		return errbuf_fail(err, errlen, "%s: %zu samples, more than %d", what, n,
				   SERVE_MAX_SAMPLES);
	if ((n = table_len(json_object_get(o, "stackTable"))) > SERVE_MAX_STACKS)
		return errbuf_fail(err, errlen, "%s: %zu stacks, more than %d", what, n,
				   SERVE_MAX_STACKS);
	if ((n = table_len(json_object_get(o, "funcTable"))) > SERVE_MAX_FUNCTIONS)
		return errbuf_fail(err, errlen, "%s: %zu functions, more than %d", what, n,
				   SERVE_MAX_FUNCTIONS);
	return 0;
}

static int
check_doc(json_t *doc, char *err, size_t errlen)
{
	json_t *threads = json_object_get(doc, "threads"), *t;
	size_t i;

	if (!json_is_object(doc) || !json_is_object(json_object_get(doc, "meta")) ||
	    !json_is_array(threads))
		return errbuf_fail(err, errlen, "not a Firefox processed profile (no meta or threads)");
	if (json_array_size(threads) > SERVE_MAX_THREADS)
		return errbuf_fail(err, errlen, "%zu threads, more than %d",
				   json_array_size(threads), SERVE_MAX_THREADS);
	if (check_tables(json_object_get(doc, "shared"), "shared", err, errlen) < 0)
		return -1;
	json_array_foreach(threads, i, t) {
		char what[40];
		snprintf(what, sizeof(what), "thread %zu", i);
		if (check_tables(t, what, err, errlen) < 0)
			return -1;
	}
	return 0;
}

static int
decode_jslb(struct profile *p, char *err, size_t errlen)
{
	FILE *f = open_memstream(&p->json, &p->json_len);
	char why[200];
	int rc;

	if (!f)
		return errbuf_fail(err, errlen, "out of memory");
	rc = jslb_decode(p->data, p->len, f, SERVE_MAX_DECOMPRESSED, why, sizeof(why));
	if (fclose(f) != 0 && rc == 0)
		return errbuf_fail(err, errlen, "out of memory");
	return rc < 0 ? errbuf_fail(err, errlen, "JSLB: %s", why) : 0;
}

int
profile_load(const char *path, struct profile *p, char *err, size_t errlen)
{
	json_error_t je;

	memset(p, 0, sizeof(*p));
	if (profile_gunzip_file(path, SERVE_MAX_COMPRESSED, SERVE_MAX_DECOMPRESSED, &p->data,
				&p->len, err, errlen) < 0)
		return -1;
	p->jslb = p->len >= 8 && memcmp(p->data, JSLB_MAGIC, 8) == 0;
	if (p->jslb) {
		if (decode_jslb(p, err, errlen) < 0)
			goto fail;
	} else {
		p->json = (char *)p->data;
		p->json_len = p->len;
	}
	if (!(p->doc = json_loadb(p->json, p->json_len, 0, &je))) {
		errbuf_fail(err, errlen, "not JSON: %s (line %d)", je.text, je.line);
		goto fail;
	}
	if (check_doc(p->doc, err, errlen) < 0)
		goto fail;
	return 0;
fail:
	profile_free(p);
	return -1;
}

void
profile_free(struct profile *p)
{
	if (p->json != (char *)p->data)
		free(p->json);
	free(p->data);
	json_decref(p->doc);
	memset(p, 0, sizeof(*p));
}

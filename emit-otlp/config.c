#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "defaults.h"
#include "errbuf.h"
#include "parse.h"

#define ENV_P "OTEL_EXPORTER_OTLP_PROFILES_"
#define ENV_G "OTEL_EXPORTER_OTLP_"

/* A variable that is set and not empty, or NULL. */
static const char *
env(const char *name)
{
	const char *v = getenv(name);

	return v && v[0] ? v : NULL;
}

/* The setting from the command line, else the Profiles variable, else the generic one;
 * *from names where it came from (for messages), *generic says it was the generic one. */
static const char *
pick(const char *cli, const char *opt, const char *suffix, const char **from, int *generic,
     char names[2][64])
{
	const char *v;

	snprintf(names[0], 64, ENV_P "%s", suffix);
	snprintf(names[1], 64, ENV_G "%s", suffix);
	if (generic)
		*generic = 0;
	if (cli) {
		*from = opt;
		return cli;
	}
	if ((v = env(names[0]))) {
		*from = names[0];
		return v;
	}
	if ((v = env(names[1]))) {
		*from = names[1];
		if (generic)
			*generic = 1;
		return v;
	}
	return NULL;
}

static char *
xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d) {
		fputs("emit-otlp: out of memory\n", stderr);
		exit(1);
	}
	return d;
}

/* http(s)://[host][:port][/path], without user information; the path OTLP_PATH when a
 * generic endpoint (always appended) or a command-line one without a path. */
static int
parse_endpoint(struct config *c, const char *url, const char *from, int append, char *err,
	       size_t errlen)
{
	size_t skip = !strncasecmp(url, "https://", 8) ? 8 : !strncasecmp(url, "http://", 7) ? 7 : 0;
	const char *auth = url + skip, *end = auth + strcspn(auth, "/?#"), *colon;
	char port[8];

	for (const char *p = url; *p; p++)
		if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f)
			return errbuf_fail(err, errlen, "%s: the URL has a space or a control "
					   "character", from);
	if (!skip)
		return errbuf_fail(err, errlen, "%s: '%s' is not an http:// or https:// URL", from,
				   url);
	if (memchr(auth, '@', (size_t)(end - auth)))
		return errbuf_fail(err, errlen, "%s: the URL must not include credentials", from);
	if (*end == '?' || *end == '#')
		return errbuf_fail(err, errlen, "%s: '%s' has a query or fragment", from, url);
	c->https = skip == 8;
	colon = memchr(auth, ':', (size_t)(end - auth));
	if (auth[0] == '[') {   /* an IPv6 literal: the port follows its ']' */
		const char *rb = memchr(auth, ']', (size_t)(end - auth));

		if (!rb)
			return errbuf_fail(err, errlen, "%s: '%s' has a bad host", from, url);
		colon = rb + 1 < end && rb[1] == ':' ? rb + 1 : NULL;
		if (!colon && rb + 1 != end)
			return errbuf_fail(err, errlen, "%s: '%s' has a bad host", from, url);
	}
	if ((colon ? colon : end) == auth)
		return errbuf_fail(err, errlen, "%s: '%s' has no host", from, url);
	c->host = strndup(auth, (size_t)((colon ? colon : end) - auth));
	c->port = c->https ? 443 : 80;
	if (colon) {
		uint64_t n;
		size_t plen = (size_t)(end - colon - 1);

		snprintf(port, sizeof(port), "%.*s", (int)(plen < 7 ? plen : 7), colon + 1);
		if (plen == 0 || plen > 5 || parse_u64(port, 1, 65535, &n, err, errlen) < 0)
			return errbuf_fail(err, errlen, "%s: '%s' has a bad port", from, url);
		c->port = (uint16_t)n;
	}
	size_t n = strlen(url) + sizeof(OTLP_PATH) + 1, len = strlen(url);
	if (!(c->url = malloc(n)) || !c->host)
		return errbuf_fail(err, errlen, "out of memory");
	if (append && len && url[len - 1] == '/')
		len--;
	else if (!append && (*end == '\0' || !strcmp(end, "/")))
		len = (size_t)(end - url), append = 1;  /* no path: the Profiles one */
	snprintf(c->url, n, "%.*s%s", (int)len, url, append ? OTLP_PATH : "");
	return 0;
}

static int
hexval(int ch)
{
	return isdigit(ch) ? ch - '0' : isxdigit(ch) ? (tolower(ch) - 'a' + 10) : -1;
}

/* %XX escapes of an environment value decoded in place (W3C Baggage, as OTel uses). */
static void
percent_decode(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '%' && hexval(s[1]) >= 0 && hexval(s[2]) >= 0) {
			*o++ = (char)(hexval(s[1]) * 16 + hexval(s[2]));
			s += 2;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

static char *
trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	return s;
}

/* RFC 9110 token characters: a header name. */
static int
is_token(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("!#$%&'*+-.^_`|~", *s))
			return 0;
	return 1;
}

/* One KEY=VALUE into kv (replacing an earlier entry of the same key).  Header values are
 * never shown: a bad one is named by its key. */
static int
put_kv(struct config_kv *kv, size_t *n, size_t max, char *item, int header, int decode,
       const char *from, char *err, size_t errlen)
{
	char *eq = strchr(item, '='), *k, *v;
	size_t i;

	if (!eq)
		return errbuf_fail(err, errlen, "%s: an entry is not KEY=VALUE", from);
	*eq = '\0';
	k = trim(item);
	v = trim(eq + 1);
	if (decode)
		percent_decode(k), percent_decode(v);
	if (header && !is_token(k))
		return errbuf_fail(err, errlen, "%s: '%s' is not a header name", from, k);
	if (!header && !k[0])
		return errbuf_fail(err, errlen, "%s: an attribute has no key", from);
	for (const char *p = v; *p; p++)
		if ((unsigned char)*p < ' ' || *p == 0x7f)
			return errbuf_fail(err, errlen, "%s: the value of '%s' has a control "
					   "character", from, k);
	for (i = 0; i < *n && strcmp(kv[i].key, k); i++)
		;
	if (i == max)
		return errbuf_fail(err, errlen, "%s: more than %zu entries", from, max);
	if (i == *n)
		kv[(*n)++].key = xstrdup(k);
	free(kv[i].value);
	kv[i].value = xstrdup(v);
	return 0;
}

/* A comma-separated list of KEY=VALUE (an environment value). */
static int
put_list(struct config_kv *kv, size_t *n, size_t max, const char *list, int header,
	 const char *from, char *err, size_t errlen)
{
	char *copy = xstrdup(list), *save = NULL, *item;
	int rc = 0;

	for (item = strtok_r(copy, ",", &save); item && rc == 0; item = strtok_r(NULL, ",", &save))
		if (*trim(item))
			rc = put_kv(kv, n, max, item, header, 1, from, err, errlen);
	/* The copy may hold a header value: gone before it is freed. */
	memset(copy, 0, strlen(list));
	free(copy);
	return rc;
}

static int
resolve_headers(struct config *c, const struct config_cli *cli, char *err, size_t errlen)
{
	char names[2][64];
	const char *from, *v;

	if (cli->nheaders) {
		for (size_t i = 0; i < cli->nheaders; i++) {
			char *item = xstrdup(cli->headers[i]);
			int rc = put_kv(c->headers, &c->nheaders, CONFIG_MAX_HEADERS, item, 1, 0,
					"--otlp-header", err, errlen);

			memset(item, 0, strlen(cli->headers[i]));
			free(item);
			if (rc < 0)
				return -1;
		}
		return 0;
	}
	if ((v = pick(NULL, NULL, "HEADERS", &from, NULL, names)))
		return put_list(c->headers, &c->nheaders, CONFIG_MAX_HEADERS, v, 1, from, err,
				errlen);
	return 0;
}

static int
resolve_attrs(struct config *c, const struct config_cli *cli, char *err, size_t errlen)
{
	const char *v = env("OTEL_RESOURCE_ATTRIBUTES");

	if (v && put_list(c->attrs, &c->nattrs, CONFIG_MAX_ATTRS, v, 0,
			  "OTEL_RESOURCE_ATTRIBUTES", err, errlen) < 0)
		return -1;
	/* OTEL_SERVICE_NAME wins over a service.name in OTEL_RESOURCE_ATTRIBUTES. */
	if ((v = env("OTEL_SERVICE_NAME"))) {
		char item[4200];

		snprintf(item, sizeof(item), "service.name=%s", v);
		if (put_kv(c->attrs, &c->nattrs, CONFIG_MAX_ATTRS, item, 0, 0, "OTEL_SERVICE_NAME",
			   err, errlen) < 0)
			return -1;
	}
	for (size_t i = 0; i < cli->nattrs; i++) {
		char *item = xstrdup(cli->attrs[i]);
		int rc = put_kv(c->attrs, &c->nattrs, CONFIG_MAX_ATTRS, item, 0, 0,
				"--resource-attribute", err, errlen);

		free(item);
		if (rc < 0)
			return -1;
	}
	return 0;
}

static int
resolve_timeout(struct config *c, const struct config_cli *cli, char *err, size_t errlen)
{
	char names[2][64], why[160];
	const char *from, *v = pick(cli->timeout, "--otlp-timeout", "TIMEOUT", &from, NULL, names);
	uint64_t ns, ms;

	if (!v || cli->timeout) {
		if (parse_duration(v ? v : RP_DEFAULT_OTLP_TIMEOUT, &ns, why, sizeof(why)) < 0)
			return errbuf_fail(err, errlen, "--otlp-timeout: %s", why);
		if (ns < 1000000)
			return errbuf_fail(err, errlen, "--otlp-timeout: '%s' is below 1ms", v);
		c->timeout_ms = ns / 1000000;
		return 0;
	}
	if (parse_u64(v, 1, 86400000, &ms, why, sizeof(why)) < 0)
		return errbuf_fail(err, errlen, "%s: '%s' is not a number of milliseconds from 1 "
				   "to 86400000", from, v);
	c->timeout_ms = ms;
	return 0;
}

static int
resolve_transport(struct config *c, const struct config_cli *cli, char *err, size_t errlen)
{
	char names[2][64];
	const char *from, *v;

	v = pick(NULL, NULL, "PROTOCOL", &from, NULL, names);
	if (v && strcmp(v, "http/protobuf"))
		return errbuf_fail(err, errlen, "%s: '%s' is not supported (only http/protobuf)",
				   from, v);
	v = pick(cli->compression, "--otlp-compression", "COMPRESSION", &from, NULL, names);
	if (!v)
		v = RP_DEFAULT_OTLP_COMPRESSION;
	if (strcmp(v, "gzip") && strcmp(v, "none"))
		return errbuf_fail(err, errlen, "%s: '%s' is not none or gzip", from, v);
	c->gzip = !strcmp(v, "gzip");
	if ((v = pick(cli->ca, "--otlp-ca", "CERTIFICATE", &from, NULL, names))) {
		FILE *f = fopen(v, "r");

		if (!f)
			return errbuf_fail(err, errlen, "%s: cannot read '%s': %m", from, v);
		fclose(f);
		c->ca = xstrdup(v);
	}
	return resolve_timeout(c, cli, err, errlen);
}

int
config_resolve(struct config *c, const struct config_cli *cli, char *err, size_t errlen)
{
	char names[2][64];
	const char *from, *v;
	int generic;

	memset(c, 0, sizeof(*c));
	v = pick(cli->endpoint, "--otlp-endpoint", "ENDPOINT", &from, &generic, names);
	if (!v)
		return 0;       /* no endpoint: no export, nothing else matters */
	c->enabled = 1;
	if (parse_endpoint(c, v, from, generic, err, errlen) < 0 ||
	    resolve_transport(c, cli, err, errlen) < 0 ||
	    resolve_headers(c, cli, err, errlen) < 0 || resolve_attrs(c, cli, err, errlen) < 0)
		return -1;
	return 0;
}

static void
free_kv(struct config_kv *kv, size_t n, int wipe)
{
	for (size_t i = 0; i < n; i++) {
		if (wipe && kv[i].value)
			memset(kv[i].value, 0, strlen(kv[i].value));
		free(kv[i].key);
		free(kv[i].value);
	}
}

void
config_release(struct config *c)
{
	free_kv(c->headers, c->nheaders, 1);
	free_kv(c->attrs, c->nattrs, 0);
	free(c->url);
	free(c->host);
	free(c->ca);
	memset(c, 0, sizeof(*c));
}

void
config_redact(const struct config *c, char *s)
{
	for (size_t i = 0; i < c->nheaders; i++) {
		const char *v = c->headers[i].value;
		size_t n = strlen(v);
		char *p;

		if (n < 4)
			continue;
		/* The text only shrinks (n > 3): it stays inside its size. */
		while ((p = strstr(s, v))) {
			memmove(p + 3, p + n, strlen(p + n) + 1);
			memcpy(p, "***", 3);
		}
	}
}

/* dbgurl: checking a --debuginfod URL (see dbgurl.h). */
#include "dbgurl.h"

#include <stdlib.h>
#include <string.h>

static const char *
after_scheme(const char *u)
{
	return !strncmp(u, "http://", 7) ? u + 7 : !strncmp(u, "https://", 8) ? u + 8 : NULL;
}

int
debuginfod_url_ok(const char *u)
{
	const char *rest = after_scheme(u);

	return rest && rest[0] && rest[0] != '/' && !strpbrk(u, " \t\r\n");
}

unsigned
debuginfod_url_port(const char *u)
{
	const char *host = after_scheme(u), *end, *colon;

	if (!debuginfod_url_ok(u))
		return 0;
	end = host + strcspn(host, "/?#");
	/* [v6]:port, or host:port */
	colon = host[0] == '[' ? memchr(host, ']', (size_t)(end - host)) : host;
	if (!colon)
		return 0;
	colon = memchr(colon, ':', (size_t)(end - colon));
	if (!colon)
		return u[4] == 's' ? 443 : 80;
	char *e;
	unsigned long p = strtoul(colon + 1, &e, 10);
	return e == end && e != colon + 1 && p >= 1 && p <= 65535 ? (unsigned)p : 0;
}

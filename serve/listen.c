/* listen: parsing --listen and binding it (see listen.h). */
#include "listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "errbuf.h"

static int
is_loopback(const struct sockaddr *a)
{
	if (a->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr) >> 24) == 127;
	if (a->sa_family == AF_INET6) {
		const struct in6_addr *x = &((const struct sockaddr_in6 *)a)->sin6_addr;
		return IN6_IS_ADDR_LOOPBACK(x) ||
		       (IN6_IS_ADDR_V4MAPPED(x) && x->s6_addr[12] == 127);
	}
	return 0;
}

/* HOST:PORT into host and port; [V6]:PORT drops the brackets. */
static int
split(const char *spec, char *host, size_t hostlen, char *port, size_t portlen)
{
	const char *colon = strrchr(spec, ':');
	size_t n;

	if (!colon || !colon[1] || strlen(colon + 1) >= portlen ||
	    colon[1 + strspn(colon + 1, "0123456789")])
		return -1;
	n = (size_t)(colon - spec);
	if (spec[0] == '[') {
		if (n < 3 || spec[n - 1] != ']')
			return -1;
		spec++;
		n -= 2;
	}
	if (!n || n >= hostlen)
		return -1;
	memcpy(host, spec, n);
	host[n] = 0;
	strcpy(port, colon + 1);
	return 0;
}

int
listen_on(const char *spec, int *loopback, char *base, size_t baselen, char *err,
	  size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE };
	struct addrinfo *res = NULL;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[256], port[8];
	int fd = -1, one = 1, rc;

	if (split(spec, host, sizeof(host), port, sizeof(port)) < 0 || atoi(port) > 65535)
		return errbuf_fail(err, errlen, "--listen '%s': expected HOST:PORT", spec);
	if ((rc = getaddrinfo(host, port, &hints, &res)) != 0)
		return errbuf_fail(err, errlen, "--listen '%s': %s", spec, gai_strerror(rc));
	/* the first address only: a name that is loopback for one family is for both */
	*loopback = is_loopback(res->ai_addr);
	if ((fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 64) < 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
		errbuf_fail(err, errlen, "--listen '%s': %s", spec, strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = -1;
	} else {
		unsigned p = ntohs(ss.ss_family == AF_INET ?
				   ((struct sockaddr_in *)&ss)->sin_port :
				   ((struct sockaddr_in6 *)&ss)->sin6_port);
		snprintf(base, baselen, strchr(host, ':') ? "http://[%s]:%u" : "http://%s:%u",
			 host, p);
	}
	freeaddrinfo(res);
	return fd;
}

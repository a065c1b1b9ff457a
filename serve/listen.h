/* listen: the --listen socket, bound before the stage confines itself. */
#ifndef RP_SERVE_LISTEN_H
#define RP_SERVE_LISTEN_H

#include <stddef.h>

/* Binds and listens on HOST:PORT ([V6]:PORT for IPv6; port 0 picks one).  Returns the
 * socket, with *loopback set when every address it listens on is a loopback one and
 * base (baselen bytes) set to http://HOST:PORT; -1 with a reason in err. */
int listen_on(const char *spec, int *loopback, char *base, size_t baselen, char *err,
	      size_t errlen);

#endif

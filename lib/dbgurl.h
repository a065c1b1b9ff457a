/* The manual's rule for a --debuginfod value, shared by check, unwind and serve. */
#ifndef RP_DBGURL_H
#define RP_DBGURL_H

/* 1 when u is an http:// or https:// URL with a host and no white space, else 0. */
int debuginfod_url_ok(const char *u);

/* The TCP port the URL names (its default, 80 or 443, when it names none), or 0 when the
 * URL is not acceptable or its port is not a number from 1 to 65535. */
unsigned debuginfod_url_port(const char *u);

#endif

/*
 * libcurl, opened at the first control-plane request (collect/ctrhttp.c) rather than linked:
 * linked, it and the TLS, Kerberos and LDAP libraries it pulls in cost every start of
 * collect some 20 ms of relocation, and only Docker and Kubernetes targets use it.
 */
#ifndef COLLECT_CURLSO_H
#define COLLECT_CURLSO_H

#include <curl/curl.h>
#include <stddef.h>

struct curl_so {
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *c, CURLoption opt, ...);
	CURLcode (*easy_perform)(CURL *c);
	CURLcode (*easy_getinfo)(CURL *c, CURLINFO info, ...);
	void (*easy_cleanup)(CURL *c);
	const char *(*easy_strerror)(CURLcode rc);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
};

/* The library's functions, opened and initialised once; NULL with err when libcurl.so.4
 * cannot be opened or lacks one of them. */
const struct curl_so *curl_so(char *err, size_t errlen);

#endif

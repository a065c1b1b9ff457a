/* Opens libcurl.so.4 once and looks its functions up (curlso.h). */
#include "curlso.h"
#include "errbuf.h"

#include <dlfcn.h>

static struct curl_so so;
static int loaded;

static int
lookup(void *h)
{
	static const char *const names[] = {
		"curl_global_init", "curl_easy_init", "curl_easy_setopt", "curl_easy_perform",
		"curl_easy_getinfo", "curl_easy_cleanup", "curl_easy_strerror",
		"curl_slist_append", "curl_slist_free_all",
	};
	void **slots[] = {
		(void **)&so.global_init, (void **)&so.easy_init, (void **)&so.easy_setopt,
		(void **)&so.easy_perform, (void **)&so.easy_getinfo, (void **)&so.easy_cleanup,
		(void **)&so.easy_strerror, (void **)&so.slist_append,
		(void **)&so.slist_free_all,
	};
	_Static_assert(sizeof(names) / sizeof(names[0]) == sizeof(slots) / sizeof(slots[0]),
		       "one name per function");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!(*slots[i] = dlsym(h, names[i])))
			return -1;
	return 0;
}

const struct curl_so *
curl_so(char *err, size_t errlen)
{
	void *h;
	if (loaded)
		return &so;
	if (!(h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL))) {
		errbuf_fail(err, errlen, "container targets need libcurl: %s", dlerror());
		return NULL;
	}
	if (lookup(h) < 0) {
		errbuf_fail(err, errlen, "libcurl.so.4 lacks a function it should have");
		return NULL;
	}
	if (so.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		errbuf_fail(err, errlen, "cannot initialise libcurl");
		return NULL;
	}
	loaded = 1;
	return &so;
}

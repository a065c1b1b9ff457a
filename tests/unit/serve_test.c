/* serve's small rules: the --debuginfod URL and its port (lib/dbgurl.c), the bearer token
 * comparison (serve/http.c), the request parsers (serve/reqparse.c) and the module index's
 * breakpad matching (serve/modindex.c). */
#include <stdio.h>
#include <string.h>

#include "../../serve/http.h"
#include "../../serve/modindex.h"
#include "../../serve/reqparse.h"
#include "dbgurl.h"

#include "check.h"

#define B(s) (s), strlen(s)	/* a body and its length */

static void
urls(void)
{
	CHECK(debuginfod_url_ok("http://127.0.0.1:8002"));
	CHECK(debuginfod_url_ok("https://debuginfod.debian.net"));
	CHECK(!debuginfod_url_ok("ftp://x"));
	CHECK(!debuginfod_url_ok("http://"));
	CHECK(!debuginfod_url_ok("http:///path"));
	CHECK(!debuginfod_url_ok("http://a b"));
	CHECK(debuginfod_url_port("http://127.0.0.1:8002") == 8002);
	CHECK(debuginfod_url_port("http://127.0.0.1:8002/sub") == 8002);
	CHECK(debuginfod_url_port("http://host") == 80);
	CHECK(debuginfod_url_port("https://host/x") == 443);
	CHECK(debuginfod_url_port("http://[::1]:9000/") == 9000);
	CHECK(debuginfod_url_port("http://[::1]/") == 80);
	CHECK(debuginfod_url_port("http://host:0") == 0);
	CHECK(debuginfod_url_port("http://host:70000") == 0);
	CHECK(debuginfod_url_port("http://host:12x") == 0);
}

static void
tokens(void)
{
	CHECK(http_token_ok("Bearer 0123456789abcdef", "0123456789abcdef"));
	CHECK(!http_token_ok("Bearer 0123456789abcde", "0123456789abcdef"));
	CHECK(!http_token_ok("Bearer 0123456789abcdefg", "0123456789abcdef"));
	CHECK(!http_token_ok("Basic 0123456789abcdef", "0123456789abcdef"));
	CHECK(!http_token_ok(NULL, "0123456789abcdef"));
	CHECK(!http_token_ok("Bearer ", "0123456789abcdef"));
}

static void
requests(void)
{
	struct symreq r;
	struct asmreq a;
	char err[300];
	uint32_t v;
	const char *one = "{\"memoryMap\":[[\"demo\",\"AB\"]],\"stacks\":[[[0,1],[0,4294967295]]]}";

	CHECK(reqparse_hex32("0x1a2B", &v) == 0 && v == 0x1a2b);
	CHECK(reqparse_hex32("0xffffffff", &v) == 0 && v == 0xffffffffu);
	CHECK(reqparse_hex32("0x100000000", &v) < 0);
	CHECK(reqparse_hex32("12", &v) < 0 && reqparse_hex32("0x", &v) < 0);
	CHECK(symreq_parse(one, strlen(one), &r, err, sizeof(err)) == 0);
	CHECK(r.njobs == 1 && r.jobs[0].nstacks == 1 && r.jobs[0].stacks[0].n == 2);
	CHECK(r.jobs[0].stacks[0].frames[1].address == 4294967295u);
	symreq_free(&r);
	CHECK(symreq_parse(B("{\"memoryMap\":[[\"a\",\"0\"]],\"stacks\":[[[0,4294967296]]]}"),
			   &r, err, sizeof(err)) < 0);
	CHECK(symreq_parse(B("{\"jobs\":[{\"memoryMap\":[[\"../a\",\"0\"]],\"stacks\":[]}]}"), &r,
			   err, sizeof(err)) < 0);
	CHECK(strstr(err, "memoryMap[0]") != NULL);
	CHECK(asmreq_parse(B("{\"codeId\":\"ab\",\"startAddress\":\"0x10\",\"size\":\"0x4\"}"), &a,
			   err, sizeof(err)) == 0 && a.start == 16 && a.size == 4);
	CHECK(asmreq_parse(B("{\"startAddress\":\"0x10\",\"size\":\"0x4\"}"), &a, err,
			   sizeof(err)) < 0);
}

static void
modules(void)
{
	struct modindex x = { 0 };

	CHECK(modindex_add(&x, "4f1c2e9a7b3d5e6f8091a2b3c4d5e6f708192a3b", NULL, NULL) == 0);
	CHECK(modindex_add(&x, "4f1c2e9a7b3d5e6f8091a2b3c4d5e6f708192a3b", "/p/demo", "demo") == 0);
	CHECK(x.n == 1 && x.e[0].path && strcmp(x.e[0].path, "/p/demo") == 0);
	CHECK(modindex_add(&x, "XYZ", NULL, NULL) < 0);
	const struct modent *e = modindex_find(&x, "9a2e1c4f3d7b6f5e8091a2b3c4d5e6f70", "demo");
	CHECK(e && strcmp(e->build_id, "4f1c2e9a7b3d5e6f8091a2b3c4d5e6f708192a3b") == 0);
	CHECK(!modindex_find(&x, "9A2E1C4F3D7B6F5E8091A2B3C4D5E6F71", "demo"));
	modindex_free(&x);
}

int
main(void)
{
	urls();
	tokens();
	requests();
	modules();
	printf("serve_test: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}

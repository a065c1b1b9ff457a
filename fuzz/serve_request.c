/* libFuzzer target: serve's request bodies (serve/reqparse.c), the JSON of POST
 * /symbolicate/v5, /source/v1 and /asm/v1, parsed by jansson and checked field by field.
 * The first byte picks the parser, the rest is the body. */
#include <stdint.h>
#include <stdlib.h>

#include "../serve/reqparse.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symreq s;
	struct sourcereq src;
	struct asmreq a;
	char err[300];

	if (size < 1)
		return 0;
	const char *body = (const char *)data + 1;
	size_t len = size - 1;
	switch (data[0] % 3) {
	case 0:
		if (symreq_parse(body, len, &s, err, sizeof(err)) == 0) {
			/* what the handler walks: every frame's module is in range */
			for (size_t i = 0; i < s.njobs; i++)
				for (size_t k = 0; k < s.jobs[i].nstacks; k++)
					for (size_t f = 0; f < s.jobs[i].stacks[k].n; f++)
						if (s.jobs[i].stacks[k].frames[f].module >=
						    s.jobs[i].nmodules)
							abort();
			symreq_free(&s);
		}
		break;
	case 1:
		if (sourcereq_parse(body, len, &src, err, sizeof(err)) == 0)
			sourcereq_free(&src);
		break;
	default:
		(void)asmreq_parse(body, len, &a, err, sizeof(err));
		break;
	}
	return 0;
}

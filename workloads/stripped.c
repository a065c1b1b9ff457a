/*
 * stripped [SECONDS]: a CPU loop with named functions, shipped without symbols.  build.sh
 * strips the binary and keeps its DWARF apart, two ways:
 *   debuglink/stripped + debuglink/stripped.debug      found through .gnu_debuglink
 *   buildid/stripped_bid + symdir/.build-id/xx/rest.debug  found through the build ID
 * so a test of each lookup path names symbols only that path can give.
 *
 * Stacks (leaf first): stripped_hot <- stripped_outer <- main.  stripped_hot reads the
 * clock between chunks, so it is not a leaf and keeps its frame pointer under GCC 12.
 */
#include "common.h"

#ifndef LAYOUT
#define LAYOUT "debuglink"	/* build.sh varies it so the two copies get distinct build IDs */
#endif

#define CHUNK 100000		/* arithmetic between clock reads */

volatile uint64_t sink;
const char stripped_layout[] = LAYOUT;

WL_KEEP int stripped_hot(uint64_t deadline)
{
	uint64_t x = sink;

	for (int i = 0; i < CHUNK; i++)
		x = x * 6364136223846793005u + 1442695040888963407u;
	sink = x;
	return wl_expired(deadline);
}

WL_KEEP void stripped_outer(uint64_t deadline)
{
	while (!stripped_hot(deadline))
		;
}

int main(int argc, char **argv)
{
	stripped_outer(wl_deadline(argc, argv));
	return stripped_layout[0] == '\0';
}

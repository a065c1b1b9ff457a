/* libFuzzer target: collect's reading of a target's ELF file (elfid.c: the build id note,
 * through the program headers or the section headers, and the machine), on arbitrary bytes
 * behind a file descriptor as collect has them.  collect runs as root and the file is the
 * target's to shape. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../collect/elfid.h"
#include "fuzz.h"
#include "stream.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t id[STREAM_BUILD_ID_MAX + 1];
	int fd = fuzz_input_fd(data, size);
	if (fd < 0)
		return 0;
	memset(id, 0xa5, sizeof(id));
	int n = elfid_build_id(fd, id, STREAM_BUILD_ID_MAX);
	/* Never more than asked for. */
	if (n < 0 || n > STREAM_BUILD_ID_MAX || id[STREAM_BUILD_ID_MAX] != 0xa5)
		abort();
	(void)elfid_machine(fd);
	close(fd);
	return 0;
}

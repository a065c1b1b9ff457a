/* libFuzzer target: import's perf.data / simpleperf parser on arbitrary bytes, output to
 * /dev/null.  Any input must end in success or a one-line error, never a crash. */
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include "../import/import.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct imp m;
	static int null_fd = -1;
	if (null_fd < 0)
		null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	imp_init(&m, null_fd);
	src_open_mem(&m.src, data, size);
	(void)perfdata_run(&m);
	imp_release(&m);
	return 0;
}

/*
 * import on the real captures of ../shared/fixtures/captures (perf.data of perf 3.4 to 6.16,
 * simpleperf; x86_64, i686 and aarch64 machines): each gives the number of samples of its
 * README (the event import picks by default), and a digest of the stream it writes.
 *
 * The digest is what `make check-aarch64` compares: the same captures imported by the
 * aarch64 build under qemu-user must give the same streams byte for byte as the native
 * build, which shows the readers and the stream codec free of the host's word size,
 * alignment and byte-order assumptions.  The session id is fixed so the stream is too.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../import/import.h"
#include "check.h"

static const struct {
	const char *name;
	uint64_t samples;
} captures[] = {
	{ "x86_64-fp-systemwide-perf3.8.perf.data", 1768 },
	{ "x86_64-dwarf-vector-gcc-perf4.18.perf.data", 45 },
	{ "x86_64-dwarf-zstd-parallel-perf5.18.perf.data", 233 },
	{ "x86_64-newabi-sleep-perf6.16.perf.data", 7 },
	{ "x86_64-compressed2-pipe-sleep-perf6.16.perf.data", 7 },
	{ "x86_64-multievent-hw-sw-systemwide-perf3.4.perf.data", 4734 },
	{ "x86_64-pipe-group-perf6.8.perf.data", 11 },
	{ "i686-multievent-systemwide-perf3.4.perf.data", 147 },
	{ "x86_64-cpuclock-pie-perf5.19.perf.data", 487 },
	{ "aarch64-cycles-fib-perf4.0.perf.data", 871 },
	{ "aarch64-zstd-pipe-sleep-perf6.5.perf.data", 8 },
	{ "simpleperf-aarch64-android-app-cpuclock-callgraph.data", 525 },
	{ "simpleperf-x86_64-dwarf-small.data", 10 },
	{ "simpleperf-x86_64-two-events.data", 2 },
	{ "simpleperf-aarch64-trace-offcpu.data", 2270 },
	{ "simpleperf-x86_64-dumped-symbols.data", 935 },
};

/* FNV-1a over the stream file, and its samples counted with the stream reader. */
static int
digest(int fd, uint64_t *hash, uint64_t *samples)
{
	struct stream_reader r = { 0 };
	struct stream_header h;
	struct frame f;
	uint8_t buf[65536];
	ssize_t n;
	*hash = 0xcbf29ce484222325ull;
	*samples = 0;
	if (lseek(fd, 0, SEEK_SET) < 0)
		return -1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			*hash = (*hash ^ buf[i]) * 0x100000001b3ull;
	if (n < 0 || lseek(fd, 0, SEEK_SET) < 0 ||
	    stream_reader_open(&r, fd, "stream", &h) < 0)
		return -1;
	int rc;
	while ((rc = stream_read(&r, &f)) == 1)
		*samples += f.type == FR_SAMPLE || f.type == FR_SAMPLE_REGS;
	if (rc < 0)
		fprintf(stderr, "fixtures_test: %s\n", r.err);
	stream_reader_release(&r);
	return rc;
}

static void
one(const char *dir, const char *name, uint64_t want)
{
	char path[4096], out[] = "/tmp/fixtures_test.XXXXXX";
	static struct imp m;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int in = open(path, O_RDONLY | O_CLOEXEC), fd = mkstemp(out);
	CHECK(in >= 0 && fd >= 0);
	if (in < 0 || fd < 0) {
		fprintf(stderr, "fixtures_test: %s: %s\n", path, strerror(errno));
		return;
	}
	unlink(out);
	char e[200];
	CHECK(imp_init(&m, fd) == 0);
	m.session_id = 0x5eed;
	CHECK(src_open_fd(&m.src, in, e, sizeof(e)) == 0);
	int rc = perfdata_run(&m);
	CHECK(rc == 0);
	if (rc < 0)
		fprintf(stderr, "fixtures_test: %s: %s\n", name, m.err);
	imp_release(&m);
	uint64_t hash, samples;
	CHECK(digest(fd, &hash, &samples) == 0);
	CHECK(samples == want);
	printf("fixture %s: %llu samples, stream %016llx\n", name, (unsigned long long)samples,
	       (unsigned long long)hash);
	close(in);
	close(fd);
}

int
main(void)
{
	const char *dir = getenv("RP_FIXTURES");
	struct stat st;
	if (!dir)
		dir = "../shared/fixtures/captures";
	if (stat(dir, &st) < 0) {
		printf("fixtures_test: no captures at %s: skipped\n", dir);
		return 0;
	}
	for (size_t i = 0; i < sizeof(captures) / sizeof(*captures); i++)
		one(dir, captures[i].name, captures[i].samples);
	printf("fixtures_test: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}

/* libFuzzer target: commit's frame handling (commit/main.c's handle: the target, warnings,
 * window starts and file frames kept, each ended window's diagnostics JSON written and its
 * files renamed into place, --keep-windows applied) on a whole stream, as commit reads it
 * at the end of the pipeline.  Before each file frame is handed on, the temporary file it
 * names is created, as its emitter would have, when the name is one commit accepts.  All of
 * it happens in a private directory, emptied after each input; the header's session id
 * picks --keep-windows 1..4. */
#include "stage.h"
#include "../commit/main.c"
#undef main
#undef exit

#include "fsutil.h"

static struct commit c;
static struct stream_reader r;

/* What the emitter of a file frame would have left in the directory. */
static void
make_temp(const struct frame *f)
{
	struct fr_file ff;
	char e[200], temp[STREAM_MAX_STR + 1];
	if (f->type != FR_FILE || stream_get_file(f, &ff, e, sizeof(e)) < 0)
		return;
	snprintf(temp, sizeof(temp), "%.*s", ff.temp.len, ff.temp.p);
	if (!fs_name_ok(temp))
		return;
	int fd = openat(c.dirfd, temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd >= 0) {
		(void)!write(fd, "x", 1);
		close(fd);
	}
}

/* commit/main.c's run() on the reader above, so that it is released however it ends. */
static void
run_commit(void)
{
	struct frame f;
	int rc;
	while ((rc = stream_read(&r, &f)) > 0) {
		make_temp(&f);
		if (handle(&c, "stdin", &f))
			break;
	}
	if (rc < 0)
		die(&c, "stdin: %s", r.err);
	if (rc == 0)
		die(&c, "stdin: truncated stream: it ended without an end frame");
	if (c.nopen)
		die(&c, "stdin: window %u has no end frame", c.open[0].index);
	if (c.nfiles)
		die(&c, "stdin: file '%s' of window %u was never published", c.files[0].name,
		    c.files[0].index);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int dirfd = -1;
	if (dirfd < 0) {
		fuzz_quiet_stdout();
		dirfd = open(fuzz_outdir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dirfd < 0)
			abort();
	}
	int fd = fuzz_input_fd(data, size);
	if (fd < 0)
		return 0;
	memset(&c, 0, sizeof(c));
	c.dirfd = dirfd;
	c.dir = fuzz_outdir();
	if (stream_reader_open(&r, fd, "stdin", &c.header) == 0) {
		c.keep_windows = (uint32_t)(c.header.session_id % 4) + 1;
		FUZZ_TRY(run_commit());
	}
	stream_reader_release(&r);
	modrefs_release(&c); /* as commit/main.c's main */
	commit_release(&c);
	close(fd);
	fflush(stdout);
	fuzz_dir_clean();
	return 0;
}

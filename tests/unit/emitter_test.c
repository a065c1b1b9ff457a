/* lib/emitter: the skeleton forwards every frame, hands each profile of a window to the
 * emitter with its stacks, announces the files it wrote before the window's end (restated
 * when the emitter changed it), and a window given up leaves none of its files. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emitter.h"

#include "check.h"

#define SESSION 0x00c0ffee12345678ull
#define OFFSET 1700000000000000000ll

static struct str
S(const char *s)
{
	return (struct str){ s, (uint16_t)strlen(s) };
}

/* A stream of one window with a CPU and an off-CPU stack of one location each, in a memfd
 * at offset 0. */
static int
stream(void)
{
	struct stream_header h = { STREAM_VERSION, 1, OFFSET, SESSION, 62 };
	struct stream_writer w;
	int fd = memfd_create("emitter-test", 0);
	struct fr_target t = { .pid = 7, .flags = TARGET_OFFCPU, .kind = S("pid"),
			       .comm = S("app"), .profiles = S("cpu,off-cpu") };
	struct fr_mapping m = { .id = 1, .pid = 7, .limit = 0x1000, .path = S("/bin/app") };
	struct fr_function fn = { .id = 1, .name = S("work"), .system_name = S("work"),
				  .filename = S("w.c") };
	struct fr_location l = { .id = 1, .mapping_id = 1, .address = 0x10, .nlines = 1,
				 .lines = { { 1, 3 } } };
	struct fr_window_start ws = { 0, 1000, 2000 };
	struct fr_window_stack st = { .index = 0, .pid = 7, .tid = 7, .count = 2, .nanos = 20,
				      .nlocs = 1, .locs = { 1 } };
	static struct fr_window_end we = { .index = 0, .start = 1000, .end = 2000, .reason = 2,
					   .nstats = 1 };

	we.stats[0] = (struct fr_stat){ S("samples"), 2 };
	CHECK(fd >= 0 && stream_writer_open(&w, fd, "t", &h) == 0);
	CHECK(stream_put_target(&w, &t) == 0 && stream_put_mapping(&w, &m) == 0 &&
	      stream_put_function(&w, &fn) == 0 && stream_put_location(&w, &l) == 0 &&
	      stream_put_window_start(&w, &ws) == 0 && stream_put_window_stack(&w, &st) == 0);
	st.nanos = 500;
	CHECK(stream_put_window_offcpu_stack(&w, &st) == 0 && stream_put_window_end(&w, &we) == 0 &&
	      stream_put_end(&w, &(struct fr_end){ 3000, END_INPUT }) == 0 && stream_flush(&w) == 0);
	stream_writer_release(&w);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static int give_up_off;         /* the off-CPU profile fails, after the CPU file is written */

/* One file per profile: "<stacks> <nanoseconds>" of its set. */
static void
profile(struct emitter *e, const struct emitter_profile *p)
{
	static struct bufout b;

	if (p->offcpu && give_up_off)
		emitter_give_up(e, "window %u: given up", e->we.index);
	bufout_init(&b, &emitter_create(e, p->prefix, "txt")->t);
	bufout_printf(&b, "%zu %llu\n", p->set->nstacks,
		      (unsigned long long)p->set->total_nanos);
	emitter_finish(e, &b, 0, p->kind);
}

static void
end(struct emitter *e, struct fr_window_end *we)
{
	we->stats[0].value = 42;
	e->restated = 1;
}

static const struct emitter_ops ops = {
	.name = "emitter_test",
	.keep_stacks = 1,
	.kind_prefix = "t-",
	.profile = profile,
	.end = end,
};

/* The frames of the output, in order, as one letter each; the file frames and the window
 * end checked on the way. */
static void
check_output(int fd, const char *dir)
{
	static struct fr_window_end we;
	struct stream_header h;
	struct stream_reader r;
	struct frame f;
	struct fr_file ff;
	char types[32] = "", why[200], path[512], text[64];
	size_t n = 0;

	lseek(fd, 0, SEEK_SET);
	CHECK(stream_reader_open(&r, fd, "out", &h) == 0 && h.session_id == SESSION);
	while (stream_read(&r, &f) > 0 && n < sizeof(types) - 1) {
		types[n++] = f.type == FR_FILE ? 'F' : f.type == FR_WINDOW_END ? 'E' : 'x';
		if (f.type == FR_FILE) {
			CHECK(stream_get_file(&f, &ff, why, sizeof(why)) == 0);
			snprintf(path, sizeof(path), "%s/%.*s", dir, ff.temp.len, ff.temp.p);
			FILE *in = fopen(path, "r");
			CHECK(in && fgets(text, sizeof(text), in));
			if (in)
				fclose(in);
			int off = ff.kind.len == 9;
			CHECK(ff.kind.len == (off ? 9 : 5) &&
			      !memcmp(ff.kind.p, off ? "t-off-cpu" : "t-cpu", ff.kind.len));
			CHECK(!strcmp(text, off ? "1 500\n" : "1 20\n"));
			const char *name = off ? "off-cpu-00c0ffee12345678-000000-1700000000000001000.txt"
					       : "cpu-00c0ffee12345678-000000-1700000000000001000.txt";
			CHECK(ff.name.len == strlen(name) && !memcmp(ff.name.p, name, ff.name.len));
		}
		if (f.type == FR_WINDOW_END)
			CHECK(stream_get_window_end(&f, &we, why, sizeof(why)) == 0 &&
			      we.nstats == 1 && we.stats[0].value == 42);
	}
	stream_reader_release(&r);
	/* Every input frame, the two files just before the window's end. */
	CHECK(!strcmp(types, "xxxxxxxFFEx"));
}

static size_t
files_in(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.' || strstr(de->d_name, ".tmp-") != NULL;
	if (d)
		closedir(d);
	return n;
}

static void
test_window(void)
{
	static struct emitter e;
	char dir[] = "/tmp/emitter_test.XXXXXX";
	int out = memfd_create("emitter-out", 0);

	CHECK(mkdtemp(dir) != NULL && out >= 0);
	e = (struct emitter){ .ops = &ops, .output = dir };
	emitter_open(&e, stream(), out);
	emitter_loop(&e);
	emitter_release(&e);
	check_output(out, dir);
	CHECK(files_in(dir) == 2);
	close(out);
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

/* The child gives the window up: status 1, and the CPU file it had written is gone. */
static void
test_give_up(void)
{
	char dir[] = "/tmp/emitter_test.XXXXXX";
	int status = 0;
	pid_t pid;

	CHECK(mkdtemp(dir) != NULL);
	pid = fork();
	if (pid == 0) {
		static struct emitter e;
		int null = memfd_create("emitter-out", 0);
		give_up_off = 1;
		fclose(stderr);         /* the one line is expected */
		e = (struct emitter){ .ops = &ops, .output = dir };
		emitter_open(&e, stream(), null);
		emitter_loop(&e);
		_exit(0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	CHECK(files_in(dir) == 0);
	CHECK(rmdir(dir) == 0);
}

int
main(void)
{
	test_window();
	test_give_up();
	printf("emitter: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}

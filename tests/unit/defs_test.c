/* Unit tests of lib/defs.c forgetting: what an FR_FORGET names goes, what it does not name
 * stays whole through the passes that give the memory back, and the tables stay bounded
 * under process churn. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "defs.h"
#include "winmodel.h"

#include "check.h"

#define MAPS 3  /* mappings per process */
#define LOCS 4  /* locations per mapping */

static struct str
S(const char *s)
{
	return (struct str){ s, (uint16_t)strlen(s) };
}

/* Process pid: MAPS mappings with ids from pid * 100, LOCS locations each (ids from
 * pid * 1000), one thread named "p<pid>" with tid pid and one with tid pid + 50000. */
static void
define(struct defs *d, uint32_t pid)
{
	char path[64], name[32];
	for (uint32_t m = 0; m < MAPS; m++) {
		snprintf(path, sizeof(path), "/usr/lib/lib%u-%u.so", pid, m);
		struct fr_mapping fm = { .id = pid * 100 + m, .pid = pid, .start = 0x1000 * m,
					 .limit = 0x1000 * m + 0x1000, .build_id_len = 2,
					 .build_id = { (uint8_t)pid, (uint8_t)m }, .path = S(path) };
		CHECK(defs_add_mapping(d, &fm) == 0);
		for (uint32_t l = 0; l < LOCS; l++) {
			struct fr_location fl = { .id = pid * 1000 + m * 10 + l,
						  .mapping_id = fm.id, .address = 0x1000 * m + l,
						  .nlines = 1 };
			fl.lines[0] = (struct fr_line){ 1, pid + l };
			CHECK(defs_add_location(d, &fl) == 0);
		}
	}
	snprintf(name, sizeof(name), "p%u", pid);
	struct fr_comm c = { .pid = pid, .tid = pid, .comm = S(name) };
	CHECK(defs_set_comm(d, &c) == 0);
	c.tid = pid + 50000;
	CHECK(defs_set_comm(d, &c) == 0);
}

/* Everything define() made for pid is there and intact. */
static int
intact(const struct defs *d, uint32_t pid)
{
	char path[64], name[32];
	for (uint32_t m = 0; m < MAPS; m++) {
		const struct def_mapping *dm = defs_mapping(d, pid * 100 + m);
		snprintf(path, sizeof(path), "/usr/lib/lib%u-%u.so", pid, m);
		if (!dm || dm->pid != pid || strcmp(defs_str(d, dm->path), path) != 0 ||
		    dm->build_id.len != 4)
			return 0;
		for (uint32_t l = 0; l < LOCS; l++) {
			const struct def_location *dl = defs_location(d, pid * 1000 + m * 10 + l);
			if (!dl || dl->mapping_id != dm->id || dl->address != 0x1000 * m + l ||
			    dl->nlines != 1 || d->lines[dl->lines].line != pid + l)
				return 0;
		}
	}
	const struct pstr *c = defs_comm(d, pid);
	snprintf(name, sizeof(name), "p%u", pid);
	return c && strcmp(defs_str(d, *c), name) == 0;
}

static int
gone(const struct defs *d, uint32_t pid)
{
	return !defs_location(d, pid * 1000) && !defs_mapping(d, pid * 100) &&
	       !defs_comm(d, pid + 50000);
}

/* FR_FORGET of pid and tid; with tid 0 also the mappings define() made for pid, as
 * unwind and aggregate send them. */
static void
forget(struct defs *d, uint32_t pid, uint32_t tid)
{
	uint8_t ids[4 * MAPS];
	struct fr_forget f = { pid, tid, tid ? 0 : MAPS, ids };
	for (uint32_t m = 0; m < f.n; m++) {
		uint32_t id = pid * 100 + m;
		memcpy(ids + 4 * m, &id, 4); /* little-endian hosts: the stream's order */
	}
	CHECK(defs_forget(d, &f) == 0);
}

static void
test_churn(void)
{
	struct defs d;
	defs_init(&d);
	struct fr_function fn = { .id = 1, .name = S("work"), .system_name = S("work"),
				  .filename = S("w.c") };
	CHECK(defs_add_function(&d, &fn) == 0);
	struct fr_target t = { .pid = 1, .exe = S("/bin/make"), .comm = S("make"),
			       .profiles = S("cpu") };
	CHECK(defs_set_target(&d, &t) == 0);
	define(&d, 1);
	size_t peak = 0;
	/* 5000 processes, each forgotten two later: at most three are alive at a time. */
	for (uint32_t pid = 2; pid < 5002; pid++) {
		define(&d, pid);
		if (pid >= 4) {
			forget(&d, pid - 2, pid - 2 + 50000); /* a thread, then the process */
			forget(&d, pid - 2, 0);
		}
		size_t n = d.nmappings + d.nlocations + d.ncomms;
		if (n > peak)
			peak = n;
	}
	CHECK(d.compactions > 0);
	/* Bounded by the live processes plus what one pass lets build up. */
	CHECK(peak < 4 * 1024);
	CHECK(intact(&d, 1) && intact(&d, 5000) && intact(&d, 5001));
	CHECK(gone(&d, 2) && gone(&d, 4000));
	/* The latest forgotten wait, marked, for the next pass. */
	const struct def_mapping *late = defs_mapping(&d, 4999 * 100);
	CHECK(!late || late->gone);
	const struct def_function *f = defs_function(&d, 1);
	CHECK(f && strcmp(defs_str(&d, f->name), "work") == 0 &&
	      strcmp(defs_str(&d, f->filename), "w.c") == 0);
	CHECK(strcmp(defs_str(&d, d.exe), "/bin/make") == 0 &&
	      strcmp(defs_str(&d, d.comm), "make") == 0);
	/* A new thread with a forgotten tid gets its name again, and keeps it. */
	struct fr_comm c = { .pid = 7000, .tid = 4000 + 50000, .comm = S("again") };
	CHECK(defs_set_comm(&d, &c) == 0);
	const struct pstr *p = defs_comm(&d, c.tid);
	CHECK(p && strcmp(defs_str(&d, *p), "again") == 0);
	/* A forget of another process does not take the name of a tid it does not own. */
	forget(&d, 4000, c.tid);
	CHECK(defs_comm(&d, c.tid) != NULL);
	defs_release(&d);
}

/* The derived emitters' labels of unsymbolized frames survive a pass. */
static void
test_winmodel_labels(void)
{
	char path[] = "/tmp/rp-defs-test-XXXXXX";
	int fd = mkstemp(path);
	struct stream_header h = { 1, 1, 0, 1, 62 };
	struct stream_writer sw;
	unlink(path);
	CHECK(stream_writer_open(&sw, fd, "t", &h) == 0);
	for (uint32_t pid = 2; pid < 2000; pid++) {
		struct fr_mapping fm = { .id = pid, .pid = pid, .start = 0, .limit = 0x1000,
					 .path = S("/usr/bin/cc1") };
		CHECK(stream_put_mapping(&sw, &fm) == 0);
		uint32_t gone = pid - 1;
		struct fr_forget g = { 0, 0, 1, NULL };
		CHECK(pid == 2 || stream_put_forget(&sw, &g, &gone) == 0);
	}
	CHECK(stream_flush(&sw) == 0);
	stream_writer_release(&sw);
	lseek(fd, 0, SEEK_SET);

	/* As the emitter skeleton feeds them: the definitions first, then the model. */
	static struct defs d;
	struct winmodel w;
	struct stream_reader r;
	struct frame f;
	defs_init(&d);
	winmodel_init(&w, &d);
	CHECK(stream_reader_open(&r, fd, "t", &h) == 0);
	while (stream_read(&r, &f) > 0)
		CHECK(defs_take(&d, &f) == 1 && winmodel_frame(&w, &f) == 0);
	stream_reader_release(&r);
	close(fd);
	CHECK(d.compactions > 0);
	CHECK(d.nmappings < 2100 && w.nlabels < 2100 * 5);
	uint32_t off;
	CHECK(idmap_get(&w.label_ix, 1999, &off) && memcmp(w.labels + off, "[cc1]", 5) == 0);
	CHECK(!idmap_get(&w.label_ix, 2, &off));
	winmodel_release(&w);
	defs_release(&d);
}

int
main(void)
{
	test_churn();
	test_winmodel_labels();
	printf("defs: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}

/* unwind: symbols a capture carried (FR_USYM with import's min_vaddr trailer) resolve file
 * offsets the way simpleperf does; a forked child gets its parent's mappings. */
#include <stdio.h>
#include <string.h>

#include "../../unwind/resolve.h"
#include "../../unwind/usymtab.h"

#include "check.h"

static uint8_t buf[512];

static uint8_t *
le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return p + n;
}

static uint8_t *
s16(uint8_t *p, const char *s)
{
	p = le(p, strlen(s), 2);
	memcpy(p, s, strlen(s));
	return p + strlen(s);
}

/* An FR_USYM frame; trailer 0 leaves out min_vaddr and fo_min_vaddr. */
static struct frame
usym(const char *bid, const char *path, uint64_t start, uint64_t end, const char *name,
     int trailer, uint64_t min_vaddr, uint64_t fo)
{
	uint8_t *p = buf;
	memset(buf, 0, sizeof(buf));
	*p++ = (uint8_t)strlen(bid);
	memcpy(p, bid, strlen(bid));
	p += STREAM_BUILD_ID_MAX;
	p = s16(p, path);
	p = le(p, start, 8);
	p = le(p, end, 8);
	p = s16(p, name);
	if (trailer) {
		p = le(p, min_vaddr, 8);
		p = le(p, fo, 8);
	}
	return (struct frame){ FR_USYM, (uint32_t)(p - buf), buf };
}

static void
test_usymtab(void)
{
	struct usymtab t = { 0 };
	char e[200];
	struct frame f;
	/* Non-PIE x86 binary of an older simpleperf: mapped at 0x400000, pgoff 0. */
	f = usym("", "/data/t2", 0x4004f0, 0x400510, "_Z5func2ii", 1, 0x400000, USYM_UNKNOWN);
	CHECK(usymtab_add(&t, &f, e, sizeof(e)) == 0);
	f = usym("", "/data/t2", 0x400510, 0x400540, "main", 1, 0x400000, USYM_UNKNOWN);
	CHECK(usymtab_add(&t, &f, e, sizeof(e)) == 0);
	/* A newer capture's library: text at file offset 0x8000, vaddr 0x9000. */
	f = usym("\x12\x34", "/system/lib64/libz.so", 0x9100, 0x9200, "deflate", 1, 0x9000,
		 0x8000);
	CHECK(usymtab_add(&t, &f, e, sizeof(e)) == 0);
	/* No trailer: the symbols are file offsets. */
	f = usym("", "/x.dex", 0x500, 0x520, "Foo.bar", 0, 0, 0);
	CHECK(usymtab_add(&t, &f, e, sizeof(e)) == 0);
	CHECK(t.n == 3);

	struct usymmod *m = usymtab_module(&t, NULL, 0, "/data/t2");
	CHECK(m && m->n == 2);
	uint64_t v = usymmod_vaddr(m, 0x40051d, 0x400000, 0);
	CHECK(v == 0x40051d);
	const struct usym *s = usymmod_find(m, v);
	CHECK(s && !strcmp(s->name, "main"));
	s = usymmod_find(m, usymmod_vaddr(m, 0x4004fd, 0x400000, 0));
	CHECK(s && s->demangled && !strcmp(s->demangled, "func2(int, int)"));
	CHECK(!usymmod_find(m, 0x400540));

	/* Matched by build id even under another path; a different build id does not match. */
	m = usymtab_module(&t, (const uint8_t *)"\x12\x34", 2, "/elsewhere/libz.so");
	CHECK(m != NULL);
	CHECK(!usymtab_module(&t, (const uint8_t *)"\x12\x35", 2, "/system/lib64/libz.so"));
	/* Mapped at 0x7000000000 from file offset 0x8000: ip 0x7000000150 is vaddr 0x9150. */
	v = usymmod_vaddr(m, 0x7000000150, 0x7000000000, 0x8000);
	CHECK(v == 0x9150);
	s = usymmod_find(m, v);
	CHECK(s && !strcmp(s->name, "deflate"));

	m = usymtab_module(&t, NULL, 0, "/x.dex");
	CHECK(m && usymmod_vaddr(m, 0x1010, 0x1000, 0x500) == 0x510);
	CHECK(!usymtab_module(&t, NULL, 0, "/nope"));

	f = usym("", "/bad", 0x20, 0x10, "backwards", 1, 0, 0);
	CHECK(usymtab_add(&t, &f, e, sizeof(e)) < 0);
	usymtab_release(&t);
}

static struct frame
task(uint32_t pid, uint32_t ppid)
{
	uint8_t *p = le(buf, 1000, 8);
	p = le(p, pid, 4);
	p = le(p, ppid, 4);
	p = le(p, pid, 4);
	p = le(p, ppid, 4);
	return (struct frame){ FR_FORK, (uint32_t)(p - buf), buf };
}

static void
test_fork(void)
{
	static struct resolver r;
	char e[200];
	CHECK(resolver_init(&r, NULL, NULL) == 0);
	struct fr_mmap mm = { .pid = 10, .start = 0x1000, .len = 0x1000, .pgoff = 0x2000,
			      .path = { "/bin/a", 6 } };
	CHECK(proc_map(proctab_get(&r.procs, 10), &mm) == 0);
	/* Enough other processes that adding the child moves the table. */
	for (uint32_t pid = 100; pid < 140; pid++)
		CHECK(proctab_get(&r.procs, pid) != NULL);
	struct frame f = task(20, 10);
	CHECK(resolver_frame(&r, &f, e, sizeof(e)) == 0);
	struct proc *c = proctab_get(&r.procs, 20);
	CHECK(c->n == 1 && c->maps[0].start == 0x1000 && c->maps[0].pgoff == 0x2000 &&
	      !strcmp(c->maps[0].path, "/bin/a"));
	struct map *cm = proc_find(c, 0x1800);
	CHECK(cm != NULL);
	/* A child with its own mappings keeps them. */
	mm.pid = 30, mm.start = 0x5000;
	CHECK(proc_map(proctab_get(&r.procs, 30), &mm) == 0);
	f = task(30, 10);
	CHECK(resolver_frame(&r, &f, e, sizeof(e)) == 0);
	CHECK(proctab_get(&r.procs, 30)->n == 1 && !proc_find(proctab_get(&r.procs, 30), 0x1800));
	/* A thread (pid == ppid) shares the table: nothing to copy, no new process. */
	size_t n = r.procs.n;
	f = task(10, 10);
	CHECK(resolver_frame(&r, &f, e, sizeof(e)) == 0 && r.procs.n == n);
	resolver_release(&r);
}

int
main(void)
{
	test_usymtab();
	test_fork();
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}

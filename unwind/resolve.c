#include "resolve.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpstack.h"
#include "grow.h"
#include "symbolize.h"

int
resolver_init(struct resolver *r, struct stream_writer *out, struct symbolizer *sym)
{
	memset(r, 0, sizeof(*r));
	r->out = out;
	r->sym = sym;
	r->next_mapping_id = 1;
	if (intern_init(&r->locs) < 0 || intern_init(&r->funcs) < 0)
		return -1;
	return 0;
}

static struct str
S(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	return (struct str){ s ? s : "", (uint16_t)(n > STREAM_MAX_STR ? STREAM_MAX_STR : n) };
}

/* Function id for (name, system name, file, start line); written on first use. */
static uint32_t
function_id(struct resolver *r, const char *name, const char *sys, const char *file,
	    uint32_t start_line)
{
	char key[3 * STREAM_MAX_STR + 16];
	int n = snprintf(key, sizeof(key), "%.4096s%c%.4096s%c%.4096s%c%u", name, 0,
			 sys ? sys : name, 0, file ? file : "", 0, start_line);
	int is_new;
	uint32_t id = intern_text(&r->funcs, key, (size_t)n, &is_new);
	if (!id || !is_new)
		return id;
	struct fr_function f = { id, start_line, S(name), S(sys ? sys : name), S(file) };
	return stream_put_function(r->out, &f) < 0 ? 0 : id;
}

int
resolver_add_ksym(struct resolver *r, const struct fr_ksym *k)
{
	if (ksymtab_reserve(&r->ksyms, 1) < 0)
		return -1;
	struct ksym s = { .start = k->start, .end = k->end, .name = str_dup(k->name),
			  .module = str_dup(k->module) };
	if (!s.name || !s.module) {
		free(s.name);
		free(s.module);
		return -1;
	}
	r->ksyms.v[r->ksyms.n++] = s;
	r->ksyms_sorted = 0;
	return 0;
}

uint32_t
resolve_kernel(struct resolver *r, uint64_t addr)
{
	uint32_t id;
	if (idmap_get(&r->klocs, addr, &id))
		return id;
	if (!r->kernel_mapping_id) {
		r->kernel_mapping_id = r->next_mapping_id++;
		struct fr_mapping m = { .id = r->kernel_mapping_id, .start = 0xffff800000000000ull,
					.limit = UINT64_MAX, .flags = MAPPING_KERNEL |
					MAPPING_HAS_FUNCTIONS, .path = S("[kernel.kallsyms]") };
		if (stream_put_mapping(r->out, &m) < 0)
			return 0;
	}
	static struct fr_location loc;
	memset(&loc, 0, offsetof(struct fr_location, lines));
	if (!r->ksyms_sorted) {
		ksymtab_sort(&r->ksyms);
		r->ksyms_sorted = 1;
	}
	const struct ksym *k = ksymtab_find(&r->ksyms, addr, NULL);
	if (k) {
		char file[STREAM_MAX_STR];
		snprintf(file, sizeof(file), k->module[0] ? "[%s]" : "%s", k->module);
		uint32_t fid = function_id(r, k->name, k->name, file, 0);
		if (!fid)
			return 0;
		loc.nlines = 1;
		loc.lines[0] = (struct fr_line){ fid, 0 };
	}
	id = intern_new_id(&r->locs);
	if (idmap_put(&r->klocs, addr, id) < 0)
		return 0;
	loc.id = id;
	loc.mapping_id = r->kernel_mapping_id;
	loc.address = addr;
	return id && stream_put_location(r->out, &loc) == 0 ? id : 0;
}

static int
write_mapping(struct resolver *r, uint32_t pid, struct map *m)
{
	if (!m->sym_tried) {
		m->sym_tried = 1;
		m->sym = symbolizer_module(r->sym, m->path, m->build_id, m->build_id_len);
	}
	m->mapping_id = r->next_mapping_id++;
	struct fr_mapping f = { .id = m->mapping_id, .pid = pid, .start = m->start,
				.limit = m->end, .offset = m->pgoff,
				.build_id_len = m->build_id_len, .path = S(m->path) };
	memcpy(f.build_id, m->build_id, sizeof(f.build_id));
	if (m->sym)
		f.flags = MAPPING_HAS_FUNCTIONS | MAPPING_HAS_FILENAMES | MAPPING_HAS_LINES |
			  MAPPING_HAS_INLINES;
	else if (usymtab_module(&r->usyms, m->build_id, m->build_id_len, m->path))
		f.flags = MAPPING_HAS_FUNCTIONS;
	return stream_put_mapping(r->out, &f);
}

/* The capture's own symbol for addr, when the module's file gave none. */
static int
usym_lookup(struct resolver *r, const struct map *m, uint64_t addr, struct symframe *out)
{
	struct usymmod *um = usymtab_module(&r->usyms, m->build_id, m->build_id_len, m->path);
	const struct usym *s = um ? usymmod_find(um, usymmod_vaddr(um, addr, m->start, m->pgoff))
				  : NULL;
	if (!s)
		return 0;
	out[0] = (struct symframe){ .name = s->demangled ? s->demangled : s->name,
				    .system_name = s->name };
	return 1;
}

/* A JIT runtime's files grew: names cached for the process's anonymous memory may have
 * been missing, so its locations there are looked up again and its stacks expire. */
static void
jit_grew(void *arg, uint32_t pid)
{
	struct resolver *r = arg;
	struct proc *p = proctab_find(&r->procs, pid);
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		if (map_is_anon(&p->maps[i]))
			idmap_clear(&p->maps[i].locs);
	proc_touch(p);
}

/* The JIT runtime's name for addr in anonymous executable memory. */
static int
jit_lookup(struct resolver *r, uint32_t pid, uint64_t addr, struct symframe *out)
{
	int grew;
	const char *name = jitsyms_lookup(r->jit, pid, addr, &grew);
	if (grew)
		jit_grew(r, pid);
	r->jit->changed = 1;
	if (!name) {
		r->jit->st.unnamed++;
		return 0;
	}
	r->jit->st.named++;
	out[0] = (struct symframe){ .name = name, .system_name = name };
	return 1;
}

uint32_t
resolve_user(struct resolver *r, uint32_t pid, struct map *m, uint64_t addr)
{
	if (!m->mapping_id && write_mapping(r, pid, m) < 0)
		return 0;
	uint32_t id;
	if (idmap_get(&m->locs, addr, &id))
		return id;
	static struct fr_location loc;
	static struct symframe frames[STREAM_MAX_LINES];
	memset(&loc, 0, offsetof(struct fr_location, lines));
	uint64_t vaddr;
	int n = 0;
	if (m->sym && symmod_offset_to_vaddr(m->sym, addr - m->start + m->pgoff, &vaddr) == 0)
		n = symmod_lookup(m->sym, vaddr, frames, STREAM_MAX_LINES);
	if (n == 0)
		n = usym_lookup(r, m, addr, frames);
	if (n == 0 && r->jit && map_is_anon(m))
		n = jit_lookup(r, pid, addr, frames);
	for (int i = 0; i < n; i++) {
		uint32_t fid = function_id(r, frames[i].name, frames[i].system_name,
					   frames[i].file, frames[i].start_line);
		if (!fid)
			return 0;
		loc.lines[loc.nlines++] = (struct fr_line){ fid, frames[i].line };
	}
	id = intern_new_id(&r->locs);
	if (idmap_put(&m->locs, addr, id) < 0)
		return 0;
	loc.id = id;
	loc.mapping_id = m->mapping_id;
	loc.address = addr;
	return id && stream_put_location(r->out, &loc) == 0 ? id : 0;
}

/* The child of a fork inherits its parent's mappings: copy them unless it has its own. */
static int
fork_maps(struct resolver *r, const struct fr_task *t)
{
	if (t->pid == t->ppid)
		return 0; /* a thread shares its process's table */
	if (!proctab_get(&r->procs, t->ppid))
		return -1;
	struct proc *child = proctab_get(&r->procs, t->pid);
	if (!child)
		return -1;
	if (child->n)
		return 0;
	/* Both exist now: neither lookup below reallocates the table. */
	struct proc *parent = proctab_get(&r->procs, t->ppid);
	for (size_t i = 0; i < parent->n; i++) {
		const struct map *pm = &parent->maps[i];
		struct fr_mmap mm = { .time = t->time, .pid = t->pid, .tid = t->tid,
				      .start = pm->start, .len = pm->end - pm->start,
				      .pgoff = pm->pgoff, .build_id_len = pm->build_id_len,
				      .path = { pm->path, (uint16_t)strlen(pm->path) } };
		memcpy(mm.build_id, pm->build_id, sizeof(mm.build_id));
		if (proc_map(child, &mm) < 0)
			return -1;
	}
	return 0;
}

/* The mappings gone since the last call, named by no stack written after time at the
 * latest. */
static int
note_gone(struct resolver *r, uint64_t time)
{
	struct proctab *t = &r->procs;
	if (time < r->newest)
		time = r->newest;
	if (grow_array((void **)&r->forget, &r->capforget, r->nforget, t->ngone,
		       sizeof(*r->forget)) < 0)
		return -1;
	for (size_t i = 0; i < t->ngone; i++)
		r->forget[r->nforget++] = (struct gone_id){ time, t->gone[i] };
	t->ngone = 0;
	return 0;
}

/* The process ended: it is forgotten at the next round. */
static int
ended(struct resolver *r, const struct fr_task *t)
{
	if (!(t->flags & EXIT_PROCESS) || !t->pid)
		return 0;
	if (grow_array((void **)&r->ending, &r->capending, r->nending, 1, sizeof(*r->ending)) < 0)
		return -1;
	r->ending[r->nending++] = (struct ending){ t->time, t->pid };
	return 0;
}

/* Every event at or before the round's time has come: the processes that ended by then
 * are forgotten, with their mappings and locations, and the mappings no stack can name
 * any more are listed for the later stages (aggregate holds the list until the windows
 * that may show them are written). */
static int
round_passed(struct resolver *r, uint64_t time)
{
	size_t kept = 0;
	for (size_t i = 0; i < r->nending; i++) {
		if (r->ending[i].time <= time) {
			proctab_drop(&r->procs, r->ending[i].pid);
			if (r->jit)
				jitsyms_drop(r->jit, r->ending[i].pid);
			fpcache_forget(r->fpcache, r->ending[i].pid);
			if (note_gone(r, r->ending[i].time) < 0)
				return -1;
		} else {
			r->ending[kept++] = r->ending[i];
		}
	}
	r->nending = kept;
	static uint32_t ids[STREAM_MAX_FORGET];
	struct fr_forget f = { 0 };
	kept = 0;
	for (size_t i = 0; i < r->nforget; i++) {
		if (r->forget[i].time > time) {
			r->forget[kept++] = r->forget[i];
			continue;
		}
		ids[f.n++] = r->forget[i].id;
		if (f.n == STREAM_MAX_FORGET) {
			if (stream_put_forget(r->out, &f, ids) < 0)
				return -1;
			f.n = 0;
		}
	}
	r->nforget = kept;
	return f.n ? stream_put_forget(r->out, &f, ids) : 0;
}

/* FR_MMAP and an exec's FR_COMM: what they replace or clear is gone from their time on. */
static int
maps_changed(struct resolver *r, const struct frame *f, char *err, size_t errlen)
{
	struct fr_mmap m;
	struct fr_comm c;
	struct proc *p;
	uint64_t time;
	if (f->type == FR_MMAP) {
		if (stream_get_mmap(f, &m, err, errlen) < 0)
			return -1;
		if (!(p = proctab_get(&r->procs, m.pid)) || proc_map(p, &m) < 0)
			goto oom;
		time = m.time;
	} else {
		if (stream_get_comm(f, &c, err, errlen) < 0)
			return -1;
		if (!(c.flags & COMM_EXEC))
			return 0;
		if (!(p = proctab_get(&r->procs, c.pid)))
			goto oom;
		proc_clear(p);
		time = c.time;
	}
	if (r->procs.ngone && note_gone(r, time) < 0)
		goto oom;
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

int
resolver_frame(struct resolver *r, const struct frame *f, char *err, size_t errlen)
{
	struct fr_task t;
	if (f->type == FR_USYM)
		return usymtab_add(&r->usyms, f, err, errlen);
	if (f->type == FR_MMAP || f->type == FR_COMM)
		return maps_changed(r, f, err, errlen);
	if (f->type == FR_ROUND) {
		struct fr_round rd;
		if (stream_get_round(f, &rd, err, errlen) < 0)
			return -1;
		if (r->jit)
			jitsyms_poll(r->jit, jit_grew, r);
		if (round_passed(r, rd.time) == 0)
			return 0;
		snprintf(err, errlen, "%s", r->out->err[0] ? r->out->err : "out of memory");
		return -1;
	}
	if (f->type != FR_FORK && f->type != FR_EXIT)
		return 0;
	if (stream_get_task(f, &t, err, errlen) < 0)
		return -1;
	if (f->type == FR_EXIT) {
		if (ended(r, &t) == 0)
			return 0;
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (fork_maps(r, &t) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

void
resolver_release(struct resolver *r)
{
	fpcache_free(r->fpcache);
	r->fpcache = NULL;
	free(r->ending);
	r->ending = NULL;
	r->nending = r->capending = 0;
	free(r->forget);
	r->forget = NULL;
	r->nforget = r->capforget = 0;
	usymtab_release(&r->usyms);
	proctab_release(&r->procs);
	for (size_t i = 0; i < r->ksyms.n; i++) {
		free(r->ksyms.v[i].name);
		free(r->ksyms.v[i].module);
	}
	ksymtab_clear(&r->ksyms);
	intern_release(&r->locs);
	intern_release(&r->funcs);
	idmap_release(&r->klocs);
}

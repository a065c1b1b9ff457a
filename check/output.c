/* The report as text lines for a person, or as the CheckReport JSON (schema version 3). */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>

#include "json.h"
#include "report.h"

const char *
report_arch_name(int e_machine)
{
	switch (e_machine) {
	case EM_X86_64:
		return "x86_64";
	case EM_AARCH64:
		return "aarch64";
	case EM_386:
		return "i386";
	case EM_ARM:
		return "arm";
	case EM_RISCV:
		return "riscv";
	default:
		return "other";
	}
}

static const char *
status_name(enum cap_status s)
{
	return s == CAP_OK ? "ok" : s == CAP_NOT_APPLICABLE ? "not_applicable" : "unavailable";
}

static const char *
yes(int v)
{
	return v ? "yes" : "no";
}

static void
text_cap(const char *name, const struct cap *c)
{
	printf("%-18s %s%s%s\n", name, status_name(c->status), c->detail[0] ? ": " : "",
	       c->detail);
}

static void
text_module(const struct module_info *m)
{
	printf("module             %s\n", m->path);
	if (!m->elf) {
		printf("  not readable as ELF\n");
		return;
	}
	printf("  build id         %s\n", m->build_id[0] ? m->build_id : "none");
	printf("  unwind           eh_frame_hdr %s, eh_frame %s, debug_frame %s\n",
	       yes(m->eh_frame_hdr), yes(m->eh_frame), yes(m->debug_frame));
	printf("  symbols          symtab %ld, dynsym %ld%s\n", m->symtab, m->dynsym,
	       m->debug_info ? ", DWARF" : "");
	if (m->debug_file[0])
		printf("  debug file       %s\n", m->debug_file);
}

int
report_print_text(const struct report *r)
{
	if (r->resolved)
		printf("container          %s %s (%s), init pid %d\n", r->cid.runtime,
		       r->cid.name, r->cid.id, (int)r->cid.pid);
	if (r->resolved && r->cid.kind == CTR_K8S)
		printf("pod                %s/%s uid %s on node %s\n", r->cid.ns, r->cid.pod,
		       r->cid.pod_uid, r->cid.node);
	if (r->pid)
		printf("target             pid %d%s%s\n", (int)r->pid, r->comm[0] ? " " : "",
		       r->comm);
	else
		printf("target             unresolved\n");
	printf("executable         %s\n", r->executable[0] ? r->executable : "unknown");
	printf("architecture       %s\n", r->e_machine ? report_arch_name(r->e_machine) :
	       "unknown");
	if (r->threads >= 0)
		printf("threads            %d\n", r->threads);
	else
		printf("threads            unknown\n");
	printf("kernel             %s (cpu %s, off-cpu %s, heap %s)\n",
	       r->pf.release[0] ? r->pf.release : "unknown",
	       yes(preflight_kernel_at_least(&r->pf, 5, 4)),
	       yes(preflight_kernel_at_least(&r->pf, 5, 8)),
	       yes(preflight_kernel_at_least(&r->pf, 5, 12)));
	printf("root               %s\n", yes(r->root));
	text_cap("perf access", &r->perf);
	text_cap("lifecycle eBPF", &r->lifecycle);
	text_cap("off-CPU eBPF", &r->offcpu);
	if (r->alloc_checked)
		printf("allocator          %s%s%s%s\n", r->alloc.detected ? r->alloc.detected : "none",
		       r->alloc.detected ? " in " : "", r->alloc.detected ? r->alloc.module : "",
		       r->alloc.detected && !r->alloc.complete ? " (incomplete)" : "");
	text_cap("heap eBPF", &r->heap);
	text_cap("container cgroup", &r->container);
	for (size_t i = 0; i < r->nperf_maps; i++)
		printf("perf map           %s\n", r->perf_maps[i]);
	for (size_t i = 0; i < r->njitdumps; i++)
		printf("jitdump            %s\n", r->jitdumps[i]);
	for (size_t i = 0; i < r->nmods; i++)
		text_module(&r->mods[i]);
	for (size_t i = 0; i < r->warnings.n; i++)
		printf("warning: %s\n", r->warnings.v[i]);
	for (size_t i = 0; i < r->errors.n; i++)
		printf("error: %s\n", r->errors.v[i]);
	return fflush(stdout) == 0 ? 0 : -1;
}

static void
json_cap(struct json *j, const char *key, const struct cap *c)
{
	json_key(j, key);
	json_object_begin(j);
	json_kstring(j, "status", status_name(c->status));
	json_kstring(j, "detail", c->detail[0] ? c->detail : NULL);
	json_object_end(j);
}

static void
json_strings(struct json *j, const char *key, char *const *v, size_t n)
{
	json_key(j, key);
	json_array_begin(j);
	for (size_t i = 0; i < n; i++)
		json_str(j, v[i]);
	json_array_end(j);
}

static void
json_module(struct json *j, const struct module_info *m)
{
	json_object_begin(j);
	json_kstring(j, "path", m->path);
	json_kbool(j, "elf", m->elf);
	json_kstring(j, "build_id", m->build_id[0] ? m->build_id : NULL);
	json_key(j, "unwind");
	json_object_begin(j);
	json_kbool(j, "eh_frame_hdr", m->eh_frame_hdr);
	json_kbool(j, "eh_frame", m->eh_frame);
	json_kbool(j, "debug_frame", m->debug_frame);
	json_object_end(j);
	json_key(j, "symbols");
	json_object_begin(j);
	json_ki64(j, "symtab", m->symtab);
	json_ki64(j, "dynsym", m->dynsym);
	json_kbool(j, "dwarf", m->debug_info);
	json_object_end(j);
	json_kstring(j, "debug_file", m->debug_file[0] ? m->debug_file : NULL);
	json_object_end(j);
}

static void
json_container(struct json *j, const struct report *r)
{
	json_key(j, "container");
	if (!r->resolved) {
		json_nil(j);
		return;
	}
	const struct ctr_identity *c = &r->cid;
	json_object_begin(j);
	json_kstring(j, "kind", c->kind == CTR_K8S ? "kubernetes" : "docker");
	json_kstring(j, "runtime", c->runtime);
	json_kstring(j, "id", c->id);
	json_kstring(j, "name", c->name);
	json_kstring(j, "status", c->status);
	json_kstring(j, "started_at", c->started_at[0] ? c->started_at : NULL);
	json_kstring(j, "cgroup", c->cgroup[0] ? c->cgroup : NULL);
	if (c->kind == CTR_K8S) {
		json_kstring(j, "namespace", c->ns);
		json_kstring(j, "pod", c->pod);
		json_kstring(j, "pod_uid", c->pod_uid);
		json_kstring(j, "node", c->node);
	}
	json_object_end(j);
}

/* As diagnostics' allocator_probe: requested, detected, module, complete, reason. */
static void
json_allocator(struct json *j, const struct report *r)
{
	json_key(j, "allocator");
	if (!r->alloc_checked) {
		json_nil(j);
		return;
	}
	const struct heap_probe *p = &r->alloc;
	json_object_begin(j);
	json_kstring(j, "requested", p->requested[0] ? p->requested : "auto");
	json_kstring(j, "detected", p->detected);
	json_kstring(j, "module", p->detected && p->module[0] ? p->module : NULL);
	json_kbool(j, "complete", p->detected && p->complete);
	json_kstring(j, "reason", p->reason[0] ? p->reason : NULL);
	json_object_end(j);
}

static void
json_target(struct json *j, const struct report *r)
{
	json_key(j, "target");
	json_object_begin(j);
	json_kstring(j, "selector", r->selector);
	if (r->pid)
		json_ki64(j, "pid", r->pid);
	else
		json_knull(j, "pid");
	json_container(j, r);
	json_kstring(j, "executable", r->executable[0] ? r->executable : NULL);
	json_kstring(j, "comm", r->comm[0] ? r->comm : NULL);
	json_kstring(j, "architecture", r->e_machine ? report_arch_name(r->e_machine) : NULL);
	if (r->e_machine)
		json_ki64(j, "e_machine", r->e_machine);
	else
		json_knull(j, "e_machine");
	if (r->threads >= 0)
		json_ki64(j, "threads", r->threads);
	else
		json_knull(j, "threads");
	json_key(j, "modules");
	json_array_begin(j);
	for (size_t i = 0; i < r->nmods; i++)
		json_module(j, &r->mods[i]);
	json_array_end(j);
	json_ku64(j, "modules_omitted", r->mods_omitted);
	json_allocator(j, r);
	json_object_end(j);
}

static void
json_capabilities(struct json *j, const struct report *r)
{
	json_key(j, "capabilities");
	json_object_begin(j);
	json_kbool(j, "root", r->root);
	json_key(j, "kernel");
	json_object_begin(j);
	json_kstring(j, "release", r->pf.release[0] ? r->pf.release : NULL);
	json_kbool(j, "cpu", preflight_kernel_at_least(&r->pf, 5, 4));
	json_kbool(j, "off_cpu", preflight_kernel_at_least(&r->pf, 5, 8));
	json_kbool(j, "heap", preflight_kernel_at_least(&r->pf, 5, 12));
	json_object_end(j);
	json_cap(j, "perf", &r->perf);
	json_cap(j, "lifecycle_ebpf", &r->lifecycle);
	json_cap(j, "off_cpu_ebpf", &r->offcpu);
	json_cap(j, "heap_ebpf", &r->heap);
	json_cap(j, "container_cgroup", &r->container);
	json_strings(j, "perf_map_files", r->perf_maps, r->nperf_maps);
	json_strings(j, "jitdump_files", r->jitdumps, r->njitdumps);
	json_object_end(j);
}

int
report_print_json(const struct report *r)
{
	struct json j;
	json_init(&j, stdout, 1);
	json_object_begin(&j);
	json_ku64(&j, "schema_version", CHECK_SCHEMA_VERSION);
	json_kstring(&j, "kind", "CheckReport");
	json_target(&j, r);
	json_capabilities(&j, r);
	json_key(&j, "options");
	json_object_begin(&j);
	json_strings(&j, "symbol_dirs", (char *const *)r->symbol_dirs, r->nsymbol_dirs);
	json_kstring(&j, "debuginfod", r->debuginfod);
	json_object_end(&j);
	json_strings(&j, "warnings", r->warnings.v, r->warnings.n);
	json_strings(&j, "errors", r->errors.v, r->errors.n);
	json_object_end(&j);
	if (json_finish(&j) < 0) {
		fprintf(stderr, "check: cannot write the report: %s\n", j.err);
		return -1;
	}
	return 0;
}

void
report_free(struct report *r)
{
	free(r->mods);
	for (size_t i = 0; i < r->nperf_maps; i++)
		free(r->perf_maps[i]);
	for (size_t i = 0; i < r->njitdumps; i++)
		free(r->jitdumps[i]);
	for (size_t i = 0; i < r->warnings.n; i++)
		free(r->warnings.v[i]);
	for (size_t i = 0; i < r->errors.n; i++)
		free(r->errors.v[i]);
	free(r->warnings.v);
	free(r->errors.v);
}

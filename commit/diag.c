/*
 * commit: the diagnostics JSON of one window, schema version 3 (manual, "Output files and
 * retention").  Window statistics arrive as FR_WINDOW_END key/values: a key without a dot
 * belongs to "cpu", "event_order.x" to "event_order", and any other "a.b" to object "a".
 */
#include "commit.h"

#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "defs.h"
#include "json.h"
#include "outname.h"

#define DIAG_SCHEMA_VERSION 3

/* The cpu members in the order readers see them.  Most are window statistics; a statistic
 * the producer did not send is written as 0 so every document has the same keys. */
static const char *const cpu_documented[] = {
	"cpu_nanoseconds", "samples", "lost_samples", "malformed_samples",
	"aggregation_dropped_samples", "aggregation_dropped_nanoseconds", "frequency_hz",
	"unwind_mode", "unwind_requested", "unwind_reason", "usable_stack_ratio",
	"usable_stacks", "unusable_stacks", "truncated_stacks", "empty_stacks",
	"cyclic_stacks", "out_of_mapping_stacks", "failed_unwind_stacks", "distinct_stacks",
	"max_stacks",
	"fallback_reason", "event", "event_reason", "cpuid",
};

/* Top-level names a dotted statistic may not reuse as its object. */
static const char *const reserved[] = {
	"schema_version", "session_id", "window_index", "pid", "window_start_unix_nanos",
	"window_end_unix_nanos", "duration_nanos", "final_window", "written_at_unix_nanos",
	"target", "requested_profiles", "written_profiles", "output_paths", "warnings",
	"allocator_probe", "cpu", "event_order", "scope", "output_backpressure", "heap", "otlp",
	"physical",
};

/* The heap members in the order readers see them (statistics "heap.x"), then the rest. */
static const char *const heap_documented[] = {
	"alloc_objects", "alloc_space", "inuse_objects", "inuse_space",
	"aggregation_dropped_alloc_objects", "aggregation_dropped_alloc_space",
	"aggregation_dropped_inuse_objects", "aggregation_dropped_inuse_space",
	"ring_buffer_drops", "live_evictions", "unfinished_returns", "stack_failures",
};

/* The physical members in the order readers see them (statistics "physical.x"), then the
 * rest; the probability is the target's. */
static const char *const physical_documented[] = {
	"alloc_pages", "alloc_bytes", "usage_pages", "usage_bytes",
	"aggregation_dropped_alloc_pages", "aggregation_dropped_alloc_bytes",
	"aggregation_dropped_usage_pages", "aggregation_dropped_usage_bytes",
	"samples", "frees", "unmatched_frees", "tracked_pages", "ring_buffer_drops",
	"untracked_allocations", "stack_failures", "tracked_evictions", "distinct_stacks",
	"max_stacks", "probability_percent",
};

/* docs/physical.md, "Limitations", one sentence group each (tests/physical_stream.bats
 * checks the page says the same). */
static const char *const physical_limitations[] = {
	"Not the process's RSS: pages allocated before the recording started are unknown, and "
	"with a probability below 100 only the sampled pages count in `physical-usage`.",
	"Pages are charged to the task that was running when they were allocated: readahead "
	"done on the target's behalf by another task, and page cache pages later shared with "
	"other processes, are not attributed to the target; shared pages stay with their "
	"first owner.",
	"A free is matched by pfn and the recorded order; a partial free of a higher-order "
	"block (split pages) is seen only for the pfn that starts it.",
	"Pages migrated or compacted by the kernel move to a new pfn without an allocation "
	"event of the target: the old pfn is freed and the new one untracked.",
	"Memory of the collector grows with the number of tracked pages and of distinct "
	"stacks.",
	"The tail of the ring is read at the end of a normal shutdown; frees that happen after "
	"collect detached (the target's exit after the recording) are not seen.",
};

/* Profile kinds, as opposed to derived outputs such as "svg-cpu". */
static const char *const profile_kinds[] = { "cpu", "heap", "off-cpu", "physical-alloc",
					     "physical-usage" };

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

static int
in_list(const char *const *list, size_t n, const char *s, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(list[i]) == len && memcmp(list[i], s, len) == 0)
			return 1;
	return 0;
}

/* The first statistic named exactly key (prefix included), or NULL. */
static const struct fr_stat *
stat_find(const struct fr_window_end *we, const char *key)
{
	for (uint16_t i = 0; i < we->nstats; i++)
		if (str_eq(we->stats[i].key, key))
			return &we->stats[i];
	return NULL;
}

static uint64_t
stat_get(const struct fr_window_end *we, const char *key)
{
	const struct fr_stat *s = stat_find(we, key);

	return s ? s->value : 0;
}

/* Length of the group name of a statistic key: 0 for "cpu" keys without a dot. */
static size_t
group_len(struct str key)
{
	const char *dot = memchr(key.p, '.', key.len);

	return dot ? (size_t)(dot - key.p) : 0;
}

/* Writes the statistics of group g (length glen) not yet written, prefix removed.  A
 * duplicate key keeps its first value so the object never repeats a name. */
static void
write_group(struct json *j, const struct fr_window_end *we, const char *g, size_t glen,
	    const char *const *skip, size_t nskip)
{
	char key[STREAM_MAX_STR + 1];

	for (uint16_t i = 0; i < we->nstats; i++) {
		struct str k = we->stats[i].key;
		size_t off = glen ? glen + 1 : 0;
		int dup = 0;

		if (group_len(k) != glen || (glen && memcmp(k.p, g, glen) != 0))
			continue;
		if (in_list(skip, nskip, k.p + off, k.len - off))
			continue;
		for (uint16_t p = 0; p < i && !dup; p++)
			dup = we->stats[p].key.len == k.len && !memcmp(we->stats[p].key.p, k.p, k.len);
		if (dup)
			continue;
		memcpy(key, k.p + off, k.len - off);
		key[k.len - off] = '\0';
		json_ku64(j, key, we->stats[i].value);
	}
}

/* A container target's identity, only for one: other targets' objects stay as they were. */
static void
write_identity(struct json *j, const struct commit_target *t)
{
	if (!t->ctr_id || !t->ctr_id[0])
		return;
	json_key(j, "container");
	json_object_begin(j);
	json_kstring(j, "runtime", t->ctr_runtime);
	json_kstring(j, "id", t->ctr_id);
	json_kstring(j, "name", t->ctr_name);
	json_kstring(j, "started_at", t->ctr_started_at);
	json_object_end(j);
	if (!t->k8s_uid || !t->k8s_uid[0])
		return;
	json_key(j, "kubernetes");
	json_object_begin(j);
	json_kstring(j, "namespace", t->k8s_ns);
	json_kstring(j, "pod", t->k8s_pod);
	json_kstring(j, "pod_uid", t->k8s_uid);
	json_kstring(j, "container", t->ctr_name);
	json_object_end(j);
}

static void
write_target(struct json *j, const struct commit_target *t)
{
	json_key(j, "target");
	json_object_begin(j);
	json_kstring(j, "kind", t->kind);
	json_key(j, "pid");
	t->have && t->pid ? json_u64(j, t->pid) : json_nil(j);
	json_kstring(j, "executable", t->exe);
	json_kstring(j, "comm", t->comm);
	json_kstring(j, "kernel_release", t->kernel_release);
	write_identity(j, t);
	json_object_end(j);
}

static void
write_profiles(struct json *j, const struct commit *c, const struct commit_batch *b)
{
	const char *p = c->target.profiles ? c->target.profiles : "";

	json_key(j, "requested_profiles");
	json_array_begin(j);
	while (*p) {
		size_t n = strcspn(p, ",");

		if (n)
			json_string_len(j, p, n);
		p += n + (p[n] == ',');
	}
	json_array_end(j);
	json_key(j, "written_profiles");
	json_array_begin(j);
	for (size_t i = 0; i < b->nfiles; i++)
		if ((b->files[i].flags & FILE_REQUIRED) &&
		    in_list(profile_kinds, LEN(profile_kinds), b->files[i].kind,
			    strlen(b->files[i].kind)))
			json_str(j, b->files[i].kind);
	json_array_end(j);
}

static void
write_path(struct json *j, const struct commit *c, const char *kind, const char *name)
{
	char path[8192];

	snprintf(path, sizeof(path), "%s/%s", c->dir, name);
	json_kstring(j, kind, path);
}

static void
write_outputs(struct json *j, const struct commit *c, const struct commit_batch *b)
{
	json_key(j, "output_paths");
	json_object_begin(j);
	for (size_t i = 0; i < b->nfiles; i++)
		write_path(j, c, b->files[i].kind, b->files[i].name);
	write_path(j, c, "diagnostics", b->diag_name);
	json_object_end(j);
	json_key(j, "warnings");
	json_array_begin(j);
	for (size_t i = 0; i < b->nwarnings; i++)
		json_str(j, b->warnings[i]);
	json_array_end(j);
}

/* A string of the target, null when empty or absent (the value of a key written already). */
static void
str_or_nil(struct json *j, const char *s)
{
	if (s && s[0])
		json_str(j, s);
	else
		json_nil(j);
}

/* One documented cpu member: from the target frame, computed, or a statistic. */
static void
write_cpu_member(struct json *j, const struct commit *c, const struct fr_window_end *we,
		 const char *key)
{
	const struct commit_target *t = &c->target;
	uint64_t usable = stat_get(we, "usable_stacks"), unusable = stat_get(we, "unusable_stacks");

	json_key(j, key);
	if (strcmp(key, "frequency_hz") == 0)
		t->have ? json_u64(j, t->cpu_frequency) : json_nil(j);
	else if (strcmp(key, "unwind_mode") == 0)
		json_str(j, t->unwind_mode);
	else if (strcmp(key, "unwind_requested") == 0)
		json_str(j, t->unwind_requested);
	else if (strcmp(key, "unwind_reason") == 0)
		json_str(j, t->unwind_reason);
	else if (strcmp(key, "usable_stack_ratio") == 0 && usable + unusable == 0)
		json_nil(j);
	else if (strcmp(key, "usable_stack_ratio") == 0)
		json_double(j, (double)usable / ((double)usable + (double)unusable));
	else if (strcmp(key, "fallback_reason") == 0 && t->fallback_reason &&
		 t->fallback_reason[0])
		json_str(j, t->fallback_reason);
	else if (strcmp(key, "fallback_reason") == 0)
		json_nil(j);
	else if (strcmp(key, "event") == 0)
		str_or_nil(j, t->cpu_event);
	else if (strcmp(key, "event_reason") == 0)
		str_or_nil(j, t->cpu_event_reason);
	else if (strcmp(key, "cpuid") == 0)
		str_or_nil(j, t->cpu_list);
	else
		json_u64(j, stat_get(we, key));
}

/* The frame-pointer calibration of --unwind auto, null when none ran. */
static void
write_calibration(struct json *j, const struct commit_target *t)
{
	json_key(j, "calibration");
	if (!t->calib_verdict || !t->calib_verdict[0]) {
		json_nil(j);
		return;
	}
	json_object_begin(j);
	json_key(j, "samples");
	json_u64(j, t->calib_samples);
	json_key(j, "mapped_address_ratio");
	json_double(j, t->calib_mapped_permille / 1000.0);
	json_key(j, "three_frame_ratio");
	json_double(j, t->calib_deep_permille / 1000.0);
	json_key(j, "cyclic_samples");
	json_u64(j, t->calib_cycles);
	json_key(j, "verdict");
	json_str(j, t->calib_verdict);
	json_key(j, "reason");
	json_str(j, t->unwind_reason);
	json_object_end(j);
}

static void
write_cpu(struct json *j, const struct commit *c, const struct fr_window_end *we)
{
	json_key(j, "cpu");
	json_object_begin(j);
	for (size_t i = 0; i < LEN(cpu_documented); i++)
		write_cpu_member(j, c, we, cpu_documented[i]);
	write_calibration(j, &c->target);
	/* Further cpu statistics, undotted or "cpu.x", after the documented ones. */
	write_group(j, we, "", 0, cpu_documented, LEN(cpu_documented));
	write_group(j, we, "cpu", 3, cpu_documented, LEN(cpu_documented));
	json_object_end(j);
}

/* A string of the target, null when empty or absent. */
static void
string_or_null(struct json *j, const char *key, const char *s)
{
	if (s && s[0])
		json_kstring(j, key, s);
	else
		json_knull(j, key);
}

/* What the heap probe found (manual: requested, detected, module, complete, reason). */
static void
write_allocator_probe(struct json *j, const struct commit_target *t)
{
	json_key(j, "allocator_probe");
	json_object_begin(j);
	/* The family asked for (--allocator), null when heap was not requested. */
	string_or_null(j, "requested", t->heap_requested ? t->allocator_requested : NULL);
	string_or_null(j, "detected", t->allocator_detected);
	string_or_null(j, "module", t->allocator_module);
	json_kbool(j, "complete", t->allocator_complete != 0);
	if (t->heap_requested)
		string_or_null(j, "reason", t->allocator_reason);
	else
		json_kstring(j, "reason", "heap was not requested (--profiles)");
	json_object_end(j);
}

/* The heap object, with a heap profile: since_attach, the exported and dropped totals, the
 * program's counters and the rest of the window's heap statistics, and the scope. */
static void
write_heap(struct json *j, const struct commit_target *t, const struct fr_window_end *we)
{
	char key[64];

	if (!t->heap)
		return;
	json_key(j, "heap");
	json_object_begin(j);
	json_kbool(j, "since_attach", true);
	for (size_t i = 0; i < LEN(heap_documented); i++) {
		snprintf(key, sizeof(key), "heap.%s", heap_documented[i]);
		json_ku64(j, heap_documented[i], stat_get(we, key));
	}
	write_group(j, we, "heap", 4, heap_documented, LEN(heap_documented));
	/* Heap stays on the target process while CPU may follow a cgroup (manual). */
	const char *scope = t->heap_scope && t->heap_scope[0] ? t->heap_scope : "process";
	if (t->scope_effective && strcmp(t->scope_effective, "cgroup") == 0)
		scope = "mixed_process_and_cgroup";
	json_kstring(j, "scope", scope);
	json_object_end(j);
}

/* The physical object, with the physical profiles: the profiles asked, the probability,
 * the window's physical statistics and the profiles' limitations. */
static void
write_physical(struct json *j, const struct commit_target *t, const struct fr_window_end *we)
{
	static const char *const names[] = { "physical-alloc", "physical-usage" };
	struct str list = { t->profiles ? t->profiles : "",
			    (uint16_t)(t->profiles ? strlen(t->profiles) : 0) };
	int asked[2] = { defs_profile_named(list, names[0]), defs_profile_named(list, names[1]) };
	char key[64];

	if (!t->physical)
		return;
	json_key(j, "physical");
	json_object_begin(j);
	json_key(j, "profiles");
	json_array_begin(j);
	/* A target naming neither (a producer that predates the names) has both. */
	for (int i = 0; i < 2; i++)
		if (asked[i] || (!asked[0] && !asked[1]))
			json_str(j, names[i]);
	json_array_end(j);
	json_ku64(j, "probability", t->physical_percent ? t->physical_percent : 100);
	json_kstring(j, "scaled", "alloc_pages and alloc_bytes are scaled by 100/probability; "
		     "usage_pages and usage_bytes count the tracked pages, unscaled");
	for (size_t i = 0; i < LEN(physical_documented) - 1; i++) {
		snprintf(key, sizeof(key), "physical.%s", physical_documented[i]);
		json_ku64(j, physical_documented[i], stat_get(we, key));
	}
	write_group(j, we, "physical", 8, physical_documented, LEN(physical_documented));
	json_key(j, "limitations");
	json_array_begin(j);
	for (size_t i = 0; i < LEN(physical_limitations); i++)
		json_str(j, physical_limitations[i]);
	json_array_end(j);
	json_object_end(j);
}

/* The processes the window covers: requested and in effect ("process" or "cgroup"). */
static void
write_scope(struct json *j, const struct commit_target *t)
{
	json_key(j, "scope");
	json_object_begin(j);
	string_or_null(j, "requested", t->scope_requested);
	string_or_null(j, "effective", t->scope_effective);
	string_or_null(j, "cgroup", t->scope_cgroup);
	string_or_null(j, "reason", t->scope_reason);
	json_object_end(j);
}

/* What fanout shed of this window's derived outputs (SVG, Firefox) because an emitter was
 * still writing an earlier window; all zero when the outputs sit in the main path. */
static void
write_backpressure(struct json *j, const struct fr_window_end *we)
{
	json_key(j, "output_backpressure");
	json_object_begin(j);
	json_kbool(j, "derived_outputs_shed",
		   stat_get(we, "output_backpressure.derived_outputs_shed") != 0);
	json_ku64(j, "pending_windows", stat_get(we, "output_backpressure.pending_windows"));
	json_ku64(j, "skipped_derived_files",
		  stat_get(we, "output_backpressure.skipped_derived_files"));
	json_kbool(j, "otlp_skipped", stat_get(we, "output_backpressure.otlp_skipped") != 0);
	json_object_end(j);
}

/* The OTLP export of the window (emit-otlp's otlp.* statistics), absent without export:
 * its status when the window was published (pending, dropped or skipped), no attempt yet;
 * commit_otlp_result rewrites the first four members once the export has ended. */
static void
write_otlp(struct json *j, const struct fr_window_end *we)
{
	const char *status = commit_otlp_status((unsigned)stat_get(we, "otlp.status"));

	if (!stat_find(we, "otlp.status"))
		return;
	json_key(j, "otlp");
	json_object_begin(j);
	json_kstring(j, "status", status ? status : "failed");
	json_ku64(j, "attempts", stat_get(we, "otlp.attempts"));
	json_ku64(j, "rejected_profiles", stat_get(we, "otlp.rejected_profiles"));
	json_knull(j, "error");
	if (stat_find(we, "otlp.timeline_enabled")) {
		json_kbool(j, "timeline_enabled", stat_get(we, "otlp.timeline_enabled") != 0);
		json_ku64(j, "timeline_samples", stat_get(we, "otlp.timeline_samples"));
		json_ku64(j, "timeline_dropped_samples",
			  stat_get(we, "otlp.timeline_dropped_samples"));
		json_ku64(j, "timeline_timestamp_errors",
			  stat_get(we, "otlp.timeline_timestamp_errors"));
	}
	json_object_end(j);
}

/* "cpu.x" statistics join the cpu object; other groups get their own, in first-seen order,
 * unless the name is taken at the top level. */
static void
write_other_groups(struct json *j, const struct fr_window_end *we)
{
	char name[STREAM_MAX_STR + 1];

	for (uint16_t i = 0; i < we->nstats; i++) {
		struct str k = we->stats[i].key;
		size_t glen = group_len(k);
		int seen = 0;

		if (glen == 0 || in_list(reserved, LEN(reserved), k.p, glen))
			continue;
		for (uint16_t p = 0; p < i && !seen; p++)
			seen = group_len(we->stats[p].key) == glen &&
			       memcmp(we->stats[p].key.p, k.p, glen) == 0;
		if (seen)
			continue;
		memcpy(name, k.p, glen);
		name[glen] = '\0';
		json_key(j, name);
		json_object_begin(j);
		write_group(j, we, name, glen, NULL, 0);
		json_object_end(j);
	}
}

static void
write_window(struct json *j, const struct commit *c, const struct commit_batch *b)
{
	const struct fr_window_end *we = b->end;
	char session[17];
	struct timespec now;

	outname_session(session, c->header.session_id);
	clock_gettime(CLOCK_REALTIME, &now);
	json_ku64(j, "schema_version", DIAG_SCHEMA_VERSION);
	json_kstring(j, "session_id", session);
	json_ku64(j, "window_index", we->index);
	json_key(j, "pid");
	/* pid 0: no target process (record --host). */
	c->target.have && c->target.pid ? json_u64(j, c->target.pid) : json_nil(j);
	json_ki64(j, "window_start_unix_nanos", commit_unix(c, we->start));
	json_ki64(j, "window_end_unix_nanos", commit_unix(c, we->end));
	json_ku64(j, "duration_nanos", we->end >= we->start ? we->end - we->start : 0);
	json_kbool(j, "final_window", we->reason == WINDOW_FINAL);
	json_ki64(j, "written_at_unix_nanos", (int64_t)now.tv_sec * 1000000000 + now.tv_nsec);
}

int
commit_diag_write(FILE *f, const struct commit *c, const struct commit_batch *b, char *err,
		  size_t errlen)
{
	struct json j;

	json_init(&j, f, 1);
	json_object_begin(&j);
	write_window(&j, c, b);
	write_target(&j, &c->target);
	write_profiles(&j, c, b);
	write_outputs(&j, c, b);
	write_cpu(&j, c, b->end);
	json_key(&j, "event_order");
	json_object_begin(&j);
	write_group(&j, b->end, "event_order", strlen("event_order"), NULL, 0);
	json_object_end(&j);
	write_allocator_probe(&j, &c->target);
	write_heap(&j, &c->target, b->end);
	write_physical(&j, &c->target, b->end);
	write_scope(&j, &c->target);
	write_backpressure(&j, b->end);
	write_otlp(&j, b->end);
	write_other_groups(&j, b->end);
	json_object_end(&j);
	if (json_finish(&j) < 0) {
		snprintf(err, errlen, "%s", j.err);
		return -1;
	}
	return 0;
}

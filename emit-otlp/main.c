/*
 * emit-otlp: exports each completed window of the framed stream as OTLP Profiles over
 * HTTP (manual, "OTLP Profiles export"; docs/otlp.md).
 *
 * Runs on the emitter skeleton (lib/emitter.h): the stream on stdin is copied to stdout
 * unchanged, the definitions and the window's stacks kept.  After each window end (when
 * the next frame comes, so the window's end and pprof go on first) it encodes the window
 * as one ExportProfilesServiceRequest (encode.h: one Profile per sample type of
 * each of the window's profiles, one shared dictionary; with --timeline the CPU profile is
 * the window's timestamped samples instead), gzips it unless --compression none, and
 * queues it for the export thread (export.h), which POSTs it to the endpoint while the
 * stream goes on.  It writes no file.  The window's end frame carries otlp.* statistics:
 * status pending (queued), dropped (the queue of four was full) or skipped (nothing to
 * send), and the timeline's counts; the final result of each queued window (exported,
 * partial, failed) follows later in the stream as an FR_EXPORT frame, and commit records
 * it in that window's diagnostics.  At the stream's end frame the queue is drained first,
 * so every result precedes it.  SIGTERM (abnormal teardown) cancels the retries: what is
 * queued fails.
 * Without an endpoint (none given, none in the environment) it is a plain tee.  --check
 * resolves the settings (config.h), prints "enabled" or "disabled", and exits: 1 with one
 * line for a bad setting.  Header values never appear in a message.
 * Confined (lib/confine.h) to the output directory, the resolver's files and a TCP
 * connect to the endpoint's port; the CA roots are read before.
 */
#include <err.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "config.h"
#include "defaults.h"
#include "emitter.h"
#include "encode.h"
#include "export.h"
#include "parse.h"
#include "resource.h"
#include "timeline.h"

#define MAX_BODY (64u << 20)    /* clients should not send more (the format's text) */

static struct env {
	struct config_cli cli;
	int timeline, check;
	uint64_t max_samples;
} env = { .max_samples = RP_DEFAULT_MAX_TIMELINE_SAMPLES };

struct state {
	struct config cfg;
	struct exporter x;
	struct encoder enc;
	struct resource res;
	struct resource_target tgt;
	struct timeline tl;
	uint64_t exported, failed;      /* results, for the closing line */
};

static struct state s;

/* The window that ended, its request still to be made (end_window, queue_window). */
static struct {
	int due;
	uint32_t index;
	uint64_t start, end;
} ended;

static void queue_window(struct emitter *e);

static void
option(int key, const char *value)
{
	struct config_cli *c = &env.cli;
	char e[200];

	switch (key) {
	case 'e': c->endpoint = value; break;
	case 't': c->timeout = value; break;
	case 'c': c->compression = value; break;
	case 'C': c->ca = value; break;
	case 'T': env.timeline = 1; break;
	case 'k': env.check = 1; break;
	case 'H':
		if (c->nheaders == CONFIG_MAX_HEADERS)
			errx(1, "--header: more than %d headers", CONFIG_MAX_HEADERS);
		c->headers[c->nheaders++] = value;
		break;
	case 'r':
		if (c->nattrs == CONFIG_MAX_ATTRS)
			errx(1, "--resource-attribute: more than %d attributes", CONFIG_MAX_ATTRS);
		c->attrs[c->nattrs++] = value;
		break;
	case 'n':
		if (parse_u64(value, 1, 1u << 24, &env.max_samples, e, sizeof(e)) < 0)
			errx(1, "--max-timeline-samples: %s", e);
		break;
	}
}

/* Before the confinement: the settings, the CA roots, libcurl.  --check ends here. */
static void
confine(const char *output, struct rp_confine_spec *spec)
{
	static struct rp_confine_path p[] = {
		{ NULL, RP_CONFINE_READ | RP_CONFINE_WRITE },
		{ "/etc/hosts", RP_CONFINE_READ | RP_CONFINE_OPTIONAL },
		{ "/etc/resolv.conf", RP_CONFINE_READ | RP_CONFINE_OPTIONAL },
		{ "/etc/nsswitch.conf", RP_CONFINE_READ | RP_CONFINE_OPTIONAL },
		{ "/etc/host.conf", RP_CONFINE_READ | RP_CONFINE_OPTIONAL },
		{ "/etc/gai.conf", RP_CONFINE_READ | RP_CONFINE_OPTIONAL },
	};
	char why[300];

	if (config_resolve(&s.cfg, &env.cli, why, sizeof(why)) < 0) {
		config_redact(&s.cfg, why);
		errx(1, "%s", why);
	}
	if (env.check) {
		printf("%s\n", s.cfg.enabled ? "enabled" : "disabled");
		exit(fclose(stdout) != 0);
	}
	if (s.cfg.enabled && exporter_prepare(&s.x, &s.cfg) < 0)
		errx(1, "%s", s.x.err);
	p[0].path = output;
	spec->paths = p;
	spec->npaths = s.cfg.enabled ? sizeof(p) / sizeof(p[0]) : 1;
	if (s.cfg.enabled)
		rp_confine_allow_connect(s.cfg.port);
}

static void
on_term(int sig)
{
	(void)sig;
	exporter_cancel(&s.x);
}

static void
init(struct emitter *e)
{
	struct sigaction sa = { .sa_handler = on_term };

	encoder_init(&s.enc, &e->defs);
	timeline_init(&s.tl, env.max_samples);
	resource_build(&s.res, &s.cfg, &s.tgt);
	if (!s.cfg.enabled)
		return;
	if (exporter_start(&s.x) < 0)
		errx(1, "%s", s.x.err);
	sigaction(SIGTERM, &sa, NULL);
}

static void
release(struct emitter *e)
{
	(void)e;
	if (s.cfg.enabled)
		exporter_release(&s.x);
	encoder_release(&s.enc);
	timeline_release(&s.tl);
	body_release();
	config_release(&s.cfg);
}

/* The results the export thread finished, as FR_EXPORT frames for commit. */
static void
put_results(struct emitter *e)
{
	struct export_result *r;
	size_t n = exporter_take(&s.x, &r);

	for (size_t i = 0; i < n; i++) {
		struct fr_export fx = { .index = r[i].index, .status = r[i].status,
					.attempts = r[i].attempts,
					.rejected = r[i].rejected > 0 ? (uint64_t)r[i].rejected : 0,
					.error = str_of(r[i].error) };

		r[i].status == OTLP_FAILED ? s.failed++ : s.exported++;
		if (stream_put_export(&e->out, &fx) < 0)
			errx(stream_writer_status(&e->out), "%s: %s", e->out.name, e->out.err);
	}
	free(r);
}

static const char *
before(struct emitter *e, const struct frame *f)
{
	if (!s.cfg.enabled)
		return NULL;
	if (ended.due) {
		queue_window(e);
		timeline_clear(&s.tl);
	}
	if (f->type == FR_END) {
		exporter_finish(&s.x);  /* the drain: every queued window, same policy */
		put_results(e);
		if (s.failed)
			warnx("%llu of %llu windows could not be exported (see their diagnostics)",
			      (unsigned long long)s.failed,
			      (unsigned long long)(s.failed + s.exported));
		return NULL;
	}
	put_results(e);
	return NULL;
}

static void
copy_str(char *dst, size_t size, struct str v)
{
	snprintf(dst, size, "%.*s", (int)v.len, v.p);
}

/* A target frame: the resource anew.  A CPU sample: a point of the timeline. */
static const char *
frame(struct emitter *e, const struct frame *f)
{
	static struct fr_stack st;      /* large (a stack): keep it off the stack */
	struct fr_target t;
	char why[200];

	(void)e;
	if (f->type == FR_TARGET) {
		if (stream_get_target(f, &t, why, sizeof(why)) < 0)
			errx(1, "stdin: %s", why);
		s.tgt.pid = t.pid;
		copy_str(s.tgt.kind, sizeof(s.tgt.kind), t.kind);
		copy_str(s.tgt.exe, sizeof(s.tgt.exe), t.exe);
		copy_str(s.tgt.comm, sizeof(s.tgt.comm), t.comm);
		copy_str(s.tgt.ctr_runtime, sizeof(s.tgt.ctr_runtime), t.container_runtime);
		copy_str(s.tgt.ctr_id, sizeof(s.tgt.ctr_id), t.container_id);
		copy_str(s.tgt.ctr_name, sizeof(s.tgt.ctr_name), t.container_name);
		copy_str(s.tgt.k8s_ns, sizeof(s.tgt.k8s_ns), t.k8s_namespace);
		copy_str(s.tgt.k8s_pod, sizeof(s.tgt.k8s_pod), t.k8s_pod_name);
		copy_str(s.tgt.k8s_uid, sizeof(s.tgt.k8s_uid), t.k8s_pod_uid);
		resource_build(&s.res, &s.cfg, &s.tgt);
	} else if (f->type == FR_STACK && env.timeline && s.cfg.enabled) {
		if (stream_get_stack(f, &st, why, sizeof(why)) < 0)
			errx(1, "stdin: %s", why);
		if (timeline_add(&s.tl, &st) < 0)
			errx(1, "out of memory");
	}
	return NULL;
}

static uint64_t
count_or_nanos(const struct wstack *w, unsigned i)
{
	return i ? w->nanos : w->count;
}

static uint64_t
heap_value(const struct wstack *w, unsigned i)
{
	return i == 0 ? w->alloc_objects : i == 1 ? w->alloc_space : i == 2 ? w->count : w->nanos;
}

/* The window's profiles as the encoder's sources, as emit-pprof writes them: CPU (unless
 * the timeline stands for it), off-CPU when the target collects it, heap when it runs. */
static unsigned
sources(const struct emitter *e, struct encode_source *src, int *timeline)
{
	const struct defs *d = &e->defs;
	const char *type = "cpu", *unit = "nanoseconds";
	unsigned n = 0;
	int ns = 1;

	if (d->sample_type.len && d->sample_unit.len) {
		type = defs_str(d, d->sample_type);
		unit = defs_str(d, d->sample_unit);
		ns = !strcmp(type, "cpu") && !strcmp(unit, "nanoseconds");
	}
	/* The timeline is CPU nanoseconds: an imported count event keeps its aggregate. */
	*timeline = d->profile_cpu && env.timeline && ns;
	if (d->profile_cpu && !*timeline)
		src[n++] = (struct encode_source){
			.set = &e->wm.cpu, .nvalues = 2,
			.vt = { { "samples", "count" }, { type, unit } },
			.value = count_or_nanos, .period_type = { type, unit },
			.period = ns && d->cpu_frequency ? 1000000000 / d->cpu_frequency : 0,
		};
	if (e->offcpu)
		src[n++] = (struct encode_source){
			.set = &e->wm.off, .nvalues = 2,
			.vt = { { "intervals", "count" }, { "off_cpu", "nanoseconds" } },
			.value = count_or_nanos,
		};
	/* Heap: the heap pprof's four sample types and its period, every allocation stack. */
	if (e->heap)
		src[n++] = (struct encode_source){
			.set = &e->wm.heap_all, .nvalues = 4,
			.vt = { { "alloc_objects", "count" }, { "alloc_space", "bytes" },
				{ "inuse_objects", "count" }, { "inuse_space", "bytes" } },
			.value = heap_value, .period_type = { "space", "bytes" },
			.period = (int64_t)d->alloc_interval,
		};
	return n;
}

static void
add_stat(struct fr_window_end *we, const char *key, uint64_t v)
{
	if (we->nstats < STREAM_MAX_STATS)
		we->stats[we->nstats++] = (struct fr_stat){ str_of(key), v };
}

/* The encoder's view of the window that ended: its sources and timeline. */
static void
window_of(const struct emitter *e, struct encode_window *w, struct encode_source *src)
{
	int timeline;

	*w = (struct encode_window){ .src = src, .start = ended.start, .end = ended.end,
				     .clock_offset_ns = e->hdr.clock_offset_ns,
				     .resource = &s.res.r, .scope = &s.res.scope };
	w->nsrc = sources(e, src, &timeline);
	if (timeline) {
		w->tl = &s.tl;
		w->tl_period = e->defs.cpu_frequency ? 1000000000 / e->defs.cpu_frequency : 0;
	}
}

/* Encodes, gzips and queues the window that ended (its slot was kept).  A failure is a
 * result of its own, failed, passed on like the thread's. */
static void
queue_window(struct emitter *e)
{
	struct encode_source src[ENCODE_MAX_SOURCES];
	struct encode_window w;
	struct export_result r = { .index = ended.index, .status = OTLP_FAILED };
	uint8_t *buf, *gz;
	size_t len, gzlen;

	window_of(e, &w, src);
	ended.due = 0;
	if (encoder_run(&s.enc, &w, &buf, &len) < 0) {
		snprintf(r.error, sizeof(r.error), "cannot encode the window: %.160s",
			 s.enc.err);
	} else if (len > MAX_BODY) {
		snprintf(r.error, sizeof(r.error), "the request would be %zu bytes, over 64 MiB",
			 len);
		free(buf);
	} else if (s.cfg.gzip && body_gzip(buf, len, &gz, &gzlen) < 0) {
		snprintf(r.error, sizeof(r.error), "cannot gzip the request: out of memory");
		free(buf);
	} else {
		if (s.cfg.gzip)
			free(buf), buf = gz, len = gzlen;
		if (exporter_submit(&s.x, ended.index, buf, len) == 0)
			return;
		snprintf(r.error, sizeof(r.error), "the export queue was full");  /* cannot be */
	}
	exporter_result(&s.x, &r);
}

/* The window's end goes on at once, its otlp.* statistics telling what will become of
 * it; the request is made when the next frame comes (before it is forwarded, while the
 * definitions and the window's stacks are still those of the window), so encoding it
 * never holds up the window's pprof. */
static void
end_window(struct emitter *e, struct fr_window_end *we)
{
	struct encode_source src[ENCODE_MAX_SOURCES];
	struct encode_window w;
	uint64_t points = 0, errors = 0;
	size_t stacks;
	unsigned status;

	if (!s.cfg.enabled)
		return;
	ended.index = we->index, ended.start = we->start, ended.end = we->end;
	window_of(e, &w, src);
	encode_count_points(&w, &points, &errors);
	stacks = w.tl ? points : 0;
	for (unsigned i = 0; i < w.nsrc; i++)
		stacks += src[i].set->nstacks;
	/* A full queue: dropped, not even encoded.  Only this thread adds to it, so the slot
	 * found free now is still free when the request is made. */
	status = !stacks ? OTLP_SKIPPED : exporter_full(&s.x) ? OTLP_DROPPED : OTLP_PENDING;
	ended.due = status == OTLP_PENDING;
	add_stat(we, "otlp.status", status);
	add_stat(we, "otlp.attempts", 0);
	add_stat(we, "otlp.rejected_profiles", 0);
	if (env.timeline) {
		add_stat(we, "otlp.timeline_enabled", 1);
		add_stat(we, "otlp.timeline_samples", status == OTLP_PENDING ? points : 0);
		add_stat(we, "otlp.timeline_dropped_samples", s.tl.dropped);
		add_stat(we, "otlp.timeline_timestamp_errors", errors);
	}
	e->restated = 1;
	if (!ended.due)
		timeline_clear(&s.tl);
}

static const struct emitter_ops otlp_ops = {
	.name = "emit-otlp",
	.synopsis = "usage: emit-otlp [--output DIR] [--endpoint URL] [--header KEY=VALUE]...\n"
		    "                 [--timeout DURATION] [--compression none|gzip] [--ca PATH]\n"
		    "                 [--resource-attribute KEY=VALUE]... [--timeline]\n"
		    "                 [--max-timeline-samples N] [--check] < stream > stream\n",
	.writes = "an OTLP Profiles request (opentelemetry-proto v1.11.0) POSTed to the endpoint by\n"
		  "a thread of its own, queued (at most 4 windows) and retried as the manual says;\n"
		  "no file.  Settings not given come from OTEL_EXPORTER_OTLP_PROFILES_*, then\n"
		  "OTEL_EXPORTER_OTLP_*; without an endpoint it only copies the stream.\n",
	.output_help = "the run's output directory (default .)",
	.column = 32,
	.options = (const struct emitter_option[]){
		{ "endpoint", required_argument, 'e', "-e, --endpoint URL",
		  "http:// or https:// URL; without a path, the\n"
		  "Profiles path " OTLP_PATH " is added" },
		{ "header", required_argument, 'H', "-H, --header KEY=VALUE",
		  "an HTTP header of every request (repeatable)" },
		{ "timeout", required_argument, 't', "-t, --timeout DURATION",
		  "per attempt (default " RP_DEFAULT_OTLP_TIMEOUT ")" },
		{ "compression", required_argument, 'c', "-c, --compression none|gzip",
		  "of the requests (default " RP_DEFAULT_OTLP_COMPRESSION ")" },
		{ "ca", required_argument, 'C', "-C, --ca PATH",
		  "a PEM CA file trusted beside the system's roots" },
		{ "resource-attribute", required_argument, 'r', "-r, --resource-attribute K=V",
		  "a resource attribute (repeatable)" },
		{ "timeline", no_argument, 'T', "-T, --timeline",
		  "send the timestamped CPU samples instead of the\n"
		  "aggregated CPU profile" },
		{ "max-timeline-samples", required_argument, 'n', "-n, --max-timeline-samples N",
		  "timeline samples kept per window (default "
		  RP_DEFAULT_TEXT(RP_DEFAULT_MAX_TIMELINE_SAMPLES) ")" },
		{ "check", no_argument, 'k', "    --check",
		  "resolve the settings, print enabled or disabled" },
		{ 0 },
	},
	.stray_is_error = 1,
	.order_rules = ORDER_UNIQUE_STACKS,
	.keep_stacks = 1,
	.option = option,
	.confine = confine,
	.init = init,
	.release = release,
	.before = before,
	.frame = frame,
	.end = end_window,
};

int
main(int argc, char **argv)
{
	return emitter_main(&otlp_ops, argc, argv);
}

/*
 * commitgen: writes a synthetic stream for the commit stage on stdout, creating the temp
 * files its FR_FILE frames name in DIR, as the emitters would.
 *
 * usage: commitgen [options] DIR
 *   --windows N         windows to write (default 1)
 *   --svg               also an optional "svg-cpu" file per window
 *   --warnings          a warning before the first window and one inside each window
 *   --truncate K        stop in the middle of window K (after its files), mid-frame
 *   --no-end            omit the END frame
 *   --missing-temp K    announce window K's cpu file without creating its temp
 *   --bad-name          a file whose name leaves the directory
 *   --orphan-end        a window end without its start, after the last window's files
 *   --discard K         after window K's end, its "svg-cpu" file flagged FILE_DISCARD (as
 *                       fanout passes on a file of a window published without it)
 *   --discard-published K  after window K's end, a FILE_DISCARD frame whose temporary
 *                       file is window K's published pprof
 *
 * Event times: window i covers [(i + 1) s, (i + 2) s) of the event clock; the header's
 * clock offset is 1700000000 s, so window i starts at unix (1700000001 + i) s.
 */
#include <err.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "outname.h"
#include "stream.h"

#define SESSION 0x0123456789abcdefULL
#define OFFSET 1700000000000000000LL
#define SEC 1000000000ULL

static struct {
	int windows, svg, warnings, truncate, no_end, missing, bad_name, orphan_end;
	int discard, discard_published;
	const char *dir;
} opt = { .windows = 1, .truncate = -1, .missing = -1, .discard = -1,
	  .discard_published = -1 };

static struct stream_writer w;

static struct str
S(const char *s)
{
	return (struct str){ s, (uint16_t)strlen(s) };
}

static void
check(int rc)
{
	if (rc < 0)
		errx(1, "%s", w.err);
}

static void
make_temp(const char *temp, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", opt.dir, temp);
	if (!(f = fopen(path, "w")) || fputs(text, f) < 0 || fclose(f) != 0)
		err(1, "cannot write '%s'", path);
}

static void
put_file(uint32_t index, const char *kind, const char *name, uint32_t flags, int create)
{
	char temp[300];
	struct fr_file f = { index, flags, S(kind), S(name), { temp, 0 } };

	snprintf(temp, sizeof(temp), ".%s.tmp-gen000", name);
	f.temp = S(temp);
	if (create)
		make_temp(temp, kind);
	check(stream_put_file(&w, &f));
}

static void
put_warning(uint64_t time, const char *text)
{
	struct fr_warning v = { time, S(text) };

	check(stream_put_warning(&w, &v));
}

static void
put_end(uint32_t index, uint64_t start, uint64_t end, int final)
{
	static const char *const keys[] = {
		"samples", "lost_samples", "malformed_samples", "aggregation_dropped_samples",
		"aggregation_dropped_nanoseconds", "cpu_nanoseconds", "usable_stacks",
		"unusable_stacks", "truncated_stacks", "empty_stacks", "cyclic_stacks",
		"out_of_mapping_stacks", "distinct_stacks", "max_stacks",
		"event_order.max_pending_events", "event_order.reorder_window_nanos",
		"event_order.peak_pending_events", "event_order.late_events",
		"event_order.forced_flushes", "event_order.timeline_events_dropped",
		"off_cpu.intervals",
	};
	static struct fr_window_end v;

	memset(&v, 0, sizeof(v));
	v.index = index;
	v.start = start;
	v.end = end;
	v.reason = final ? WINDOW_FINAL : WINDOW_COMPLETE;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		v.stats[v.nstats++] = (struct fr_stat){ S(keys[i]), 100 * index + i };
	/* 3 usable, 1 unusable: ratio 0.75 */
	v.stats[6].value = 3;
	v.stats[7].value = 1;
	check(stream_put_window_end(&w, &v));
}

static void
put_window(uint32_t i)
{
	uint64_t start = (i + 1) * SEC, end = start + SEC;
	struct fr_window_start ws = { i, start, end };
	char name[256];

	check(stream_put_window_start(&w, &ws));
	if (opt.warnings)
		put_warning(start + SEC / 2, "warning inside window");
	if (opt.bad_name)
		put_file(i, "cpu", "../escape.pb.gz", 1, 0);
	if (opt.svg) {
		outname_format(name, sizeof(name), "cpu", SESSION, i, OFFSET + (int64_t)start, "svg");
		put_file(i, "svg-cpu", name, 0, 1);
	}
	outname_format(name, sizeof(name), "cpu", SESSION, i, OFFSET + (int64_t)start, "pb.gz");
	put_file(i, "cpu", name, FILE_REQUIRED, (int)i != opt.missing);
	if (opt.orphan_end && i + 1 == (uint32_t)opt.windows)
		put_end(7, start, end, 0);
	if ((int)i == opt.truncate) {
		/* Half a frame header: the stream stops mid-frame. */
		check(stream_flush(&w));
		if (write(1, "\x20\x00\x00\x00\x10", 5) != 5)
			err(1, "stdout");
		exit(0);
	}
	put_end(i, start, end, i + 1 == (uint32_t)opt.windows);
	if ((int)i == opt.discard) {
		outname_format(name, sizeof(name), "cpu", SESSION, i, OFFSET + (int64_t)start, "svg");
		put_file(i, "svg-cpu", name, FILE_DISCARD, 1);
	}
	if ((int)i == opt.discard_published) {
		char pub[256];
		outname_format(pub, sizeof(pub), "cpu", SESSION, i, OFFSET + (int64_t)start,
			       "pb.gz");
		outname_format(name, sizeof(name), "cpu", SESSION, i, OFFSET + (int64_t)start, "svg");
		struct fr_file f = { i, FILE_DISCARD, S("svg-cpu"), S(name), S(pub) };
		check(stream_put_file(&w, &f));
	}
}

static void
parse(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "windows", required_argument, NULL, 'w' },
		{ "svg", no_argument, NULL, 's' },
		{ "warnings", no_argument, NULL, 'W' },
		{ "truncate", required_argument, NULL, 't' },
		{ "no-end", no_argument, NULL, 'n' },
		{ "missing-temp", required_argument, NULL, 'm' },
		{ "bad-name", no_argument, NULL, 'b' },
		{ "orphan-end", no_argument, NULL, 'o' },
		{ "discard", required_argument, NULL, 'd' },
		{ "discard-published", required_argument, NULL, 'p' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'w': opt.windows = atoi(optarg); break;
		case 's': opt.svg = 1; break;
		case 'W': opt.warnings = 1; break;
		case 't': opt.truncate = atoi(optarg); break;
		case 'n': opt.no_end = 1; break;
		case 'm': opt.missing = atoi(optarg); break;
		case 'b': opt.bad_name = 1; break;
		case 'o': opt.orphan_end = 1; break;
		case 'd': opt.discard = atoi(optarg); break;
		case 'p': opt.discard_published = atoi(optarg); break;
		default: errx(1, "usage: commitgen [options] DIR");
		}
	}
	if (optind + 1 != argc)
		errx(1, "usage: commitgen [options] DIR");
	opt.dir = argv[optind];
}

int
main(int argc, char **argv)
{
	struct stream_header h = { STREAM_VERSION, 1, OFFSET, SESSION, 62 };
	struct fr_target t = {
		.pid = 4242, .cpu_frequency = 99, .kind = S("pid"), .exe = S("/usr/bin/work\"er"),
		.comm = S("work\ter"), .unwind_requested = S("auto"), .unwind_mode = S("fp"),
		.unwind_reason = S("frame pointers present"), .profiles = S("cpu"),
		.kernel_release = S("6.1.0-test"),
	};
	struct fr_end end = { 100 * SEC, END_DURATION };

	parse(argc, argv);
	check(stream_writer_open(&w, 1, "stdout", &h));
	check(stream_put_target(&w, &t));
	if (opt.warnings)
		put_warning(SEC / 2, "warning before the first window");
	for (int i = 0; i < opt.windows; i++)
		put_window((uint32_t)i);
	if (!opt.no_end)
		check(stream_put_end(&w, &end));
	check(stream_flush(&w));
	stream_writer_release(&w);
	return 0;
}

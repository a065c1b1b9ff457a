#include "announce.h"

#include <err.h>
#include <string.h>

void
announce_window(struct stream_writer *out, const struct fr_file *ff, struct tmpfile *t, int n,
		const struct frame *we)
{
	int ok = 1;

	for (int i = 0; ok && i < n; i++)
		ok = stream_put_file(out, &ff[i]) == 0;
	ok = ok && stream_forward(out, we) == 0 && stream_flush(out) == 0;
	for (int i = 0; i < n; i++)
		ok ? tmpfile_release(&t[i]) : tmpfile_discard(&t[i]);
	if (!ok)
		errx(1, "%s: %s", out->name, out->err);
}

struct fr_file
announce_file(uint32_t index, uint32_t flags, const char *kind, const char *name,
	      const struct tmpfile *t)
{
	return (struct fr_file){
		.index = index, .flags = flags,
		.kind = { kind, (uint16_t)strlen(kind) },
		.name = { name, (uint16_t)strlen(name) },
		.temp = { t->name, (uint16_t)strlen(t->name) },
	};
}

void
announce_models(struct stream_writer *out, const char *src, struct winmodel *cpu,
		struct winmodel *off, const char *const kinds[2], const struct frame *f,
		announce_write_fn fn, void *arg)
{
	struct fr_window_end we;
	struct fr_file ff[2];
	struct tmpfile t[2];
	char name[2][256];
	int n = 0;

	if (winmodel_end(cpu, f, &we) < 0)
		errx(1, "%s: %s", src, cpu->err);
	if (cpu->defs.profile_cpu) {
		fn(arg, cpu, "cpu", kinds[0], &we, &t[n], &ff[n], name[n], sizeof(name[n]));
		n++;
	}
	if (off->open) {
		if (winmodel_end(off, f, &we) < 0) {
			/* Nothing else would remove the CPU file of a window given up. */
			for (int i = 0; i < n; i++)
				tmpfile_discard(&t[i]);
			errx(1, "%s: %s", src, off->err);
		}
		fn(arg, off, "off-cpu", kinds[1], &we, &t[n], &ff[n], name[n], sizeof(name[n]));
		n++;
	}
	announce_window(out, ff, t, n, f);
}

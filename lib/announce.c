#include "announce.h"

#include <err.h>

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

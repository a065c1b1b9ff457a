/*
 * offcpuseed: a seed for fuzz/bpf_ring.c from a saved stream with off-CPU data.  Each
 * FR_OFFCPU becomes what the BPF program had left for collect: its stacks in the stack map
 * and the user stack table, one ring record per interval (the first 8; with the stack copy when the frame
 * has one), a thread still off the CPU in the "starts" map for a piece cut at a round; each
 * FR_ROUND a drain.  The seed ends after N off-CPU frames.
 *
 * usage: offcpuseed N < stream > seed
 * Not part of the product: sh fuzz/seeds.sh streams runs it.
 */
#include <err.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream.h"
#include "offcpu_shared.h"

static void
cmd(uint8_t op, const void *a, size_t na, const void *b, size_t nb)
{
	size_t n = na + nb;
	uint8_t h[3] = { op, (uint8_t)n, (uint8_t)(n >> 8) };
	fwrite(h, 1, 3, stdout);
	fwrite(a, 1, na, stdout);
	if (nb)
		fwrite(b, 1, nb, stdout);
}

/* The ring records of one off-CPU frame's intervals (the first 8), k and u its stacks:
 * an interval that goes on becomes a "starts" entry, listed in open_tid for the next drain. */
static void
put_intervals(const struct fr_offcpu *v, int32_t k, int32_t u, uint32_t open_tid[64],
	      size_t *nopen)
{
	for (uint32_t i = 0; i <= v->nmore && i < 8; i++) {
		struct offcpu_span s = stream_offcpu_span(v, i);
		struct offcpu_deep_event d = { 0 };
		d.e = (struct offcpu_event){ .start = s.start, .end = s.end, .pid = v->pid,
					     .tid = v->tid, .cpu = v->cpu, .phase = v->phase,
					     .kstack = k, .ustack = u };
		for (uint32_t w = 0; w < v->ntop && w < OFFCPU_TOP_WORDS; w++)
			d.e.top[w] = stream_offcpu_top(v, i, w);
		if ((s.flags & OFFCPU_CONTINUES) && *nopen < 64) {
			struct offcpu_start st = { .ts = s.start, .kstack = k, .ustack = u,
						   .pid = v->pid, .cpu = v->cpu,
						   .phase = v->phase };
			memcpy(st.top, d.e.top, sizeof(st.top));
			cmd(2, &v->tid, 4, &st, sizeof(st));
			open_tid[(*nopen)++] = v->tid;
			continue;
		}
		if (v->nstack && i == 0) {
			d.d.ts = s.start;
			d.d.sp = v->sp;
			d.d.bp = v->bp;
			memcpy(d.d.stack, v->stack,
			       v->nstack < sizeof(d.d.stack) ? v->nstack : sizeof(d.d.stack));
			cmd(3, &d, sizeof(d), NULL, 0);
		} else {
			cmd(3, &d.e, sizeof(d.e), NULL, 0);
		}
	}
}

int
main(int argc, char **argv)
{
	static struct stream_reader in;
	static struct fr_offcpu v;
	struct stream_header h;
	struct frame f;
	char e[200];
	int32_t next_k = 1, next_u = 0;
	uint32_t open_tid[64];
	size_t nopen = 0;

	if (argc != 2)
		errx(2, "usage: offcpuseed N < stream > seed");
	unsigned max = (unsigned)atoi(argv[1]), seen = 0;
	if (stream_reader_open(&in, 0, "stdin", &h) < 0)
		errx(1, "stdin: %s", in.err);
	uint8_t ncpu = 1;
	uint64_t zero = 0, end = 0;
	fwrite(&ncpu, 1, 1, stdout);
	fwrite(&zero, 8, 1, stdout);
	fwrite(&zero, 8, 1, stdout);
	long end_at = ftell(stdout);
	fwrite(&zero, 8, 1, stdout);
	while (stream_read(&in, &f) > 0) {
		if (seen > max)
			break;
		if (f.type == FR_ROUND) {
			struct fr_round r;
			if (stream_get_round(&f, &r, e, sizeof(e)) == 0)
				cmd(4, &r.time, 8, NULL, 0);
			for (size_t i = 0; i < nopen; i++)
				cmd(7, &open_tid[i], 4, NULL, 0);
			nopen = 0;
			continue;
		}
		if (f.type == FR_END) {
			struct fr_end x;
			if (stream_get_end(&f, &x, e, sizeof(e)) == 0)
				end = x.time;
			continue;
		}
		if (f.type != FR_OFFCPU || seen++ >= max)
			continue;
		if (stream_get_offcpu(&f, &v, e, sizeof(e)) < 0)
			errx(1, "stdin: %s", e);
		int32_t k = v.flags & OFFCPU_NO_KSTACK ? -1 : next_k++;
		int32_t u = v.flags & OFFCPU_NO_USTACK ? -1 : OFFCPU_STACK_SLOTS + next_u++;
		if (k >= 0)
			cmd(0, &k, 4, v.ips, v.nkernel * 8u);
		if (u >= 0) {
			uint32_t hdr[2] = { (uint32_t)(u - OFFCPU_STACK_SLOTS), v.nuser };
			cmd(1, hdr, 8, v.ips + v.nkernel, v.nuser * 8u);
		}
		put_intervals(&v, k, u, open_tid, &nopen);
	}
	fseek(stdout, end_at, SEEK_SET);
	fwrite(&end, 8, 1, stdout);
	return fclose(stdout) != 0;
}

/* libbpf's messages: kept quiet, the last warning kept for the one-line reason of a
 * failed load (collect's BPF programs share one libbpf). */
#ifndef COLLECT_BPFLOG_H
#define COLLECT_BPFLOG_H

/* Routes libbpf's messages here and forgets the last one; verbose (-v) also prints them,
 * "collect: libbpf: ...", debug ones included. */
void bpflog_reset(int verbose);
/* libbpf's last warning since bpflog_reset, "" when none. */
const char *bpflog_last(void);

#endif

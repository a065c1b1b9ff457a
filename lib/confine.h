/*
 * Confinement of a pipeline stage (docs/privileges.md).  One call early in main(), after
 * option parsing and before the stage reads its input or starts a thread:
 *
 *   1. prctl(PR_SET_DUMPABLE, 0): no other process of the same uid may ptrace the stage
 *      or read its memory, environment or fds through /proc;
 *   2. every capability dropped (effective, permitted, inheritable, ambient, and the
 *      bounding set when CAP_SETPCAP allows it);
 *   3. PR_SET_NO_NEW_PRIVS;
 *   4. a Landlock ruleset handling every file-system right the kernel knows, TCP bind and
 *      connect (no rule but the ports named for connect: the spec's, for a --debuginfod
 *      fetch, and the one of rp_confine_allow_connect, emit-otlp's endpoint) and, from ABI
 *      6, signals and
 *      abstract unix sockets outside the stage.  It allows the paths of the spec, read and
 *      execute of the shared-library directories (glibc may dlopen libgcc_s), and nothing
 *      else.
 *
 * Without Landlock (ENOSYS, EOPNOTSUPP) a stage running as uid 0 is refused: for uid 0
 * Landlock is what keeps it out of /etc.  Any other uid goes on unconfined by Landlock,
 * with steps 1-3 done, since the kernel's permission checks still apply to it.
 *
 * RUSTPROFILE_CONFINE_SELFTEST (any value) makes the call, once confined, try to create
 * /tmp/rustprofile-confine-selftest-<pid> (or the same name in the directory the variable
 * names, when it is an absolute path) and to open /etc/shadow, and say on stderr how each
 * attempt went ("<prog>: confine selftest: open /etc/shadow: Permission denied").
 */
#ifndef RP_CONFINE_H
#define RP_CONFINE_H

#include <stddef.h>
#include <stdint.h>

/* What a path of the spec allows.  A directory's rights hold beneath it. */
#define RP_CONFINE_READ 1u      /* read files; list directories */
#define RP_CONFINE_WRITE 2u     /* write files; in a directory also create, rename and
				 * remove regular files and directories (never devices,
				 * FIFOs, sockets or symbolic links) */
#define RP_CONFINE_OPTIONAL 4u  /* a missing path is skipped, not an error */

struct rp_confine_path {
	const char *path;
	unsigned access;        /* RP_CONFINE_* */
};

/* A TCP port the stage may connect to (from Landlock ABI 4; older kernels do not restrict
 * TCP at all).  Only a stage that fetches over the network names one: unwind and serve
 * with --debuginfod. */
struct rp_confine_port {
	unsigned port;
};

struct rp_confine_spec {
	const struct rp_confine_path *paths;
	size_t npaths;
	int no_selftest;        /* a helper process: the stage itself runs the selftest */
	const struct rp_confine_port *connect;  /* may be NULL */
	size_t nconnect;
};

/* What name resolution and TLS read (resolver and NSS configuration, CA certificates):
 * writes up to RP_CONFINE_NET_PATHS optional read rules into p and returns how many; a stage
 * that connects to a --debuginfod URL adds them. */
#define RP_CONFINE_NET_PATHS 10
size_t rp_confine_network_paths(struct rp_confine_path *p);

/* Before rp_confine: TCP connect to port stays allowed (emit-otlp's endpoint). */
void rp_confine_allow_connect(uint16_t port);

/* Confines the calling process (which must still have a single thread) as described
 * above; prog prefixes the selftest lines.  0, or -1 with a one-line reason in err
 * ("cannot open '/x': No such file or directory"); the process may be partly confined
 * after a failure, so the caller exits. */
int rp_confine(const char *prog, const struct rp_confine_spec *spec, char *err,
	       size_t errlen);

/* The kernel's Landlock ABI version, 0 when Landlock is not available. */
int rp_landlock_abi(void);

#endif

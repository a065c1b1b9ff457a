/*
 * collect's privileges after setup (docs/privileges.md): once the events are open, the
 * BPF programs attached, the target described and the kernel symbols read, collect keeps
 * in its permitted and effective sets only the capabilities its loop still uses, clears
 * the inheritable, ambient and bounding sets and sets no-new-privs.
 */
#ifndef COLLECT_PRIVDROP_H
#define COLLECT_PRIVDROP_H

/* As early as possible: non-dumpable, so no process of the same uid may ptrace collect or
 * read its memory through /proc (collect still reads the target's /proc). */
void privdrop_nondumpable(void);

/* The drop itself; exits with one line on a failure.  verbose: say what was kept. */
void privdrop_keep_needed(int verbose);

#endif

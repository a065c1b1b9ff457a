/* Command line of collect. */
#ifndef COLLECT_OPTS_H
#define COLLECT_OPTS_H

#include "collect.h"

/* Fills o (defaults first); prints --help and exits 0, or exits 1 on a bad option. */
void opts_parse(int argc, char **argv, struct collect_opts *o);

#endif

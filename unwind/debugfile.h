/* debugfile: finding the separate debug file of a stripped module.
 *
 * Candidates, in this order (the manual's "Symbols and debug information"):
 *   1. GNU .gnu_debuglink NAME next to the module: DIR/NAME, DIR/.debug/NAME,
 *      /usr/lib/debug/DIR/NAME (DIR is the module's directory)
 *   2. /usr/lib/debug/PATH and /usr/lib/debug/PATH.debug
 *   3. /usr/lib/debug/.build-id/xx/rest.debug (xx: first build id byte in hex, rest: the rest)
 *   4. for each symbol dir D, in the order given:
 *        D/.build-id/xx/rest.debug, D/.build-id/xx/rest, D/HEX/debuginfo (a debuginfod cache),
 *        D/BASENAME.debug, D/BASENAME, D/NAME (the debuglink name)
 * A candidate is used only when it carries DWARF or a .symtab and, when the module has a
 * build id, the same build id; without a build id a debuglink candidate must match the
 * link's CRC32 instead.
 */
#ifndef RP_DEBUGFILE_H
#define RP_DEBUGFILE_H

#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

struct debugfile_query {
	const char *path;			/* the module's path, NULL when unknown */
	const char *debuglink;			/* .gnu_debuglink name, NULL when none */
	uint32_t crc;				/* .gnu_debuglink CRC32 */
	const uint8_t *build_id;		/* NULL/0 when unknown */
	size_t build_id_len;
	const char *const *dirs;		/* symbol directories */
	size_t ndirs;
};

struct elffile {
	int fd;
	Elf *elf;
	char *path;				/* malloc'ed */
};

/* Opens path read-only as an ELF file.  Returns 0, or -1 when missing or not ELF. */
int elffile_open(struct elffile *, const char *path);
void elffile_close(struct elffile *);	/* accepts a zeroed or closed one */

/* Finds, opens and returns in *out the first usable debug file.  Returns 0, or -1 when
 * none is found. */
int debugfile_find(const struct debugfile_query *, struct elffile *out);

/* Formats a build id as lower-case hex into buf (2 * len + 1 bytes). */
void build_id_hex(const uint8_t *id, size_t len, char *buf);

#endif

/* ELF facts collect needs before the unprivileged stages see a file. */
#ifndef COLLECT_ELFID_H
#define COLLECT_ELFID_H

#include <stddef.h>
#include <stdint.h>

/* The GNU build id of the ELF file on fd: its length (1..cap), 0 when there is none or the
 * file is not ELF.  The fd stays open and its offset is not used. */
int elfid_build_id(int fd, uint8_t *out, size_t cap);

/* e_machine of the ELF file on fd, or -1 when it is not ELF. */
int elfid_machine(int fd);

#endif

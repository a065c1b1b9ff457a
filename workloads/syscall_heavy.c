/*
 * syscall_heavy [SECONDS] [vdso]: spends most of its time in the kernel through small syscalls:
 * 1-byte write()s to /dev/null, 64 KiB read()s from /dev/zero (the kernel clears the buffer)
 * and getppid(), so profiles show kernel frames on top of known user frames.
 *
 * Stacks (leaf first): <kernel frames> <- do_write | do_read | do_getppid <- burst <- run_loop
 * <- main.  On x86-64 the syscall instruction sits in our own do_* functions rather than in
 * libc's wrappers: those keep no frame pointer, which would hide the do_* caller from a
 * frame-pointer unwind.  For the same reason each do_* calls checked() after the syscall:
 * GCC 12 drops the frame pointer of leaf functions even with -fno-omit-frame-pointer.
 *
 * With "vdso" it calls clock_gettime() in a loop instead, which the C library answers from
 * the vDSO without entering the kernel: stacks __vdso_clock_gettime (the vDSO's own name,
 * or clock_gettime) <- clock_gettime <- do_clock <- vdso_loop <- main.
 */
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

#define ZERO_BYTES 65536	/* large enough that clearing it is visible kernel work */

static char buf[ZERO_BYTES];

#if defined(__x86_64__)
static long raw3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
}
#else
#define raw3(nr, a, b, c) syscall((nr), (a), (b), (c))
#endif

/* A call that makes its callers non-leaf functions, so they keep a frame (see above). */
WL_KEEP long checked(long ret)
{
	return ret;
}

WL_KEEP long do_write(int fd)
{
	return checked(raw3(SYS_write, fd, (long)buf, 1));
}

WL_KEEP long do_read(int fd)
{
	return checked(raw3(SYS_read, fd, (long)buf, sizeof(buf)));
}

WL_KEEP long do_getppid(void)
{
	return checked(raw3(SYS_getppid, 0, 0, 0));
}

/* One round of each kind; fails loudly rather than spinning on a broken fd. */
WL_KEEP void burst(int out, int in)
{
	for (int i = 0; i < 64; i++) {
		if (do_write(out) != 1)
			errx(1, "write to /dev/null failed");
		if (do_getppid() <= 0)
			errx(1, "getppid failed");
	}
	if (do_read(in) != (long)sizeof(buf))
		errx(1, "read from /dev/zero failed");
}

WL_KEEP void run_loop(uint64_t deadline, int out, int in)
{
	while (!wl_expired(deadline))
		burst(out, in);
}

WL_KEEP long do_clock(void)
{
	struct timespec ts;
	return checked(clock_gettime(CLOCK_MONOTONIC, &ts));
}

WL_KEEP void vdso_loop(uint64_t deadline)
{
	while (!wl_expired(deadline))
		for (int i = 0; i < 1024; i++)
			if (do_clock() != 0)
				errx(1, "clock_gettime failed");
}

int main(int argc, char **argv)
{
	uint64_t deadline = wl_deadline(argc, argv);
	if (argc > 2 && strcmp(argv[2], "vdso") == 0) {
		vdso_loop(deadline);
		return 0;
	}
	int out = open("/dev/null", O_WRONLY | O_CLOEXEC);
	int in = open("/dev/zero", O_RDONLY | O_CLOEXEC);

	if (out < 0 || in < 0)
		err(1, "cannot open /dev/null or /dev/zero");
	run_loop(deadline, out, in);
	return 0;
}

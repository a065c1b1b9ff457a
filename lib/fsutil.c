#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

int
fs_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = EIO; /* a regular file or pipe never does this; do not spin */
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
fs_fsync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc, saved;

	if (fd < 0)
		return -1;
	rc = fsync(fd);
	saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

int
fs_name_ok(const char *name)
{
	return name[0] != '\0' && strchr(name, '/') == NULL && strcmp(name, ".") != 0 &&
	       strcmp(name, "..") != 0;
}

int
fs_unlink_at(int dirfd, const char *name)
{
	if (!fs_name_ok(name)) {
		errno = EINVAL;
		return -1;
	}
	if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
		return -1;
	return 0;
}

int
fs_temp_at(int dirfd, const char *prefix, char *name, size_t len)
{
	int tries, fd, n;
	uint64_t r;

	for (tries = 0; tries < 100; tries++) {
		/* getrandom only seeds the name; O_EXCL is what makes it safe. */
		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
			r = ((uint64_t)getpid() << 32) ^ (uint64_t)tries ^ (uint64_t)(uintptr_t)name;
		n = snprintf(name, len, ".%s.%012llx.tmp", prefix,
			     (unsigned long long)(r & 0xffffffffffffULL));
		if (n < 0 || (size_t)n >= len) {
			errno = ENAMETOOLONG;
			return -1;
		}
		fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

int
fs_check_dir(const char *path, char *err, size_t len)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		snprintf(err, len, "cannot use output directory '%s': %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, len, "output '%s' is not a directory", path);
		return -1;
	}
	return 0;
}

/* tracefs at its place, mounted when missing (tracefs.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "errbuf.h"
#include "tracefs.h"

#define HINT "run rustprofile with CAP_SYS_ADMIN/--privileged or mount tracefs at " TRACEFS_DIR

static int
is_tracefs(void)
{
	struct statfs fs;
	return statfs(TRACEFS_DIR, &fs) == 0 && fs.f_type == TRACEFS_MAGIC;
}

int
tracefs_ensure(int *mounted, char *err, size_t errlen)
{
	*mounted = 0;
	if (is_tracefs())
		return 0;
	if (mount("tracefs", TRACEFS_DIR, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0) {
		*mounted = 1;
		return 0;
	}
	/* Another recording may have mounted it meanwhile. */
	if (errno == EBUSY && is_tracefs())
		return 0;
	if (errno == EPERM)
		return errbuf_fail(err, errlen, "tracefs is not mounted; " HINT);
	return errbuf_fail(err, errlen, "tracefs is not mounted and mounting it failed (%s); " HINT,
			   strerror(errno));
}

/* The name a declaration gives ("bool group_dead", "char comm[16]"): its last identifier
 * before any array bound. */
static int
names(const char *decl, size_t len, const char *field)
{
	while (len && decl[len - 1] == ' ')
		len--;
	if (len && decl[len - 1] == ']') {
		while (len && decl[len - 1] != '[')
			len--;
		if (len)
			len--;
	}
	size_t end = len, flen = strlen(field);
	while (len && (decl[len - 1] == '_' || (decl[len - 1] >= 'a' && decl[len - 1] <= 'z') ||
		       (decl[len - 1] >= 'A' && decl[len - 1] <= 'Z') ||
		       (decl[len - 1] >= '0' && decl[len - 1] <= '9')))
		len--;
	return end - len == flen && memcmp(decl + len, field, flen) == 0;
}

int
tracefs_format_offset(const char *format, const char *field)
{
	for (const char *line = format; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		const char *f = memmem(line, n, "field:", 6);
		const char *semi = f ? memchr(f, ';', n - (size_t)(f - line)) : NULL;
		if (semi && names(f + 6, (size_t)(semi - f - 6), field)) {
			const char *o = memmem(semi, n - (size_t)(semi - line), "offset:", 7);
			if (!o)
				return -1;
			long v = 0;
			int digits = 0;
			for (o += 7; o < line + n && *o >= '0' && *o <= '9' && v < 1 << 16; o++, digits++)
				v = v * 10 + (*o - '0');
			return digits && v < 1 << 16 ? (int)v : -1;
		}
		line = nl ? nl + 1 : NULL;
	}
	return -1;
}

int
tracefs_event_field_offset(const char *event, const char *field)
{
	char path[256], text[8192];
	if ((size_t)snprintf(path, sizeof(path), TRACEFS_DIR "/events/%s/format", event) >=
	    sizeof(path))
		return -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t len = 0;
	ssize_t got;
	while (len < sizeof(text) - 1 &&
	       (got = read(fd, text + len, sizeof(text) - 1 - len)) > 0)
		len += (size_t)got;
	close(fd);
	text[len] = '\0';
	return tracefs_format_offset(text, field);
}

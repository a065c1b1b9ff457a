/*
 * Small file-system helpers for writing output durably.  They return 0 on success and -1
 * with errno set on failure (callers word the message; lib/ never exits).
 */
#ifndef RP_FSUTIL_H
#define RP_FSUTIL_H

#include <stddef.h>

/* Writes all of buf, retrying short writes and EINTR. */
int fs_write_all(int fd, const void *buf, size_t len);

/* fsync()s a directory so renames and unlinks in it survive a crash. */
int fs_fsync_dir(const char *path);

/* 1 when name is a plain file name that stays inside its directory: not empty, no '/',
 * not "." or "..".  Names from the stream are checked with it before any rename/unlink. */
int fs_name_ok(const char *name);
/* The emitters' --output check: 0 when path is a directory, else -1 with a one-line
 * reason in err ("cannot use output directory 'x': No such file or directory"). */
int fs_check_dir(const char *path, char *err, size_t len);

/* Unlinks name inside directory dirfd; a name that is already gone counts as success.
 * Refuses (EINVAL) a name that fs_name_ok() rejects. */
int fs_unlink_at(int dirfd, const char *name);

/* Creates a new empty file ".<prefix>.<random>.tmp" in dirfd with mode 0644, writes its
 * name into name (size len) and returns an fd open for writing, or -1.  The leading dot
 * keeps half-written files out of casual listings. */
int fs_temp_at(int dirfd, const char *prefix, char *name, size_t len);

#endif

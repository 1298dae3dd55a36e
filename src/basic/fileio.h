/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * File helpers with the two properties the daemon relies on: reads are bounded (no input makes
 * us allocate without limit) and publication is atomic (write a temporary file, fsync it, rename
 * it into place, fsync the directory), so a crash leaves either the old or the new content.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <sys/types.h>

/* Reads at most max_bytes; a larger file is -EFBIG. The result is NUL-terminated. */
int read_full_file(const char *path, size_t max_bytes, char **ret_data, size_t *ret_size);
int read_full_fd(int fd, size_t max_bytes, char **ret_data, size_t *ret_size);

/* Atomically replaces path with data (mode applies to the new file). */
int write_file_atomic(const char *path, const void *data, size_t size, mode_t mode);

/* Writes all of buf, retrying short writes and EINTR. */
int loop_write(int fd, const void *buf, size_t size);

/* Reads exactly size bytes unless EOF comes first; returns bytes read or -errno. */
ssize_t loop_read(int fd, void *buf, size_t size);

int fsync_directory_of(const char *path);

/*
 * Copies from (inside from_dirfd) to to (inside to_dirfd), replacing it atomically: the bytes go
 * to a temporary file beside it, "." TO COPY_FILE_TMP_SUFFIX (which a crash may leave behind),
 * which takes from's mode (and its owner, where we may give it), is fsync()ed and renamed into
 * place; to_dirfd is not fsync()ed. The bytes copied are those from has when the call reads them:
 * a file that grows meanwhile is copied up to where the reads found its end.
 */
#define COPY_FILE_TMP_SUFFIX ".copy"
int copy_file_at(int from_dirfd, const char *from, int to_dirfd, const char *to);

/* mkdir -p with the given mode for each created component. */
int mkdir_p(const char *path, mode_t mode);

/*
 * Opens a directory stream of its own on name inside dir_fd ("." for dir_fd itself); flags are added
 * to O_RDONLY | O_DIRECTORY | O_CLOEXEC (O_NOFOLLOW, say). Always a fresh open, never a dup of dir_fd:
 * a dup shares the directory offset, so a walk through it would start where the last one ended.
 */
int opendir_at(int dir_fd, const char *name, int flags, DIR **ret);

/*
 * Removes name inside dir_fd and, if it is a directory, everything below it, at most depth_max levels
 * down. Never follows symbolic links. Goes on past failures and returns the first error, 0 if all went.
 */
int rm_rf_at(int dir_fd, const char *name, unsigned depth_max);

/* Reads the first line of a small file (like /proc/sys/kernel/random/boot_id), newline stripped. */
int read_one_line_file(const char *path, char **ret_line);

/* This process's resident set (/proc/self/statm), in bytes. */
int self_rss_bytes(uint64_t *ret);

/* The bytes malloc() has handed out and not had back, in every arena (glibc's mallinfo2()): unlike
 * the resident set, not raised by freed memory malloc keeps for reuse. */
uint64_t self_heap_bytes(void);

/* Where this process's own vDSO is mapped ([vdso] in /proc/self/maps at AT_SYSINFO_EHDR), if it is
 * at most max_bytes: its bytes are the vDSO every process on this kernel maps. -ENOENT if not found. */
int self_vdso_range(size_t max_bytes, const void **ret_start, size_t *ret_size);

/* A copy (malloc'd, into *ret) of size bytes at start in process pid's memory (proc_root/PID/mem):
 * -EIO if not all of them could be read. Its bytes are the process's to choose. */
int process_memory_copy(const char *proc_root, uint32_t pid, uint64_t start, size_t size, void **ret);

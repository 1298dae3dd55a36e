/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Bounded reads and atomic publication; see fileio.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "basic/alloc-util.h"
#include "basic/cleanup.h"
#include "basic/fileio.h"
#include "basic/macro.h"

int loop_write(int fd, const void *buf, size_t size) {
        const uint8_t *p = buf;

        while (size > 0) {
                ssize_t k = write(fd, p, size);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        return -EIO;
                p += k;
                size -= (size_t) k;
        }
        return 0;
}

ssize_t loop_read(int fd, void *buf, size_t size) {
        uint8_t *p = buf;
        size_t done = 0;

        while (done < size) {
                ssize_t k = read(fd, p + done, size - done);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                done += (size_t) k;
        }
        return (ssize_t) done;
}

int read_full_fd(int fd, size_t max_bytes, char **ret_data, size_t *ret_size) {
        _cleanup_free_ char *buf = NULL;
        size_t allocated = 0, n = 0;

        for (;;) {
                if (!GREEDY_REALLOC(buf, allocated, n + 4096 + 1))
                        return -ENOMEM;
                ssize_t k = read(fd, buf + n, allocated - n - 1);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                n += (size_t) k;
                if (n > max_bytes)
                        return -EFBIG;
        }
        buf[n] = '\0';
        *ret_data = TAKE_PTR(buf);
        if (ret_size)
                *ret_size = n;
        return 0;
}

int read_full_file(const char *path, size_t max_bytes, char **ret_data, size_t *ret_size) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

        if (fd < 0)
                return -errno;
        return read_full_fd(fd, max_bytes, ret_data, ret_size);
}

int fsync_directory_of(const char *path) {
        _cleanup_free_ char *copy = strdup(path);
        _cleanup_close_ int fd = -EBADF;

        if (!copy)
                return -ENOMEM;
        fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fsync(fd) < 0)
                return -errno;
        return 0;
}

int write_file_atomic(const char *path, const void *data, size_t size, mode_t mode) {
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (asprintf(&tmp, "%s.tmp-XXXXXX", path) < 0)
                return -ENOMEM;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = loop_write(fd, data, size);
        if (r >= 0 && fchmod(fd, mode) < 0)
                r = -errno;
        if (r >= 0 && fsync(fd) < 0)
                r = -errno;
        if (r >= 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0) {
                (void) unlink(tmp);
                return r;
        }
        return fsync_directory_of(path);
}

int copy_file_at(int from_dirfd, const char *from, int to_dirfd, const char *to) {
        _cleanup_close_ int in = -EBADF, out = -EBADF;
        _cleanup_free_ uint8_t *buf = NULL;
        const size_t buf_size = 64 * 1024;
        char tmp[NAME_MAX + 1];
        struct stat st;
        int r = 0;

        if (snprintf(tmp, sizeof tmp, ".%s" COPY_FILE_TMP_SUFFIX, to) >= (int) sizeof tmp)
                return -ENAMETOOLONG;
        in = openat(from_dirfd, from, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (in < 0 || fstat(in, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADF;
        buf = malloc(buf_size);
        if (!buf)
                return -ENOMEM;
        /* A temporary file an earlier run left here goes: it holds nothing but a torn copy. */
        out = openat(to_dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (out < 0)
                return -errno;
        for (;;) {
                ssize_t n = loop_read(in, buf, buf_size);

                if (n < 0) {
                        r = (int) n;
                        break;
                }
                r = loop_write(out, buf, (size_t) n);
                if (r < 0 || (size_t) n < buf_size)
                        break;
        }
        if (r >= 0)
                (void) fchown(out, st.st_uid, st.st_gid); /* not ours to give: the mode still holds */
        if (r >= 0 && fchmod(out, st.st_mode & 07777) < 0)
                r = -errno;
        if (r >= 0 && fsync(out) < 0)
                r = -errno;
        if (r >= 0 && renameat(to_dirfd, tmp, to_dirfd, to) < 0)
                r = -errno;
        if (r < 0)
                (void) unlinkat(to_dirfd, tmp, 0);
        return r;
}

int mkdir_p(const char *path, mode_t mode) {
        _cleanup_free_ char *p = strdup(path);

        if (!p)
                return -ENOMEM;
        for (char *s = p + 1; *s; s++) {
                if (*s != '/')
                        continue;
                *s = '\0';
                if (mkdir(p, mode) < 0 && errno != EEXIST)
                        return -errno;
                *s = '/';
        }
        if (mkdir(p, mode) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

int read_one_line_file(const char *path, char **ret_line) {
        _cleanup_free_ char *data = NULL;
        int r;

        r = read_full_file(path, 4096, &data, NULL);
        if (r < 0)
                return r;
        data[strcspn(data, "\n")] = '\0';
        *ret_line = TAKE_PTR(data);
        return 0;
}

int self_rss_bytes(uint64_t *ret) {
        _cleanup_free_ char *line = NULL;
        unsigned long long size, resident;
        long page = sysconf(_SC_PAGESIZE);
        int r;

        r = read_one_line_file("/proc/self/statm", &line);
        if (r < 0)
                return r;
        if (sscanf(line, "%llu %llu", &size, &resident) != 2 || page <= 0)
                return -EBADMSG;
        *ret = (uint64_t) resident * (uint64_t) page;
        return 0;
}

uint64_t self_heap_bytes(void) {
        /* Small blocks, and those malloc() mmap()ed. */
#if HAVE_MALLINFO2
        struct mallinfo2 mi = mallinfo2();

        return (uint64_t) mi.uordblks + (uint64_t) mi.hblkhd;
#else
        struct mallinfo mi = mallinfo(); /* ints: wrap past 2 GiB */

        return (uint64_t) (unsigned) mi.uordblks + (uint64_t) (unsigned) mi.hblkhd;
#endif
}

int opendir_at(int dir_fd, const char *name, int flags, DIR **ret) {
        int fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | flags);
        DIR *d;

        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                int r = -errno;
                safe_close(fd);
                return r;
        }
        *ret = d;
        return 0;
}

static int rm_contents(int dir_fd, const char *name, unsigned depth_left) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int r;

        r = opendir_at(dir_fd, name, O_NOFOLLOW, &d);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                int q;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                q = rm_rf_at(dirfd(d), de->d_name, depth_left);
                if (q < 0 && r == 0)
                        r = q;
        }
        return r;
}

int rm_rf_at(int dir_fd, const char *name, unsigned depth_max) {
        struct stat st;
        int r;

        if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISDIR(st.st_mode))
                return unlinkat(dir_fd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
        if (depth_max == 0)
                return -ELOOP;
        r = rm_contents(dir_fd, name, depth_max - 1);
        if (unlinkat(dir_fd, name, AT_REMOVEDIR) < 0 && errno != ENOENT && r == 0)
                r = -errno;
        return r;
}

int self_vdso_range(size_t max_bytes, const void **ret_start, size_t *ret_size) {
        _cleanup_fclose_ FILE *f = NULL;
        unsigned long base = getauxval(AT_SYSINFO_EHDR);
        char line[512];

        if (base == 0)
                return -ENOENT;
        f = fopen("/proc/self/maps", "re");
        if (!f)
                return -errno;
        while (fgets(line, sizeof(line), f)) {
                unsigned long long s, e;
                if (!strstr(line, "[vdso]") || sscanf(line, "%llx-%llx", &s, &e) != 2 || s != base)
                        continue;
                if (e <= s || e - s > max_bytes)
                        return -ENOENT;
                *ret_start = (const void *) (uintptr_t) s;
                *ret_size = (size_t) (e - s);
                return 0;
        }
        return -ENOENT;
}

int process_memory_copy(const char *proc_root, uint32_t pid, uint64_t start, size_t size, void **ret) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ void *buf = NULL;
        char p[PATH_MAX];
        ssize_t n;

        if (size == 0 || start > INT64_MAX)
                return -EINVAL;
        snprintf(p, sizeof(p), "%s/%" PRIu32 "/mem", proc_root, pid);
        fd = open(p, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        buf = malloc(size);
        if (!buf)
                return -ENOMEM;
        n = pread(fd, buf, size, (off_t) start);
        if (n < 0)
                return -errno;
        if ((size_t) n != size)
                return -EIO;
        *ret = TAKE_PTR(buf);
        return 0;
}

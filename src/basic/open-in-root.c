/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "basic/cleanup.h"
#include "basic/macro.h"
#include "basic/open-in-root.h"

/* As the kernel's own walk: more links than this on one lookup is a loop. */
#define OPEN_IN_ROOT_LINKS_MAX 40U

/* A descriptor of the directory at path (the names of directories that were met on the way down,
 * "" for the top) opened again from the top: how ".." goes up, by the way the walk came and never
 * by a directory's own "..", which a rename may have moved out of the top meanwhile. A name that
 * is no longer a directory is a race lost: -EAGAIN, as openat2() says. */
static int reopen_from_top(int root_fd, const char *path) {
        _cleanup_close_ int cur = fcntl(root_fd, F_DUPFD_CLOEXEC, 3);
        char name[NAME_MAX + 1];

        if (cur < 0)
                return -errno;
        for (const char *p = path; *p == '/';) {
                size_t n = strcspn(p + 1, "/");
                int next;

                memcpy(name, p + 1, n);
                name[n] = '\0';
                p += 1 + n;
                next = openat(cur, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
                if (next < 0)
                        return errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? -EAGAIN : -errno;
                safe_close(cur);
                cur = next;
        }
        return TAKE_FD(cur);
}

int open_in_root_walk(int root_fd, const char *path) {
        _cleanup_close_ int cur = -EBADF;
        /* todo: what is left to look up; where: the directories met on the way to cur, "/a/b". */
        char todo[2 * PATH_MAX], where[PATH_MAX] = "", *p = todo;
        struct stat root_st;
        unsigned links = 0;
        size_t len = strlen(path), where_len = 0;

        if (len == 0)
                return -ENOENT; /* as openat2() */
        if (len >= PATH_MAX)
                return -ENAMETOOLONG;
        if (fstat(root_fd, &root_st) < 0)
                return -errno;
        if (!S_ISDIR(root_st.st_mode))
                return -ENOTDIR;
        cur = fcntl(root_fd, F_DUPFD_CLOEXEC, 3);
        if (cur < 0)
                return -errno;
        memcpy(todo, path, len + 1);

        for (;;) {
                _cleanup_close_ int next = -EBADF;
                char name[NAME_MAX + 1];
                struct stat st;
                size_t n;

                p += strspn(p, "/");
                if (*p == '\0')
                        return TAKE_FD(cur);
                n = strcspn(p, "/");
                if (n > NAME_MAX)
                        return -ENAMETOOLONG;
                memcpy(name, p, n);
                name[n] = '\0';
                p += n;

                if (streq(name, "."))
                        continue;
                if (streq(name, "..")) {
                        if (where_len == 0)
                                continue; /* the top's ".." is the top */
                        while (where[--where_len] != '/')
                                ;
                        where[where_len] = '\0';
                        next = reopen_from_top(root_fd, where);
                        if (next < 0)
                                return next;
                        safe_close(cur);
                        cur = TAKE_FD(next);
                        continue;
                }
                next = openat(cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0)
                        return -errno;
                if (fstat(next, &st) < 0)
                        return -errno;

                if (S_ISLNK(st.st_mode)) {
                        char target[PATH_MAX];
                        size_t rest = strlen(p);
                        ssize_t l;

                        if (++links > OPEN_IN_ROOT_LINKS_MAX)
                                return -ELOOP;
                        l = readlinkat(next, "", target, sizeof(target));
                        if (l < 0)
                                return -errno;
                        if (l == 0)
                                return -ENOENT;
                        if ((size_t) l >= sizeof(target) || (size_t) l + rest >= sizeof(todo))
                                return -ENAMETOOLONG;
                        /* The link's text takes its name's place, before what was left of the
                         * path (empty, or from its '/'); an absolute one starts at the top. */
                        memmove(todo + l, p, rest + 1);
                        memcpy(todo, target, (size_t) l);
                        p = todo;
                        if (target[0] == '/') {
                                safe_close(cur);
                                cur = fcntl(root_fd, F_DUPFD_CLOEXEC, 3);
                                if (cur < 0)
                                        return -errno;
                                where_len = 0;
                                where[0] = '\0';
                        }
                        continue; /* a relative one from the directory that holds it */
                }
                if (*p != '\0' && !S_ISDIR(st.st_mode))
                        return -ENOTDIR;
                if (S_ISDIR(st.st_mode)) {
                        if (where_len + 1 + n >= sizeof(where))
                                return -ENAMETOOLONG;
                        where[where_len++] = '/';
                        memcpy(where + where_len, name, n + 1);
                        where_len += n;
                }
                safe_close(cur);
                cur = TAKE_FD(next);
        }
}

int open_in_root(int root_fd, const char *path) {
        struct open_how how = {
                .flags = O_PATH | O_CLOEXEC,
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
        };
        int fd;

        for (int attempt = 0; attempt < 2; attempt++) {
                fd = (int) syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
                if (fd >= 0)
                        return fd;
                if (errno != EAGAIN) /* a rename raced with the lookup: once more */
                        break;
        }
        /* Kernels before 5.6 have no openat2(); seccomp filters and valgrind may refuse it. */
        if (errno == ENOSYS || errno == EPERM)
                return open_in_root_walk(root_fd, path);
        return -errno;
}

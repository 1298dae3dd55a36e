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

/* Directories deeper than this below the top, and names looked up in all (links add names), end a
 * walk: a planted tree may ask for any amount of work, and a debug file is never that deep. */
#define OPEN_IN_ROOT_DEPTH_MAX 256U
#define OPEN_IN_ROOT_STEPS_MAX 8192U

typedef struct DirId {
        dev_t dev;
        ino_t ino;
} DirId;

/* A descriptor of dir_fd's "..", if that is the directory want (the one the walk came down from);
 * -EAGAIN, as openat2() says, if a rename moved dir_fd (or one above it) meanwhile. */
static int open_parent(int dir_fd, const DirId *want) {
        _cleanup_close_ int fd = openat(dir_fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
        struct stat st;

        if (fd < 0 || fstat(fd, &st) < 0)
                return -errno;
        if (st.st_dev != want->dev || st.st_ino != want->ino)
                return -EAGAIN;
        return TAKE_FD(fd);
}

/* Whether directory dir_fd still lies where the walk came down: its depth ancestors are up[depth
 * - 1] ... up[0], the top (a directory moved out of the top meanwhile, or one of its ancestors,
 * has others): 0, or -EAGAIN. */
static int check_way_up(int dir_fd, const DirId *up, unsigned depth) {
        _cleanup_close_ int fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 3);

        if (fd < 0)
                return -errno;
        for (unsigned k = depth; k > 0; k--) {
                int parent = open_parent(fd, &up[k - 1]);

                if (parent < 0)
                        return parent;
                safe_close(fd);
                fd = parent;
        }
        return 0;
}

int open_in_root_walk(int root_fd, const char *path) {
        _cleanup_close_ int cur = -EBADF;
        /* todo: what is left to look up. up[0..depth]: the directories the walk stands in, the
         * top first, cur last: ".." must lead to up[depth - 1] (the way the walk came), or a
         * rename moved cur meanwhile, maybe out of the top, and the walk fails with -EAGAIN as
         * openat2() does. */
        char todo[2 * PATH_MAX], *p = todo;
        DirId up[OPEN_IN_ROOT_DEPTH_MAX + 1];
        struct stat st;
        unsigned links = 0, steps = 0, depth = 0;
        size_t len = strlen(path);

        if (len == 0)
                return -ENOENT; /* as openat2() */
        if (len >= PATH_MAX)
                return -ENAMETOOLONG;
        if (fstat(root_fd, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        up[0] = (DirId) { st.st_dev, st.st_ino };
        cur = fcntl(root_fd, F_DUPFD_CLOEXEC, 3);
        if (cur < 0)
                return -errno;
        memcpy(todo, path, len + 1);

        for (;;) {
                _cleanup_close_ int next = -EBADF;
                char name[NAME_MAX + 1];
                size_t n;

                p += strspn(p, "/");
                if (*p == '\0') {
                        int r = check_way_up(cur, up, depth);
                        return r < 0 ? r : TAKE_FD(cur);
                }
                if (++steps > OPEN_IN_ROOT_STEPS_MAX)
                        return -ELOOP;
                n = strcspn(p, "/");
                if (n > NAME_MAX)
                        return -ENAMETOOLONG;
                memcpy(name, p, n);
                name[n] = '\0';
                p += n;

                if (streq(name, "."))
                        continue;
                if (streq(name, "..")) {
                        if (depth == 0)
                                continue; /* the top's ".." is the top */
                        next = open_parent(cur, &up[depth - 1]);
                        if (next < 0)
                                return next;
                        depth--;
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
                                depth = 0;
                        }
                        continue; /* a relative one from the directory that holds it */
                }
                if (!S_ISDIR(st.st_mode)) {
                        int r;

                        if (*p != '\0')
                                return -ENOTDIR;
                        r = check_way_up(cur, up, depth); /* of the directory that holds it */
                        return r < 0 ? r : TAKE_FD(next);
                }
                if (depth >= OPEN_IN_ROOT_DEPTH_MAX)
                        return -ENAMETOOLONG;
                up[++depth] = (DirId) { st.st_dev, st.st_ino };
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
        /* Kernels before 5.6 have no openat2(); seccomp filters and valgrind may refuse it. Its
         * -EAGAIN comes of a rename anywhere on the host while a ".." is looked up: the walk fails
         * only where its own directories moved. */
        if (errno != ENOSYS && errno != EPERM && errno != EAGAIN)
                return -errno;
        fd = open_in_root_walk(root_fd, path);
        return fd == -EAGAIN ? open_in_root_walk(root_fd, path) : fd;
}

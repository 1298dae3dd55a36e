/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Cgroup ids and processes to cgroup paths; see sampler-cgroup.h. A cgroup's id as perf reports
 * it (cgroup_id(), the kernfs node id) is the inode number of its directory on 64-bit kernels, so
 * fstatat() on the hierarchy's mount both builds the map and checks what a record claims.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/alloc-util.h"
#include "basic/cleanup.h"
#include "basic/fileio.h"
#include "basic/hashmap.h"
#include "basic/macro.h"
#include "basic/string-util.h"
#include "sampler/sampler-cgroup.h"

#define CGROUP_PROC_FILE_BYTES_MAX (64U * 1024U)
#define MOUNTINFO_BYTES_MAX (4U * 1024U * 1024U)
/* A cgroup.procs read to find the reader in (a cgroup of some 100,000 processes). */
#define NS_PROCS_BYTES_MAX (1024U * 1024U)

struct CgroupMap {
        int mount_fd;
        bool v2;
        bool scanned; /* the perf source: the hierarchy was walked (cgroup_map_scan()) */
        uint64_t renewed_usec; /* CLOCK_MONOTONIC of the last cgroup_map_renew() that did something */
        bool only; /* no other hierarchy: every PERF_RECORD_CGROUP is of ours */
        const char *proc_root; /* "/proc", or a test's */
        char *mount;           /* the hierarchy's mount point */
        /* The root of the reader's cgroup namespace in the hierarchy and in name=systemd's,
         * which the paths /proc gives are relative to: "/" outside a namespace of its own (or
         * where the mount is the namespace's own); NULL: not found, nothing from /proc told. */
        char *ns_root, *ns_root_systemd;
        const char *ns_problem;
        Hashmap *paths; /* path -> index + 1 */
        char **list;
        size_t n, allocated;
        Hashmap *ids;   /* id -> index + 1; 0: asked and not found */
        Hashmap *pids;  /* pid -> index + 1; 0: read again */
        CgroupMapStats stats;
};

/* Forgets every path, id and process (the list's storage stays). */
static void map_tables_free(CgroupMap *m) {
        m->paths = hashmap_free(m->paths);
        m->ids = hashmap_free(m->ids);
        m->pids = hashmap_free(m->pids);
        for (size_t i = 0; i < m->n; i++)
                free(m->list[i]);
        m->n = 0;
        m->stats.paths = 0;
}

static int map_tables_new(CgroupMap *m) {
        m->paths = hashmap_new();
        m->ids = hashmap_new();
        m->pids = hashmap_new();
        return m->paths && m->ids && m->pids ? 0 : -ENOMEM;
}

CgroupMap *cgroup_map_free(CgroupMap *m) {
        if (!m)
                return NULL;
        safe_close(m->mount_fd);
        map_tables_free(m);
        free(m->mount);
        free(m->ns_root);
        free(m->ns_root_systemd);
        free(m->list);
        return mfree(m);
}

int cgroup_map_new(const char *mount, CgroupHierarchyFlags flags, CgroupMap **ret) {
        _cleanup_(cgroup_map_freep) CgroupMap *m = new0(CgroupMap, 1);

        if (!m)
                return -ENOMEM;
        m->mount_fd = -EBADF;
        m->v2 = flags & CGROUP_HIERARCHY_V2;
        m->only = m->v2 && (flags & CGROUP_HIERARCHY_ONLY);
        m->proc_root = "/proc";
        if (map_tables_new(m) < 0)
                return -ENOMEM;
        m->ns_root = strdup("/");
        m->ns_root_systemd = strdup("/");
        if (!m->ns_root || !m->ns_root_systemd)
                return -ENOMEM;
        if (mount) {
                m->mount = strdup(mount);
                if (!m->mount)
                        return -ENOMEM;
                m->mount_fd = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (m->mount_fd < 0)
                        return -errno;
        }
        *ret = TAKE_PTR(m);
        return 0;
}

/* Undoes mountinfo's octal escapes (\040 for a blank) in place. */
static void unescape_octal(char *s) {
        char *w = s;

        for (char *p = s; *p; p++) {
                if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0' &&
                    p[3] <= '7') {
                        *w++ = (char) ((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
                        p += 3;
                } else
                        *w++ = *p;
        }
        *w = '\0';
}

static bool has_option(const char *opts, const char *name) {
        size_t l = strlen(name);

        for (const char *p = opts; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
                if (strncmp(p, name, l) == 0 && (p[l] == ',' || p[l] == '\0' || p[l] == '\n'))
                        return true;
        return false;
}

/*
 * A mount's root as mountinfo gives it, relative to the reader's cgroup namespace: "/" for the
 * hierarchy's root, or "/.." repeated for a mount made outside a cgroup namespace the reader has
 * entered since (the root above the namespace's: the whole hierarchy all the same). Anything else
 * is a sub-cgroup bind-mounted, no root to walk.
 */
static bool root_is_whole(const char *root) {
        if (streq(root, "/"))
                return true;
        for (const char *p = root; *p; p += 3)
                if (!startswith(p, "/.."))
                        return false;
        return *root == '/';
}

/* The root cgroup of a hierarchy has no cgroup.events (v2) and is the only one with
 * release_agent (v1): a mount whose top is otherwise is a cgroup namespace's own. */
static bool mount_is_part(const char *mount, bool v2) {
        char p[PATH_MAX];

        if (access(mount, F_OK) < 0 ||
            (size_t) snprintf(p, sizeof p, "%s/%s", mount, v2 ? "cgroup.events" : "release_agent") >= sizeof p)
                return false; /* nothing to tell by */
        return v2 ? access(p, F_OK) == 0 : access(p, F_OK) < 0 && errno == ENOENT;
}

/* One line of mountinfo, split in place: the mount's root, where it is mounted (escaped still),
 * the file system type and the super block's options. */
typedef struct MountLine {
        char *root, *where, *fstype, *super;
} MountLine;

static bool mount_line_parse(char *line, MountLine *ret) {
        char *f[6] = {}, *dash, *s = NULL;
        size_t n = 0;

        dash = strstr(line, " - ");
        if (!dash)
                return false;
        *dash = '\0';
        for (char *t = strtok_r(line, " ", &s); t && n < ELEMENTSOF(f); t = strtok_r(NULL, " ", &s))
                f[n++] = t;
        s = NULL;
        *ret = (MountLine) { .root = f[3], .where = f[4] };
        ret->fstype = strtok_r(dash + 3, " ", &s);
        (void) strtok_r(NULL, " ", &s); /* source */
        ret->super = strtok_r(NULL, " ", &s);
        return ret->fstype;
}

int cgroup_hierarchy_find(const char *mountinfo, char **ret_mount, CgroupHierarchyFlags *ret_flags) {
        _cleanup_free_ char *data = NULL, *v1 = NULL, *v2 = NULL;
        char *line, *save = NULL;
        bool any_v1 = false, part = false;
        int r;

        r = read_full_file(mountinfo, MOUNTINFO_BYTES_MAX, &data, NULL);
        if (r < 0)
                return r;
        for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                MountLine ml;

                if (!mount_line_parse(line, &ml))
                        continue;
                if (streq(ml.fstype, "cgroup"))
                        any_v1 = true;
                if (!ml.where)
                        continue;
                if (!root_is_whole(ml.root)) {
                        part = part || streq(ml.fstype, "cgroup2") ||
                               (streq(ml.fstype, "cgroup") && ml.super && has_option(ml.super, "perf_event"));
                        continue;
                }
                if (streq(ml.fstype, "cgroup2") && !v2) {
                        v2 = strdup(ml.where);
                        if (!v2)
                                return -ENOMEM;
                } else if (streq(ml.fstype, "cgroup") && ml.super && has_option(ml.super, "perf_event") && !v1) {
                        v1 = strdup(ml.where);
                        if (!v1)
                                return -ENOMEM;
                }
        }
        if (!v1 && !v2) {
                *ret_flags = part ? CGROUP_HIERARCHY_PART : 0;
                return -ENOENT;
        }
        bool is_v2 = !v1;
        *ret_mount = v1 ? TAKE_PTR(v1) : TAKE_PTR(v2);
        unescape_octal(*ret_mount);
        *ret_flags = (is_v2 ? CGROUP_HIERARCHY_V2 : 0) | (any_v1 ? 0 : CGROUP_HIERARCHY_ONLY) |
                     (mount_is_part(*ret_mount, is_v2) ? CGROUP_HIERARCHY_PART : 0);
        return 0;
}

#define DELETED_SUFFIX " (deleted)"

int cgroup_proc_parse(const char *text, CgroupProcLine which, char **ret_path) {
        /* The lines that can answer: [CGROUP_LINE_V2] "0::", [CGROUP_LINE_PERF] perf_event's,
         * [CGROUP_LINE_SYSTEMD] name=systemd's. */
        const char *found[_CGROUP_LINE_MAX] = {};
        size_t found_len[_CGROUP_LINE_MAX] = {};
        const char *best;
        size_t best_len;

        for (const char *p = text; p && *p;) {
                const char *eol = strchrnul(p, '\n'), *c1 = memchr(p, ':', (size_t) (eol - p)), *c2;

                c2 = c1 ? memchr(c1 + 1, ':', (size_t) (eol - c1 - 1)) : NULL;
                if (c2 && c2[1] == '/') {
                        const char *ctl = c1 + 1;
                        size_t ctl_len = (size_t) (c2 - ctl);
                        int line = -1;

                        if (ctl_len == 0 && c1 - p == 1 && p[0] == '0')
                                line = CGROUP_LINE_V2;
                        else if (ctl_len == strlen("name=systemd") && memcmp(ctl, "name=systemd", ctl_len) == 0)
                                line = CGROUP_LINE_SYSTEMD;
                        else
                                for (const char *q = ctl; q < c2;) {
                                        const char *e = memchr(q, ',', (size_t) (c2 - q)) ?: c2;
                                        if ((size_t) (e - q) == strlen("perf_event") &&
                                            memcmp(q, "perf_event", (size_t) (e - q)) == 0)
                                                line = CGROUP_LINE_PERF;
                                        q = e + 1;
                                }
                        if (line >= 0) {
                                found[line] = c2 + 1;
                                found_len[line] = (size_t) (eol - found[line]);
                                /* proc_cgroup_show() (kernel/cgroup/cgroup.c) marks a v2 cgroup
                                 * removed while a task of it lives on (an exiting one, not yet
                                 * reaped) " (deleted)": the path still names where it ran */
                                if (line == CGROUP_LINE_V2 && found_len[line] > strlen(DELETED_SUFFIX) &&
                                    memcmp(eol - strlen(DELETED_SUFFIX), DELETED_SUFFIX, strlen(DELETED_SUFFIX)) == 0)
                                        found_len[line] -= strlen(DELETED_SUFFIX);
                        }
                }
                p = *eol ? eol + 1 : eol;
        }
        best = found[which];
        best_len = found_len[which];
        if (!best && which == CGROUP_LINE_PERF) { /* no perf_event hierarchy: systemd's */
                best = found[CGROUP_LINE_SYSTEMD];
                best_len = found_len[CGROUP_LINE_SYSTEMD];
        }
        if (!best || best_len == 0 || best_len >= CGROUP_PATH_BYTES_MAX)
                return -ENOENT;
        *ret_path = strndup(best, best_len);
        return *ret_path ? 0 : -ENOMEM;
}

/* The number of leading "/.." components of path, and where the rest starts. */
static unsigned parent_steps(const char *path, const char **ret_rest) {
        unsigned n = 0;

        while (startswith(path, "/..") && (path[3] == '/' || path[3] == '\0')) {
                path += 3;
                n++;
        }
        *ret_rest = path;
        return n;
}

int cgroup_path_resolve(const char *ns_root, const char *path, char **ret) {
        const char *rest;
        size_t keep;
        unsigned up;

        if (!ns_root || path[0] != '/')
                return -ENOENT;
        up = parent_steps(path, &rest);
        if (streq(rest, "/"))
                rest = ""; /* the namespace's root itself */
        /* ns_root less its last up components: what rest ("" or "/a/b") goes below */
        keep = strlen(ns_root);
        while (keep > 0 && ns_root[keep - 1] == '/')
                keep--;
        for (; up > 0; up--) {
                if (keep == 0)
                        return -ENOENT; /* above the root: outside what is mounted here */
                while (keep > 0 && ns_root[keep - 1] != '/')
                        keep--;
                while (keep > 0 && ns_root[keep - 1] == '/')
                        keep--;
        }
        if (keep + strlen(rest) + 1 >= CGROUP_PATH_BYTES_MAX)
                return -ENOENT;
        if (keep == 0 && *rest == '\0')
                *ret = strdup("/");
        else if (asprintf(ret, "%.*s%s", (int) keep, ns_root, rest) < 0)
                *ret = NULL;
        return *ret ? 0 : -ENOMEM;
}

/* Whether the file procs below dir_fd (a cgroup.procs) lists pid. */
static bool procs_list(int dir_fd, const char *procs, uint32_t pid) {
        _cleanup_free_ char *data = NULL;
        _cleanup_close_ int fd = openat(dir_fd, procs, O_RDONLY | O_CLOEXEC);
        char want[16];
        size_t l;

        if (fd < 0 || read_full_fd(fd, NS_PROCS_BYTES_MAX, &data, NULL) < 0)
                return false;
        l = (size_t) snprintf(want, sizeof want, "%" PRIu32, pid);
        for (const char *p = data; *p; p = strchrnul(p, '\n'), p = *p ? p + 1 : p)
                if (strncmp(p, want, l) == 0 && (p[l] == '\n' || p[l] == '\0'))
                        return true;
        return false;
}

/*
 * Calls visit for each subdirectory of dir_fd (whose path is in path, len long): opened, its name
 * appended to path. path is put back after each, unless visit returns > 0, which ends the walk
 * with that (leaving path as it was visited). -ENOENT from visit (a cgroup removed meanwhile) goes
 * on; any other error ends the walk with it. 0 when every subdirectory was visited.
 */
typedef int (*SubdirVisit)(int fd, char *path, size_t len, void *userdata);

static int subdirs_visit(int dir_fd, char *path, size_t len, SubdirVisit visit, void *userdata) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int r;

        r = opendir_at(dir_fd, ".", O_NOFOLLOW, &d);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                size_t l = strlen(de->d_name);
                int fd;

                if (de->d_type != DT_DIR || streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (len + 1 + l >= CGROUP_PATH_BYTES_MAX)
                        continue;
                fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0)
                        continue; /* removed meanwhile */
                path[len] = '/';
                memcpy(path + len + 1, de->d_name, l + 1);
                r = visit(fd, path, len + 1 + l, userdata);
                safe_close(fd);
                if (r > 0)
                        return r;
                path[len] = '\0';
                if (r < 0 && r != -ENOENT)
                        return r;
        }
        return 0;
}

typedef struct NsRootSearch {
        unsigned depth; /* levels left below the directory visited */
        const char *procs;
        uint32_t pid;
} NsRootSearch;

/* Depth-first over the directories depth levels below dir_fd (its path in path, len long) for
 * the one whose procs lists pid; 1: found, its path left in path; else 0. */
static int ns_root_search(int dir_fd, char *path, size_t len, void *userdata) {
        NsRootSearch *q = userdata, below;

        if (q->depth == 0)
                return procs_list(dir_fd, q->procs, q->pid);
        below = (NsRootSearch) { .depth = q->depth - 1, .procs = q->procs, .pid = q->pid };
        return subdirs_visit(dir_fd, path, len, ns_root_search, &below) > 0; /* removed meanwhile: not here */
}

int cgroup_ns_root_find(int dir_fd, unsigned depth, const char *self, uint32_t pid, char **ret) {
        _cleanup_free_ char *path = NULL, *procs = NULL;
        const char *rest;
        bool found;
        int fd;

        /* Below the root the reader is in a cgroup whose path ends in self; a self that climbs
         * out names no root. */
        if (self[0] != '/' || parent_steps(self, &rest) > 0 || depth > CGROUP_MAP_DEPTH_MAX)
                return -ENOENT;
        while (*self == '/')
                self++;
        if (asprintf(&procs, "%s%scgroup.procs", self, *self ? "/" : "") < 0)
                return -ENOMEM;
        path = malloc(CGROUP_PATH_BYTES_MAX);
        if (!path)
                return -ENOMEM;
        path[0] = '\0';
        fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        found = ns_root_search(fd, path, 0, &(NsRootSearch) { .depth = depth, .procs = procs, .pid = pid }) > 0;
        safe_close(fd);
        if (!found)
                return -ENOENT;
        *ret = strdup(path[0] ? path : "/");
        return *ret ? 0 : -ENOMEM;
}

bool cgroup_ns_is_initial(const char *ns_file) {
        struct stat st;

        /* PROC_CGROUP_INIT_INO (include/linux/proc_ns.h, Linux 4.6 and later): the initial
         * namespace's inode number, fixed; no file: a kernel before cgroup namespaces. */
        return stat(ns_file, &st) < 0 || st.st_ino == UINT32_C(0xEFFFFFFB);
}

/* Interns path; returns its index + 1, or 0 when the table is full. -ENOMEM. */
static int intern(CgroupMap *m, const char *path, uint64_t *ret) {
        size_t l = strnlen(path, CGROUP_PATH_BYTES_MAX);
        uint64_t v;

        if (hashmap_get(m->paths, path, l, &v)) {
                *ret = v;
                return 0;
        }
        if (m->n >= CGROUP_MAP_PATHS_MAX) {
                *ret = 0;
                return 0;
        }
        if (!GREEDY_REALLOC(m->list, m->allocated, m->n + 1))
                return -ENOMEM;
        m->list[m->n] = strndup(path, l);
        if (!m->list[m->n])
                return -ENOMEM;
        if (hashmap_put(m->paths, path, l, m->n + 1) < 0) {
                free(m->list[m->n]);
                return -ENOMEM;
        }
        m->n++;
        m->stats.paths = m->n;
        *ret = m->n;
        return 0;
}

static int put_id(CgroupMap *m, uint64_t id, const char *path) {
        uint64_t v;
        int r;

        r = intern(m, path, &v);
        if (r < 0)
                return r;
        if (v == 0)
                return 0;
        return hashmap_put(m->ids, &id, sizeof id, v);
}

/* The inode of path (relative to the hierarchy root, "/" for the root) in our hierarchy. */
static int id_of(CgroupMap *m, const char *path, uint64_t *ret) {
        struct stat st;

        if (m->mount_fd < 0)
                return -ENOENT;
        while (*path == '/')
                path++;
        if (fstatat(m->mount_fd, *path ? path : ".", &st, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        *ret = (uint64_t) st.st_ino;
        return 0;
}

typedef struct Walk {
        CgroupMap *m;
        unsigned depth; /* of the directory visited */
} Walk;

static int walk(int dir_fd, char *path, size_t len, void *userdata) {
        const Walk *w = userdata;
        struct stat st;
        int r;

        if (fstat(dir_fd, &st) < 0)
                return -errno;
        r = put_id(w->m, st.st_ino, len == 0 ? "/" : path);
        if (r < 0)
                return r;
        if (w->depth >= CGROUP_MAP_DEPTH_MAX || w->m->n >= CGROUP_MAP_PATHS_MAX)
                return 0;
        return subdirs_visit(dir_fd, path, len, walk, &(Walk) { .m = w->m, .depth = w->depth + 1 });
}

int cgroup_map_scan(CgroupMap *m) {
        _cleanup_free_ char *path = NULL;
        int fd, r;

        m->scanned = true;
        if (m->mount_fd < 0)
                return 0;
        path = malloc(CGROUP_PATH_BYTES_MAX);
        if (!path)
                return -ENOMEM;
        path[0] = '\0';
        fd = openat(m->mount_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = walk(fd, path, 0, &(Walk) { .m = m, .depth = 0 });
        safe_close(fd);
        return r;
}

int cgroup_map_record(CgroupMap *m, uint64_t id, const char *path) {
        uint64_t real;
        int r;

        m->stats.records++;
        r = id_of(m, path, &real);
        if (m->only && (r == -ENOENT || (r >= 0 && real != id))) {
                uint64_t v;
                /* Gone before it was read, or gone and made again (a unit restarting): every
                 * record is of this hierarchy (unless one was mounted since, or in another mount
                 * namespace: then an id we know is not taken from it, and a record of ours that
                 * checks out puts it right), and the path was this id's when the kernel wrote it. */
                if (hashmap_get(m->ids, &id, sizeof id, &v) && v != 0) {
                        m->stats.records_foreign++;
                        return 0;
                }
                m->stats.records_gone++;
                r = put_id(m, id, path);
                return r < 0 ? r : 1;
        }
        if (r < 0 || real != id) {
                m->stats.records_foreign++;
                return 0;
        }
        r = put_id(m, id, path);
        return r < 0 ? r : 1;
}

static const char *path_of(const CgroupMap *m, uint64_t v) {
        return v > 0 && v <= m->n ? m->list[v - 1] : NULL;
}

/*
 * pid's line of /proc/PID/cgroup, made the hierarchy's: with for_names on a v1 host its
 * name=systemd one, where systemd keeps its units (it makes no cgroups in the perf_event
 * hierarchy), else the hierarchy's own.
 */
static int read_proc_cgroup(CgroupMap *m, const char *proc_root, uint32_t pid, bool for_names, char **ret) {
        _cleanup_free_ char *data = NULL, *rel = NULL;
        char fn[PATH_MAX];
        int r;

        m->stats.lookups_proc++;
        snprintf(fn, sizeof fn, "%s/%" PRIu32 "/cgroup", proc_root, pid);
        r = read_full_file(fn, CGROUP_PROC_FILE_BYTES_MAX, &data, NULL);
        if (r < 0)
                return r;
        if (for_names && !m->v2 && cgroup_proc_parse(data, CGROUP_LINE_SYSTEMD, &rel) >= 0) {
                _cleanup_free_ char *path = NULL;

                /* systemd's root says nothing (nor a path that cannot be told): the
                 * hierarchy's own line names it */
                if (cgroup_path_resolve(m->ns_root_systemd, rel, &path) >= 0 && !streq(path, "/")) {
                        *ret = TAKE_PTR(path);
                        return 0;
                }
                rel = mfree(rel);
        }
        r = cgroup_proc_parse(data, m->v2 ? CGROUP_LINE_V2 : CGROUP_LINE_PERF, &rel);
        if (r < 0)
                return r;
        return cgroup_path_resolve(m->ns_root, rel, ret);
}

/* The proc source's path of pid, read once per process; NULL when it cannot be read. */
static const char *pid_path(CgroupMap *m, const char *proc_root, uint32_t pid) {
        _cleanup_free_ char *path = NULL;
        uint64_t v = 0;

        if (pid == 0)
                return "/";
        if (hashmap_get(m->pids, &pid, sizeof pid, &v) && v != 0)
                return v == UINT64_MAX ? NULL : path_of(m, v);
        if (read_proc_cgroup(m, proc_root, pid, /* for_names= */ true, &path) >= 0)
                (void) intern(m, path, &v);
        if (v == 0)
                v = UINT64_MAX; /* gone or unreadable: not asked again until it execs */
        (void) hashmap_put(m->pids, &pid, sizeof pid, v);
        return v == UINT64_MAX ? NULL : path_of(m, v);
}

/* The path of a perf cgroup id, asking pid once when the id is new; NULL if it cannot be told. */
static const char *id_path(CgroupMap *m, uint64_t id, uint32_t pid) {
        _cleanup_free_ char *path = NULL;
        uint64_t v, real;

        if (hashmap_get(m->ids, &id, sizeof id, &v))
                return path_of(m, v);
        /* Once per id: remember a failure too, so an unknown id costs no more reads. */
        v = 0;
        if (pid != 0 && read_proc_cgroup(m, m->proc_root, pid, /* for_names= */ false, &path) >= 0 &&
            id_of(m, path, &real) >= 0 && real == id)
                (void) intern(m, path, &v);
        (void) hashmap_put(m->ids, &id, sizeof id, v);
        return path_of(m, v);
}

const char *cgroup_map_by_id(CgroupMap *m, uint64_t id, uint32_t pid) {
        const char *p = id_path(m, id, pid);

        /*
         * A v1 perf_event hierarchy holds the cgroups container runtimes make (runc joins every
         * hierarchy) and those made for it by hand (cgexec), but none of systemd's: every service
         * is at its root. There the process's path in systemd's hierarchy names its unit (and
         * its container and pod too); the id's path stands in when the process is gone before
         * it is read.
         */
        if (!m->v2 && pid != 0 && (!p || streq(p, "/"))) {
                const char *q = pid_path(m, m->proc_root, pid);
                if (q)
                        return q;
        }
        if (!p)
                m->stats.unknown++;
        return p;
}

const char *cgroup_map_by_pid(CgroupMap *m, const char *proc_root, uint32_t pid) {
        const char *p = pid_path(m, proc_root, pid);

        if (!p)
                m->stats.unknown++;
        return p;
}

void cgroup_map_set_proc_root(CgroupMap *m, const char *proc_root) {
        m->proc_root = proc_root;
}

/*
 * The root of the reader's namespace in the hierarchy mounted whole at where (root: the mount's
 * root in mountinfo, "/" or "/.." repeated; self: the reader's own line): "/" where the mount's
 * root is the namespace's (the hierarchy's root too, or the namespace's own mount: a part, which
 * "/.." climbs out of), else searched as many levels below the mount's top as root has "/..".
 * NULL: not found.
 */
static int ns_root_of(const char *where, const char *root, const char *self, uint32_t pid, char **ret) {
        _cleanup_close_ int fd = -EBADF;
        const char *rest;
        unsigned depth = parent_steps(root, &rest);
        int r;

        *ret = NULL;
        if (depth == 0) {
                *ret = strdup("/");
                return *ret ? 0 : -ENOMEM;
        }
        fd = open(where, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        r = cgroup_ns_root_find(fd, depth, self, pid, ret);
        return r == -ENOMEM ? r : 0;
}

int cgroup_map_set_namespace(CgroupMap *m, const char *mountinfo, const char *self_cgroup_file, uint32_t pid) {
        _cleanup_free_ char *data = NULL, *self_cgroup = NULL, *self = NULL, *self_systemd = NULL;
        char *line, *save = NULL;
        bool found = false, found_systemd = false;
        int r;

        m->ns_root = mfree(m->ns_root);
        m->ns_root_systemd = mfree(m->ns_root_systemd);
        m->ns_problem = NULL;
        if (m->mount && read_full_file(self_cgroup_file, CGROUP_PROC_FILE_BYTES_MAX, &self_cgroup, NULL) >= 0 &&
            read_full_file(mountinfo, MOUNTINFO_BYTES_MAX, &data, NULL) >= 0 &&
            cgroup_proc_parse(self_cgroup, m->v2 ? CGROUP_LINE_V2 : CGROUP_LINE_PERF, &self) >= 0)
                for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                        MountLine ml;

                        if (!mount_line_parse(line, &ml) || !ml.where || !root_is_whole(ml.root))
                                continue;
                        unescape_octal(ml.where);
                        if (!found && streq(ml.where, m->mount) &&
                            streq(ml.fstype, m->v2 ? "cgroup2" : "cgroup")) {
                                /* the mount cgroup_hierarchy_find() took: the first whole one there */
                                found = true;
                                r = ns_root_of(ml.where, ml.root, self, pid, &m->ns_root);
                                if (r < 0)
                                        return r;
                        } else if (!found_systemd && !m->v2 && streq(ml.fstype, "cgroup") && ml.super &&
                                   has_option(ml.super, "name=systemd") &&
                                   cgroup_proc_parse(self_cgroup, CGROUP_LINE_SYSTEMD, &self_systemd) >= 0) {
                                found_systemd = true;
                                r = ns_root_of(ml.where, ml.root, self_systemd, pid, &m->ns_root_systemd);
                                if (r < 0)
                                        return r;
                        }
                }
        if (!m->ns_root)
                m->ns_problem = "tprofd runs in a cgroup namespace of its own and its root was not found in the "
                                "cgroup hierarchy mounted here: the cgroups read from /proc/PID/cgroup cannot be "
                                "told; run tprofd in the host's cgroup namespace";
        else if (!m->v2 && !m->ns_root_systemd)
                m->ns_problem = "tprofd runs in a cgroup namespace of its own and the name=systemd hierarchy is "
                                "not mounted here whole: samples at the perf_event hierarchy's root name no unit, "
                                "container or pod; run tprofd in the host's cgroup namespace";
        return 0;
}

const char *cgroup_map_namespace_problem(const CgroupMap *m) {
        return m->ns_problem;
}

void cgroup_map_forget_pid(CgroupMap *m, uint32_t pid) {
        uint64_t v;

        if (hashmap_get(m->pids, &pid, sizeof pid, &v) && v != 0)
                (void) hashmap_put(m->pids, &pid, sizeof pid, 0);
}

int cgroup_map_renew(CgroupMap *m, uint64_t now_usec) {
        bool full = m->n >= CGROUP_MAP_PATHS_MAX || hashmap_size(m->ids) >= CGROUP_MAP_KEYS_MAX ||
                    hashmap_size(m->pids) >= CGROUP_MAP_KEYS_MAX;

        if (!full || (m->renewed_usec > 0 && now_usec - m->renewed_usec < CGROUP_MAP_RENEW_USEC))
                return 0;
        m->renewed_usec = now_usec;
        m->stats.renewals++;
        map_tables_free(m);
        if (map_tables_new(m) < 0)
                return -ENOMEM;
        if (m->scanned && cgroup_map_scan(m) < 0)
                return -EIO;
        return 1;
}

void cgroup_map_get_stats(const CgroupMap *m, CgroupMapStats *ret) {
        *ret = m->stats;
}

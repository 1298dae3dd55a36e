/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which cgroup a sample ran in, as a path relative to the cgroup hierarchy perf reports ids of
 * ("/system.slice/kubelet.service"). Two sources:
 *
 *  - perf: with PERF_SAMPLE_CGROUP each sample carries the id of its task's cgroup in the
 *    hierarchy the perf_event controller is attached to (cgroup v2, or a v1 hierarchy mounted with
 *    perf_event), which is the inode number of that cgroup's directory. The map from id to path
 *    is built by walking the hierarchy once at start and kept current from PERF_RECORD_CGROUP
 *    records (attr.cgroup). The kernel writes those records for cgroups created in every
 *    hierarchy, and ids are only unique within one, so a record is believed only when the path
 *    exists in ours with that inode; where no other hierarchy is mounted, a record of a cgroup
 *    removed (or made again) before it was read is believed too (unless its id is one we know).
 *    An id still unknown when a sample names it (a cgroup made and left before its record was
 *    read) is looked up once in /proc/PID/cgroup, checked the same way.
 *  - proc, where the kernel has no PERF_SAMPLE_CGROUP (before 5.7): the process's line of
 *    /proc/PID/cgroup, read when the process is first sampled and again after it execs. A process
 *    that moves to another cgroup without exec keeps the cgroup it was first seen in.
 *
 * On a host whose perf_event controller is on a v1 hierarchy (systemd's legacy and hybrid modes
 * mount it so) the perf ids name cgroups systemd never makes: every service is "/" there. The
 * path of a sample at that root is then its process's name=systemd path, read from /proc like
 * the proc source (once per process: again after exec, and for a new process that got a pid
 * used before), which names units, and containers and pods too; the root's path stands for a
 * process gone before it was read. A perf_event cgroup of its own (a container's, cgexec's)
 * names the sample as before.
 *
 * Run in a cgroup namespace of its own, the reader sees /proc/PID/cgroup relative to that
 * namespace's root: "/" is the root, "/../x" a cgroup beside it (kernfs_path_from_node() in
 * fs/kernfs/dir.c, Linux 6.1, called with the reader's namespace by proc_cgroup_show() in
 * kernel/cgroup/cgroup.c). PERF_RECORD_CGROUP paths and the walk are the hierarchy's own, so
 * where the hierarchy is mounted whole the namespace root's path in it is found once
 * (cgroup_map_set_namespace()) and every path read from /proc is made the hierarchy's from it.
 *
 * Paths are interned once and live until cgroup_map_free(); everything is bounded
 * (CGROUP_MAP_PATHS_MAX paths, CGROUP_MAP_DEPTH_MAX levels walked).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#define CGROUP_MAP_PATHS_MAX 65536U
/* Ids and processes remembered (the unknown ones too) before the map starts over. */
#define CGROUP_MAP_KEYS_MAX (4U * CGROUP_MAP_PATHS_MAX)
/* At most this often the map starts over when full (cgroup_map_renew()). */
#define CGROUP_MAP_RENEW_USEC (UINT64_C(600) * UINT64_C(1000000))
#define CGROUP_MAP_DEPTH_MAX 32U
#define CGROUP_PATH_BYTES_MAX 4096U

typedef struct CgroupMap CgroupMap;

typedef struct CgroupMapStats {
        uint64_t paths, records, records_foreign, records_gone, lookups_proc, unknown, renewals;
} CgroupMapStats;

typedef enum CgroupHierarchyFlags {
        CGROUP_HIERARCHY_V2 = 1 << 0,   /* the cgroup2 hierarchy, not a v1 one with perf_event */
        CGROUP_HIERARCHY_ONLY = 1 << 1, /* no v1 hierarchy is mounted at all (a pure v2 host) */
        CGROUP_HIERARCHY_PART = 1 << 2, /* only part of the hierarchy is mounted here: a cgroup
                                         * namespace's own mount (returned), or sub-cgroups only
                                         * (with -ENOENT) */
} CgroupHierarchyFlags;

/*
 * Finds where the hierarchy perf reports cgroup ids of is mounted, from a mountinfo file
 * ("/proc/self/mountinfo"): a cgroup v1 mount carrying the perf_event controller if there is one,
 * else the cgroup2 mount (at /sys/fs/cgroup on a pure v2 host, /sys/fs/cgroup/unified on a hybrid
 * one). A mount made before the reader entered a cgroup namespace of its own shows the whole
 * hierarchy still, and is taken. -ENOENT if neither is mounted (*ret_flags then says whether
 * part of one was). *ret_flags says which it was.
 */
int cgroup_hierarchy_find(const char *mountinfo, char **ret_mount, CgroupHierarchyFlags *ret_flags);

typedef enum CgroupProcLine {
        CGROUP_LINE_V2,      /* the "0::" line */
        CGROUP_LINE_PERF,    /* the v1 hierarchy carrying perf_event, else name=systemd */
        CGROUP_LINE_SYSTEMD, /* name=systemd alone */
        _CGROUP_LINE_MAX,
} CgroupProcLine;

/* The path of pid's cgroup in a /proc/PID/cgroup text, from the line which names. -ENOENT if
 * there is none. */
int cgroup_proc_parse(const char *text, CgroupProcLine which, char **ret_path);

/*
 * path, relative to the root of a cgroup namespace as /proc/PID/cgroup gives it ("/", "/a",
 * "/../b"), made relative to the root of the hierarchy (or of its mount) given the namespace's
 * root there (ns_root, "/" for the hierarchy's own root). -ENOENT if it climbs above that root
 * (or ns_root is NULL: not known): a cgroup that cannot be told from here.
 */
int cgroup_path_resolve(const char *ns_root, const char *path, char **ret);

/*
 * Where the root of the reader's cgroup namespace is in a hierarchy whose top is open at dir_fd:
 * depth levels below that top (as many as the "/.." of the mount's root in mountinfo), the one
 * directory there under which self (the reader's own path from its namespace's root, "/" or
 * "/sub") lists pid in cgroup.procs. Returns its path from the top ("/x/y"); -ENOENT if there is
 * none (self climbing out of the namespace's root with "/.." names none).
 */
int cgroup_ns_root_find(int dir_fd, unsigned depth, const char *self, uint32_t pid, char **ret);

/* Whether the reader is in the initial cgroup namespace (ns_file: "/proc/self/ns/cgroup"); true
 * too on a kernel without cgroup namespaces. */
bool cgroup_ns_is_initial(const char *ns_file);

/* mount: the hierarchy's mount point (NULL: none, every lookup is unknown). */
int cgroup_map_new(const char *mount, CgroupHierarchyFlags flags, CgroupMap **ret);
CgroupMap *cgroup_map_free(CgroupMap *m);

/* Walks the hierarchy and records every cgroup's id and path. */
int cgroup_map_scan(CgroupMap *m);
/* A PERF_RECORD_CGROUP: believed if the path is ours with that id; on a host with no other
 * hierarchy (CGROUP_HIERARCHY_ONLY: every record is ours) also when the path is gone already or
 * has another id now (a transient unit, a job's container, a restarted unit: removed, or made
 * again, before the record was read) and the id is new. Returns 1 if taken. */
int cgroup_map_record(CgroupMap *m, uint64_t id, const char *path);
/* The path of a perf cgroup id; pid (from the sample) is asked when the id is not known yet.
 * NULL if it cannot be told. */
const char *cgroup_map_by_id(CgroupMap *m, uint64_t id, uint32_t pid);
/* The proc source: the cgroup of process pid, read once per process (proc_root: "/proc"). */
const char *cgroup_map_by_pid(CgroupMap *m, const char *proc_root, uint32_t pid);
/* Where by_id reads /proc/PID/cgroup (default "/proc"; tests give another). Not copied. */
void cgroup_map_set_proc_root(CgroupMap *m, const char *proc_root);
/*
 * For a reader in a cgroup namespace of its own: finds the namespace's root in the hierarchy
 * (from mountinfo, "/proc/self/mountinfo", the reader's own cgroup file, "/proc/self/cgroup", and
 * its pid) and, on a v1 hierarchy, in name=systemd's, so that the paths read from /proc are made
 * the hierarchy's. A root not found names nothing from /proc (the name=systemd one: the
 * hierarchy's own line names the sample); cgroup_map_namespace_problem() says so. -ENOMEM.
 */
int cgroup_map_set_namespace(CgroupMap *m, const char *mountinfo, const char *self_cgroup_file, uint32_t pid);
/* Why paths read from /proc cannot be told, as a sentence; NULL when they can. */
const char *cgroup_map_namespace_problem(const CgroupMap *m);
/* Process pid exec'd (or exited): read its cgroup again next time. */
void cgroup_map_forget_pid(CgroupMap *m, uint32_t pid);

/*
 * A map that holds CGROUP_MAP_PATHS_MAX paths names no new cgroup; one that runs for weeks on a
 * host making transient cgroups (jobs, pods, sessions) gets there, and its ids and processes
 * (CGROUP_MAP_KEYS_MAX) grow meanwhile. Then it starts over: forgets every path, id and process
 * and (the perf source) walks the hierarchy again, the cgroups there now, at most once every
 * CGROUP_MAP_RENEW_USEC. Every path handed out before is invalid after: call it between
 * drains only. Returns 1 when it started over, 0 when not, -errno.
 */
int cgroup_map_renew(CgroupMap *m, uint64_t now_usec);

void cgroup_map_get_stats(const CgroupMap *m, CgroupMapStats *ret);

#include "basic/cleanup.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(CgroupMap *, cgroup_map_free);

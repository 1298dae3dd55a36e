/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sampler-cgroup.c on the hosts this machine is not: which hierarchy perf reports ids of from a
 * legacy or hybrid systemd host's mountinfo, which line of /proc/PID/cgroup names a process, and
 * on a v1 perf_event hierarchy (where systemd makes no cgroups) a sample named by its process's
 * name=systemd path, with the id's path only for a process gone. Fixture directories stand in for
 * the hierarchy and for /proc.
 */
#include "tests.h"

#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

#include "basic/fileio.h"
#include "sampler/sampler-cgroup.h"

static char dir[] = "/tmp/test-sampler-cgroup-map-XXXXXX";

static int setup(void **state) {
        return test_dir_make(dir);
}

static int teardown(void **state) {
        return test_dir_remove(dir);
}

static void put(const char *rel, const char *text) {
        char p[PATH_MAX];

        snprintf(p, sizeof p, "%s/%s", dir, rel);
        assert_int_equal(write_file_atomic(p, text, strlen(text), 0644), 0);
}

static void make_dir(const char *rel) {
        char p[PATH_MAX];

        snprintf(p, sizeof p, "%s/%s", dir, rel);
        assert_int_equal(mkdir(p, 0755), 0);
}

static uint64_t inode_of(const char *rel) {
        char p[PATH_MAX];
        struct stat st;

        snprintf(p, sizeof p, "%s/%s", dir, rel);
        assert_int_equal(stat(p, &st), 0);
        return st.st_ino;
}

/* The mountinfo of a systemd host in hybrid mode (Ubuntu 20.04, RHEL 8 with the unified
 * hierarchy): every v1 controller mounted, perf_event among them. */
#define MOUNTINFO_HYBRID                                                                                      \
        "25 30 0:23 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755\n"             \
        "26 25 0:24 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec shared:10 - cgroup2 cgroup2 rw\n"           \
        "27 25 0:25 / /sys/fs/cgroup/systemd rw,nosuid shared:11 - cgroup cgroup rw,xattr,name=systemd\n"       \
        "34 25 0:32 / /sys/fs/cgroup/perf_event rw,nosuid shared:18 - cgroup cgroup rw,perf_event\n"            \
        "35 25 0:33 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:19 - cgroup cgroup rw,cpu,cpuacct\n"

static void test_hierarchy_of_a_hybrid_host(void **state) {
        _cleanup_free_ char *mount = NULL;
        CgroupHierarchyFlags flags;

        put("mountinfo", MOUNTINFO_HYBRID);
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/mountinfo", dir);
        assert_int_equal(cgroup_hierarchy_find(p, &mount, &flags), 0);
        assert_string_equal(mount, "/sys/fs/cgroup/perf_event");
        assert_int_equal(flags, 0);
}

/* A pure v2 host (systemd's unified mode), and one with v2 beside v1 controllers but none with
 * perf_event (as this machine is): only the first has no other hierarchy. */
static void test_hierarchy_of_v2_hosts(void **state) {
        _cleanup_free_ char *m1 = NULL, *m2 = NULL;
        CgroupHierarchyFlags flags;
        char p[PATH_MAX];

        put("mountinfo-v2", "30 25 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec shared:4 - cgroup2 cgroup2 "
                            "rw,nsdelegate,memory_recursiveprot\n");
        snprintf(p, sizeof p, "%s/mountinfo-v2", dir);
        assert_int_equal(cgroup_hierarchy_find(p, &m1, &flags), 0);
        assert_string_equal(m1, "/sys/fs/cgroup");
        assert_int_equal(flags, CGROUP_HIERARCHY_V2 | CGROUP_HIERARCHY_ONLY);

        put("mountinfo-mixed", "26 25 0:24 / /sys/fs/cgroup/unified rw shared:10 - cgroup2 cgroup2 rw\n"
                               "35 25 0:33 / /sys/fs/cgroup/cpu rw shared:19 - cgroup cgroup rw,cpu\n");
        snprintf(p, sizeof p, "%s/mountinfo-mixed", dir);
        assert_int_equal(cgroup_hierarchy_find(p, &m2, &flags), 0);
        assert_string_equal(m2, "/sys/fs/cgroup/unified");
        assert_int_equal(flags, CGROUP_HIERARCHY_V2);

        /* A process that entered a cgroup namespace of its own after the hierarchy was mounted
         * sees the mount rooted above its namespace's root: the whole hierarchy still. */
        _cleanup_free_ char *m3 = NULL, *m4 = NULL;
        put("mountinfo-ns", "41 31 0:38 /../.. /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw\n");
        snprintf(p, sizeof p, "%s/mountinfo-ns", dir);
        assert_int_equal(cgroup_hierarchy_find(p, &m3, &flags), 0);
        assert_string_equal(m3, "/sys/fs/cgroup");
        assert_int_equal(flags, CGROUP_HIERARCHY_V2 | CGROUP_HIERARCHY_ONLY);

        /* A namespace's own mount: rooted at "/" but its top is no root cgroup (it has
         * cgroup.events). Taken, and said to be a part. */
        make_dir("nsmount");
        put("nsmount/cgroup.events", "populated 1\nfrozen 0\n");
        char mi[2 * PATH_MAX];
        snprintf(mi, sizeof mi, "41 31 0:38 / %s/nsmount rw - cgroup2 cgroup2 rw\n", dir);
        put("mountinfo-own", mi);
        snprintf(p, sizeof p, "%s/mountinfo-own", dir);
        assert_int_equal(cgroup_hierarchy_find(p, &m4, &flags), 0);
        assert_int_equal(flags, CGROUP_HIERARCHY_V2 | CGROUP_HIERARCHY_ONLY | CGROUP_HIERARCHY_PART);

        /* Only a sub-cgroup bind-mounted: nothing to walk, and said so; nothing at all: nothing. */
        put("mountinfo-sub", "41 31 0:38 /lxc.payload.web /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
        snprintf(p, sizeof p, "%s/mountinfo-sub", dir);
        assert_int_equal(cgroup_hierarchy_find(p, &m4, &flags), -ENOENT);
        assert_int_equal(flags, CGROUP_HIERARCHY_PART);
        put("mountinfo-none", "22 1 0:20 / /proc rw - proc proc rw\n");
        snprintf(p, sizeof p, "%s/mountinfo-none", dir);
        assert_int_equal(cgroup_hierarchy_find(p, &m4, &flags), -ENOENT);
        assert_int_equal(flags, 0);
}

static void test_proc_lines(void **state) {
        const char *kubelet = "12:perf_event:/\n"
                              "4:cpu,cpuacct:/system.slice/kubelet.service\n"
                              "1:name=systemd:/system.slice/kubelet.service\n"
                              "0::/system.slice/kubelet.service\n";
        const char *container = "12:perf_event:/docker/abc\n1:name=systemd:/docker/abc\n0::/\n";
        const char *no_systemd = "3:perf_event:/docker/abc\n2:cpu:/docker/abc\n0::/\n";
        char *p = NULL;

        assert_int_equal(cgroup_proc_parse(kubelet, CGROUP_LINE_PERF, &p), 0);
        assert_string_equal(p, "/"); /* what perf's id names */
        free(p);
        assert_int_equal(cgroup_proc_parse(kubelet, CGROUP_LINE_V2, &p), 0);
        assert_string_equal(p, "/system.slice/kubelet.service");
        free(p);
        assert_int_equal(cgroup_proc_parse(kubelet, CGROUP_LINE_SYSTEMD, &p), 0);
        assert_string_equal(p, "/system.slice/kubelet.service");
        free(p);
        assert_int_equal(cgroup_proc_parse(container, CGROUP_LINE_SYSTEMD, &p), 0);
        assert_string_equal(p, "/docker/abc");
        free(p);
        assert_int_equal(cgroup_proc_parse(no_systemd, CGROUP_LINE_SYSTEMD, &p), -ENOENT);
        /* a controller whose name only starts like it is not it */
        assert_int_equal(cgroup_proc_parse("1:name=systemdx:/a\n", CGROUP_LINE_SYSTEMD, &p), -ENOENT);
        /* an exiting task whose v2 cgroup was removed before it was reaped (proc_cgroup_show()) */
        assert_int_equal(cgroup_proc_parse("0::/system.slice/job.service (deleted)\n", CGROUP_LINE_V2, &p), 0);
        assert_string_equal(p, "/system.slice/job.service");
        free(p);
}

/* A v1 perf_event hierarchy: every service is at its root there. */
static void test_v1_samples_named_by_systemd_path(void **state) {
        _cleanup_(cgroup_map_freep) CgroupMap *m = NULL;
        char hier[PATH_MAX], proc[PATH_MAX];

        make_dir("perf_event");
        make_dir("perf_event/docker");
        make_dir("perf_event/docker/abc");
        make_dir("proc");
        make_dir("proc/100");
        make_dir("proc/101");
        make_dir("proc/103");
        put("proc/100/cgroup", "12:perf_event:/\n1:name=systemd:/system.slice/kubelet.service\n0::/\n");
        put("proc/101/cgroup", "12:perf_event:/docker/abc\n1:name=systemd:/docker/abc\n0::/\n");
        put("proc/103/cgroup", "12:perf_event:/docker/abc\n0::/\n"); /* no systemd on this host */
        snprintf(hier, sizeof hier, "%s/perf_event", dir);
        snprintf(proc, sizeof proc, "%s/proc", dir);

        assert_int_equal(cgroup_map_new(hier, 0, &m), 0);
        cgroup_map_set_proc_root(m, proc);
        assert_int_equal(cgroup_map_scan(m), 0);
        uint64_t root = inode_of("perf_event"), abc = inode_of("perf_event/docker/abc");

        assert_string_equal(cgroup_map_by_id(m, root, 100), "/system.slice/kubelet.service");
        assert_string_equal(cgroup_map_by_id(m, abc, 101), "/docker/abc");
        /* a perf_event cgroup of its own (cgexec, a container): named by it, whatever systemd says */
        make_dir("perf_event/batch");
        make_dir("proc/104");
        put("proc/104/cgroup", "12:perf_event:/batch\n1:name=systemd:/system.slice/cron.service\n");
        assert_int_equal(cgroup_map_record(m, inode_of("perf_event/batch"), "/batch"), 1);
        assert_string_equal(cgroup_map_by_id(m, inode_of("perf_event/batch"), 104), "/batch");
        /* gone before it was read: the id's own path */
        assert_string_equal(cgroup_map_by_id(m, root, 102), "/");
        assert_string_equal(cgroup_map_by_id(m, abc, 102), "/docker/abc");
        /* no name=systemd line: the perf_event line */
        assert_string_equal(cgroup_map_by_id(m, abc, 103), "/docker/abc");
        /* read once per process: a later change is seen only after it execs */
        put("proc/100/cgroup", "12:perf_event:/\n1:name=systemd:/system.slice/other.service\n");
        assert_string_equal(cgroup_map_by_id(m, root, 100), "/system.slice/kubelet.service");
        cgroup_map_forget_pid(m, 100);
        assert_string_equal(cgroup_map_by_id(m, root, 100), "/system.slice/other.service");
        /* the proc source reads the same line */
        assert_string_equal(cgroup_map_by_pid(m, proc, 101), "/docker/abc");
}

/* On cgroup v2 the id alone decides: no /proc read. A record of a cgroup gone before it was read
 * (a transient unit, a job) is believed only where no other hierarchy's records can come. */
static void test_v2_samples_named_by_id(void **state) {
        char hier[PATH_MAX], proc[PATH_MAX];

        make_dir("v2");
        make_dir("v2/system.slice");
        make_dir("v2/system.slice/kubelet.service");
        snprintf(hier, sizeof hier, "%s/v2", dir);
        snprintf(proc, sizeof proc, "%s/proc", dir);
        for (int only = 0; only <= 1; only++) {
                _cleanup_(cgroup_map_freep) CgroupMap *m = NULL;
                CgroupMapStats st;

                assert_int_equal(cgroup_map_new(hier, CGROUP_HIERARCHY_V2 | (only ? CGROUP_HIERARCHY_ONLY : 0), &m), 0);
                cgroup_map_set_proc_root(m, proc);
                assert_int_equal(cgroup_map_scan(m), 0);
                assert_string_equal(cgroup_map_by_id(m, inode_of("v2/system.slice/kubelet.service"), 100),
                                    "/system.slice/kubelet.service");
                cgroup_map_get_stats(m, &st);
                assert_int_equal(st.lookups_proc, 0);

                /* a record whose path is ours with that id: believed everywhere */
                uint64_t svc = inode_of("v2/system.slice");
                assert_int_equal(cgroup_map_record(m, svc, "/system.slice"), 1);
                /* gone before it was read */
                assert_int_equal(cgroup_map_record(m, 987654321, "/system.slice/run-r1.scope"), only);
                if (only)
                        assert_string_equal(cgroup_map_by_id(m, 987654321, 0), "/system.slice/run-r1.scope");
                else
                        assert_null(cgroup_map_by_id(m, 987654321, 0));
                /* a path there now with another id (a unit that restarted: its cgroup made again) */
                assert_int_equal(cgroup_map_record(m, 55555, "/system.slice"), only);
                if (only)
                        assert_string_equal(cgroup_map_by_id(m, 55555, 0), "/system.slice");
                /* a gone path for an id we know (another hierarchy's record): not taken */
                assert_int_equal(cgroup_map_record(m, svc, "/system.slice/gone.scope"), 0);
                assert_string_equal(cgroup_map_by_id(m, svc, 0), "/system.slice");
        }
}

/* A daemon that runs for weeks on a host making transient cgroups fills the map: it starts over
 * with the cgroups there are, at most every CGROUP_MAP_RENEW_USEC. */
static void test_renew_when_full(void **state) {
        _cleanup_(cgroup_map_freep) CgroupMap *m = NULL;
        CgroupMapStats st;
        char hier[PATH_MAX], path[64];

        make_dir("full");
        make_dir("full/system.slice");
        snprintf(hier, sizeof hier, "%s/full", dir);
        assert_int_equal(cgroup_map_new(hier, CGROUP_HIERARCHY_V2 | CGROUP_HIERARCHY_ONLY, &m), 0);
        assert_int_equal(cgroup_map_scan(m), 0);
        assert_int_equal(cgroup_map_renew(m, 1000), 0); /* not full: nothing */
        for (uint64_t i = 0; i < CGROUP_MAP_PATHS_MAX; i++) {
                snprintf(path, sizeof path, "/system.slice/run-u%" PRIu64 ".scope", i);
                (void) cgroup_map_record(m, 1000000 + i, path);
        }
        cgroup_map_get_stats(m, &st);
        assert_int_equal(st.paths, CGROUP_MAP_PATHS_MAX);
        /* full: a new cgroup is not named */
        assert_int_equal(cgroup_map_record(m, 999, "/system.slice/new.scope"), 1);
        assert_null(cgroup_map_by_id(m, 999, 0));

        assert_int_equal(cgroup_map_renew(m, 2000), 1);
        cgroup_map_get_stats(m, &st);
        assert_int_equal(st.paths, 2); /* "/" and system.slice, walked again */
        assert_int_equal(st.renewals, 1);
        assert_string_equal(cgroup_map_by_id(m, inode_of("full/system.slice"), 0), "/system.slice");
        assert_int_equal(cgroup_map_record(m, 999, "/system.slice/new.scope"), 1);
        assert_string_equal(cgroup_map_by_id(m, 999, 0), "/system.slice/new.scope");

        /* full again within CGROUP_MAP_RENEW_USEC: not yet */
        for (uint64_t i = 0; i < CGROUP_MAP_PATHS_MAX; i++) {
                snprintf(path, sizeof path, "/system.slice/run-v%" PRIu64 ".scope", i);
                (void) cgroup_map_record(m, 2000000 + i, path);
        }
        assert_int_equal(cgroup_map_renew(m, 2000 + CGROUP_MAP_RENEW_USEC - 1), 0);
        assert_int_equal(cgroup_map_renew(m, 2000 + CGROUP_MAP_RENEW_USEC), 1);

        /* The proc source (no walk): its processes fill it too, and it starts over empty. */
        _cleanup_(cgroup_map_freep) CgroupMap *p = NULL;
        char proc[PATH_MAX];
        snprintf(proc, sizeof proc, "%s/proc", dir);
        assert_int_equal(cgroup_map_new(hier, CGROUP_HIERARCHY_V2, &p), 0);
        for (uint32_t pid = 1; pid <= CGROUP_MAP_KEYS_MAX; pid++)
                (void) cgroup_map_by_pid(p, proc, 1000000 + pid); /* none readable: remembered so */
        assert_int_equal(cgroup_map_renew(p, 5000), 1);
}

/*
 * Run in a cgroup namespace of its own, tprofd reads /proc/PID/cgroup relative to the namespace's
 * root. The forms are kernfs_path_from_node()'s (fs/kernfs/dir.c, Linux 6.1, the examples of its
 * comment): from /n1/n2/n3 to /n1/n2/n3/n4/n5 "/n4/n5", from /n1/n2/n3/n4 to /n1/n2/n5
 * "/../../n5", from /n1/n2/n3/n4/n5 to /n1/n2/n3 "/../..", and "/" for the root itself.
 */
static void test_path_resolve(void **state) {
        static const struct {
                const char *ns_root, *path, *want; /* want NULL: cannot be told */
        } cases[] = {
                { "/n1/n2/n3", "/n4/n5", "/n1/n2/n3/n4/n5" },
                { "/n1/n2/n3/n4", "/../../n5", "/n1/n2/n5" },
                { "/n1/n2/n3/n4/n5", "/../..", "/n1/n2/n3" },
                { "/n1/n2", "/", "/n1/n2" },
                { "/n1/n2", "/../..", "/" },
                { "/n1/n2", "/../../kubepods.slice/pod1", "/kubepods.slice/pod1" },
                { "/n1/n2", "/../../..", NULL }, /* above the hierarchy's root */
                { "/", "/", "/" },                /* the host's namespace: unchanged */
                { "/", "/system.slice/a.service", "/system.slice/a.service" },
                { "/", "/../a", NULL }, /* a namespace's own mount: outside it, nothing */
                { "/n1", "/..a/..", "/n1/..a/.." }, /* names that only start with dots */
                { NULL, "/", NULL },                 /* the namespace's root not found */
                { NULL, "/a", NULL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *got = NULL;
                int r = cgroup_path_resolve(cases[i].ns_root, cases[i].path, &got);

                if (!cases[i].want) {
                        assert_int_equal(r, -ENOENT);
                        continue;
                }
                assert_int_equal(r, 0);
                assert_string_equal(got, cases[i].want);
        }
}

/* The namespace's root: the directory at the mount's depth under which the reader's own path
 * lists its pid in cgroup.procs (a number, not a prefix of one). */
static void test_ns_root_find(void **state) {
        _cleanup_close_ int fd = -EBADF;
        char *root = NULL, p[PATH_MAX];

        make_dir("nsh");
        make_dir("nsh/a.slice");
        make_dir("nsh/a.slice/web.service");
        make_dir("nsh/a.slice/tprofd.service");
        make_dir("nsh/a.slice/tprofd.service/sub");
        make_dir("nsh/b.slice");
        make_dir("nsh/b.slice/tprofd.service");
        put("nsh/cgroup.procs", "1\n");
        put("nsh/a.slice/web.service/cgroup.procs", "300\n");
        put("nsh/a.slice/tprofd.service/cgroup.procs", "");
        put("nsh/a.slice/tprofd.service/sub/cgroup.procs", "17\n4242\n");
        put("nsh/b.slice/tprofd.service/cgroup.procs", "42420\n");
        snprintf(p, sizeof p, "%s/nsh", dir);
        fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);

        assert_int_equal(cgroup_ns_root_find(fd, 2, "/sub", 4242, &root), 0);
        assert_string_equal(root, "/a.slice/tprofd.service");
        free(root);
        assert_int_equal(cgroup_ns_root_find(fd, 3, "/", 4242, &root), 0);
        assert_string_equal(root, "/a.slice/tprofd.service/sub");
        free(root);
        assert_int_equal(cgroup_ns_root_find(fd, 2, "/", 42420, &root), 0);
        assert_string_equal(root, "/b.slice/tprofd.service");
        free(root);
        assert_int_equal(cgroup_ns_root_find(fd, 2, "/", 4242, &root), -ENOENT); /* not there */
        assert_int_equal(cgroup_ns_root_find(fd, 2, "/sub", 424, &root), -ENOENT);
        /* moved out of its namespace's root: which root it was cannot be told */
        assert_int_equal(cgroup_ns_root_find(fd, 2, "/../web.service", 300, &root), -ENOENT);
}

/* mountinfo as a process sees it in a cgroup namespace made two levels down, with the host's
 * mounts (the root "/../.." as cgroup_show_path() gives it, kernel/cgroup/cgroup.c, Linux 6.1). */
static void put_ns_mountinfo(const char *name, const char *v2, const char *perf, const char *systemd) {
        char mi[4 * PATH_MAX] = "", line[2 * PATH_MAX];

        if (v2) {
                snprintf(line, sizeof line, "41 31 0:38 /../.. %s/%s rw - cgroup2 cgroup2 rw\n", dir, v2);
                strcat(mi, line);
        }
        if (systemd) {
                snprintf(line, sizeof line, "40 31 0:37 /../.. %s/%s rw - cgroup cgroup rw,xattr,name=systemd\n", dir,
                         systemd);
                strcat(mi, line);
        }
        if (perf) {
                snprintf(line, sizeof line, "34 31 0:32 /../.. %s/%s rw - cgroup cgroup rw,perf_event\n", dir, perf);
                strcat(mi, line);
        }
        put(name, mi);
}

/* On v2, the proc source, and an id unknown to the walk looked up in /proc: host paths. */
static void test_namespace_v2(void **state) {
        _cleanup_(cgroup_map_freep) CgroupMap *m = NULL;
        char hier[PATH_MAX], proc[PATH_MAX], mi[PATH_MAX], self[PATH_MAX];

        make_dir("nsv2");
        make_dir("nsv2/h2.slice");
        make_dir("nsv2/h2.slice/h2ns-tprofd.service");
        make_dir("nsv2/h2.slice/h2ns-web.service");
        make_dir("nsv2/kubepods.slice");
        put("nsv2/h2.slice/h2ns-tprofd.service/cgroup.procs", "4242\n");
        make_dir("nsv2proc");
        make_dir("nsv2proc/300");
        make_dir("nsv2proc/301");
        make_dir("nsv2proc/302");
        make_dir("nsv2proc/303");
        put("nsv2proc/300/cgroup", "0::/../h2ns-web.service\n");
        put("nsv2proc/301/cgroup", "0::/\n"); /* in tprofd's own */
        put("nsv2proc/302/cgroup", "0::/../../..\n");
        put("nsv2proc/303/cgroup", "0::/../../kubepods.slice/new.scope\n");
        put_ns_mountinfo("nsv2-mountinfo", "nsv2", NULL, NULL);
        snprintf(hier, sizeof hier, "%s/nsv2", dir);
        snprintf(proc, sizeof proc, "%s/nsv2proc", dir);
        snprintf(mi, sizeof mi, "%s/nsv2-mountinfo", dir);

        assert_int_equal(cgroup_map_new(hier, CGROUP_HIERARCHY_V2 | CGROUP_HIERARCHY_ONLY, &m), 0);
        cgroup_map_set_proc_root(m, proc);
        put("nsv2-self", "0::/\n");
        snprintf(self, sizeof self, "%s/nsv2-self", dir);
        assert_int_equal(cgroup_map_set_namespace(m, mi, self, 4242), 0);
        assert_null(cgroup_map_namespace_problem(m));
        assert_string_equal(cgroup_map_by_pid(m, proc, 300), "/h2.slice/h2ns-web.service");
        assert_string_equal(cgroup_map_by_pid(m, proc, 301), "/h2.slice/h2ns-tprofd.service");
        assert_null(cgroup_map_by_pid(m, proc, 302)); /* above the root: nothing there */

        /* an id the walk did not see, looked up in /proc and checked against the hierarchy */
        assert_int_equal(cgroup_map_scan(m), 0);
        make_dir("nsv2/kubepods.slice/new.scope");
        assert_string_equal(cgroup_map_by_id(m, inode_of("nsv2/kubepods.slice/new.scope"), 303),
                            "/kubepods.slice/new.scope");
}

/* The namespace's own mount (a part), and a root that cannot be found: nothing outside is named,
 * and the second is said. */
static void test_namespace_part_and_unfound(void **state) {
        _cleanup_(cgroup_map_freep) CgroupMap *part = NULL, *lost = NULL;
        char hier[PATH_MAX], proc[PATH_MAX], mi[PATH_MAX], self[PATH_MAX], line[2 * PATH_MAX];

        make_dir("nspart");
        make_dir("nspart/sub");
        put("nspart/cgroup.events", "populated 1\nfrozen 0\n");
        make_dir("nspartproc");
        make_dir("nspartproc/300");
        make_dir("nspartproc/301");
        put("nspartproc/300/cgroup", "0::/../h2ns-web.service\n");
        put("nspartproc/301/cgroup", "0::/sub\n");
        snprintf(hier, sizeof hier, "%s/nspart", dir);
        snprintf(proc, sizeof proc, "%s/nspartproc", dir);
        snprintf(line, sizeof line, "41 31 0:38 / %s rw - cgroup2 cgroup2 rw\n", hier);
        put("nspart-mountinfo", line);
        snprintf(mi, sizeof mi, "%s/nspart-mountinfo", dir);

        assert_int_equal(cgroup_map_new(hier, CGROUP_HIERARCHY_V2 | CGROUP_HIERARCHY_PART, &part), 0);
        put("nspart-self", "0::/\n");
        snprintf(self, sizeof self, "%s/nspart-self", dir);
        assert_int_equal(cgroup_map_set_namespace(part, mi, self, 4242), 0);
        assert_null(cgroup_map_namespace_problem(part)); /* the part is said by the sampler */
        assert_null(cgroup_map_by_pid(part, proc, 300));
        assert_string_equal(cgroup_map_by_pid(part, proc, 301), "/sub");

        /* the host's mount, but tprofd is in no cgroup there (it moved out of its root) */
        put_ns_mountinfo("nslost-mountinfo", "nspart", NULL, NULL);
        snprintf(mi, sizeof mi, "%s/nslost-mountinfo", dir);
        assert_int_equal(cgroup_map_new(hier, CGROUP_HIERARCHY_V2, &lost), 0);
        put("nslost-self", "0::/../elsewhere\n");
        snprintf(self, sizeof self, "%s/nslost-self", dir);
        assert_int_equal(cgroup_map_set_namespace(lost, mi, self, 4242), 0);
        assert_non_null(cgroup_map_namespace_problem(lost));
        assert_null(cgroup_map_by_pid(lost, proc, 301));
}

/* v1: the perf_event hierarchy and name=systemd's each have a root of their own; a sample at the
 * perf_event root is named by its name=systemd path, made the host's. */
static void test_namespace_v1(void **state) {
        _cleanup_(cgroup_map_freep) CgroupMap *m = NULL, *nosd = NULL;
        char perf[PATH_MAX], proc[PATH_MAX], mi[PATH_MAX], self[PATH_MAX];

        make_dir("nsperf");
        make_dir("nsperf/docker");
        make_dir("nsperf/docker/abc");
        put("nsperf/docker/abc/cgroup.procs", "4242\n");
        make_dir("nssd");
        make_dir("nssd/system.slice");
        make_dir("nssd/system.slice/docker-abc.scope");
        put("nssd/system.slice/docker-abc.scope/cgroup.procs", "1\n4242\n");
        make_dir("nsv1proc");
        make_dir("nsv1proc/300");
        make_dir("nsv1proc/301");
        make_dir("nsv1proc/302");
        put("nsv1proc/300/cgroup", "12:perf_event:/../..\n1:name=systemd:/../kubelet.service\n");
        put("nsv1proc/301/cgroup", "12:perf_event:/\n1:name=systemd:/\n"); /* in the container */
        put("nsv1proc/302/cgroup", "12:perf_event:/../..\n1:name=systemd:/../..\n"); /* systemd's root */
        put_ns_mountinfo("nsv1-mountinfo", NULL, "nsperf", "nssd");
        put("nsv1-self", "12:perf_event:/\n1:name=systemd:/\n0::/\n");
        snprintf(self, sizeof self, "%s/nsv1-self", dir);
        snprintf(perf, sizeof perf, "%s/nsperf", dir);
        snprintf(proc, sizeof proc, "%s/nsv1proc", dir);
        snprintf(mi, sizeof mi, "%s/nsv1-mountinfo", dir);

        assert_int_equal(cgroup_map_new(perf, 0, &m), 0);
        cgroup_map_set_proc_root(m, proc);
        assert_int_equal(cgroup_map_set_namespace(m, mi, self, 4242), 0);
        assert_null(cgroup_map_namespace_problem(m));
        assert_int_equal(cgroup_map_scan(m), 0);
        uint64_t root = inode_of("nsperf"), abc = inode_of("nsperf/docker/abc");
        assert_string_equal(cgroup_map_by_id(m, root, 300), "/system.slice/kubelet.service");
        assert_string_equal(cgroup_map_by_id(m, abc, 301), "/docker/abc"); /* a perf_event cgroup of its own */
        assert_string_equal(cgroup_map_by_id(m, root, 302), "/"); /* the perf_event line's */
        assert_string_equal(cgroup_map_by_pid(m, proc, 301), "/system.slice/docker-abc.scope");

        /* name=systemd not mounted here: the perf_event line names it, and that is said */
        put_ns_mountinfo("nsv1nosd-mountinfo", NULL, "nsperf", NULL);
        snprintf(mi, sizeof mi, "%s/nsv1nosd-mountinfo", dir);
        assert_int_equal(cgroup_map_new(perf, 0, &nosd), 0);
        cgroup_map_set_proc_root(nosd, proc);
        assert_int_equal(cgroup_map_set_namespace(nosd, mi, self, 4242), 0);
        assert_non_null(cgroup_map_namespace_problem(nosd));
        assert_string_equal(cgroup_map_by_pid(nosd, proc, 301), "/docker/abc");
        assert_string_equal(cgroup_map_by_pid(nosd, proc, 300), "/");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_hierarchy_of_a_hybrid_host),
                cmocka_unit_test(test_hierarchy_of_v2_hosts),
                cmocka_unit_test(test_proc_lines),
                cmocka_unit_test(test_v1_samples_named_by_systemd_path),
                cmocka_unit_test(test_v2_samples_named_by_id),
                cmocka_unit_test(test_renew_when_full),
                cmocka_unit_test(test_path_resolve),
                cmocka_unit_test(test_ns_root_find),
                cmocka_unit_test(test_namespace_v2),
                cmocka_unit_test(test_namespace_part_and_unfound),
                cmocka_unit_test(test_namespace_v1),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The task table: mappings replacing overlapped ranges, fork copying the parent's mappings, exec
 * dropping them, exit keeping a task until it is reaped, /proc/PID/maps lines, and a scan of a
 * fixture /proc tree.
 */
#include "tests.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "basic/fileio.h"
#include "sampler/proc-maps.h"

static ProcMap map(uint64_t start, uint64_t end, uint64_t pgoff, const char *path) {
        return (ProcMap) { .start = start, .end = end, .pgoff = pgoff, .ino = 1, .prot = PROT_EXEC, .path = (char *) path };
}

static void expect(ProcTable *t, uint32_t pid, uint64_t addr, const char *path, uint64_t start, uint64_t pgoff) {
        const ProcMap *m = proc_table_find_map(t, pid, addr);
        if (!path) {
                assert_null(m);
                return;
        }
        assert_non_null(m);
        assert_string_equal(m->path, path);
        assert_int_equal(m->start, start);
        assert_int_equal(m->pgoff, pgoff);
}

static size_t proc_get_n(ProcTable *t, uint32_t pid) {
        ProcTask *task = proc_table_get(t, pid);
        return task ? task->n_maps : 0;
}

static void test_mmap_and_lookup(void **state) {
        ProcTable *t = proc_table_new();
        ProcMap a = map(0x1000, 0x3000, 0, "/a"), b = map(0x5000, 0x6000, 0x2000, "/b");

        assert_int_equal(proc_table_mmap(t, 10, &b), 0);
        assert_int_equal(proc_table_mmap(t, 10, &a), 0);
        expect(t, 10, 0x0fff, NULL, 0, 0);
        expect(t, 10, 0x1000, "/a", 0x1000, 0);
        expect(t, 10, 0x2fff, "/a", 0x1000, 0);
        expect(t, 10, 0x3000, NULL, 0, 0);
        expect(t, 10, 0x5800, "/b", 0x5000, 0x2000);
        expect(t, 11, 0x1000, NULL, 0, 0);
        assert_true(proc_table_has_maps(t, 10));
        assert_false(proc_table_has_maps(t, 11));
        proc_table_free(t);
}

static void test_mmap_overlap_splits(void **state) {
        ProcTable *t = proc_table_new();
        ProcMap big = map(0x10000, 0x20000, 0, "/big"), mid = map(0x14000, 0x15000, 0, "/mid"),
                edge = map(0x1f000, 0x22000, 0, "/edge"), all = map(0x0, 0x100000, 0, "/all");

        assert_int_equal(proc_table_mmap(t, 1, &big), 0);
        assert_int_equal(proc_table_mmap(t, 1, &mid), 0);
        expect(t, 1, 0x13fff, "/big", 0x10000, 0);
        expect(t, 1, 0x14000, "/mid", 0x14000, 0);
        /* The right remainder keeps its file offset. */
        expect(t, 1, 0x15000, "/big", 0x15000, 0x5000);
        assert_int_equal(proc_table_mmap(t, 1, &edge), 0);
        expect(t, 1, 0x1efff, "/big", 0x15000, 0x5000);
        expect(t, 1, 0x1f000, "/edge", 0x1f000, 0);
        expect(t, 1, 0x21fff, "/edge", 0x1f000, 0);
        assert_int_equal(proc_get_n(t, 1), 4);
        assert_int_equal(proc_table_mmap(t, 1, &all), 0);
        expect(t, 1, 0x14000, "/all", 0x0, 0);
        assert_int_equal(proc_get_n(t, 1), 1);
        proc_table_free(t);
}

static void test_fork_exec_exit_reap(void **state) {
        ProcTable *t = proc_table_new();
        ProcMap a = map(0x1000, 0x2000, 0, "/bin/parent");
        ProcTableStats st;

        assert_int_equal(proc_table_comm_event(t, 100, 100, "parent", false), 0);
        assert_int_equal(proc_table_mmap(t, 100, &a), 0);

        /* A new process inherits name and mappings. */
        assert_int_equal(proc_table_fork(t, 200, 100, 200, 100), 0);
        assert_string_equal(proc_table_comm(t, 200, 200), "parent");
        expect(t, 200, 0x1800, "/bin/parent", 0x1000, 0);

        /* A thread of 200 with its own name; unknown threads fall back to the process name. */
        assert_int_equal(proc_table_fork(t, 200, 200, 201, 200), 0);
        assert_int_equal(proc_table_comm_event(t, 200, 201, "worker-1", false), 0);
        assert_string_equal(proc_table_comm(t, 200, 201), "worker-1");
        assert_string_equal(proc_table_comm(t, 200, 299), "parent");

        /* exec: a new name and no mappings until MMAP2 records say so. */
        assert_int_equal(proc_table_comm_event(t, 200, 200, "child-long-name-cut", true), 0);
        assert_string_equal(proc_table_comm(t, 200, 200), "child-long-name");
        expect(t, 200, 0x1800, NULL, 0, 0);
        assert_false(proc_table_has_maps(t, 200));
        expect(t, 100, 0x1800, "/bin/parent", 0x1000, 0);

        /* Exit keeps the task until it is reaped past its exit time. */
        assert_int_equal(proc_table_exit(t, 100, 100, 5000), 0);
        assert_string_equal(proc_table_comm(t, 100, 100), "parent");
        expect(t, 100, 0x1800, "/bin/parent", 0x1000, 0);
        assert_int_equal(proc_table_reap(t, 5000), 0);
        assert_int_equal(proc_table_reap(t, 5001), 1);
        assert_null(proc_table_comm(t, 100, 100));
        expect(t, 100, 0x1800, NULL, 0, 0);

        /* A reused pid starts clean. */
        assert_int_equal(proc_table_exit(t, 200, 200, 6000), 0);
        assert_int_equal(proc_table_fork(t, 200, 1, 200, 1), 0);
        assert_string_equal(proc_table_comm(t, 200, 200) ?: "", "");

        proc_table_get_stats(t, &st);
        assert_int_equal(st.reaped, 1);
        proc_table_free(t);
}

/* Exits at different times are reaped as each comes due, not before; a tid reused before its
 * reap is alive again and never reaped; a table with nothing due is left as it is. */
static void test_reap_in_steps(void **state) {
        ProcTable *t = proc_table_new();

        for (uint32_t i = 1; i <= 4; i++)
                assert_int_equal(proc_table_comm_event(t, i, i, "task", false), 0);
        assert_int_equal(proc_table_reap(t, UINT64_MAX), 0);

        assert_int_equal(proc_table_exit(t, 3, 3, 300), 0);
        assert_int_equal(proc_table_exit(t, 1, 1, 100), 0);
        assert_int_equal(proc_table_exit(t, 2, 2, 200), 0);
        assert_int_equal(proc_table_exit(t, 2, 2, 250), 0); /* a second EXIT of one task counts once */
        assert_int_equal(proc_table_fork(t, 3, 1, 3, 1), 0); /* tid 3 reused before its reap */

        assert_int_equal(proc_table_reap(t, 100), 0);
        assert_int_equal(proc_table_reap(t, 101), 1);
        assert_null(proc_table_comm(t, 1, 1));
        assert_string_equal(proc_table_comm(t, 2, 2), "task");
        assert_int_equal(proc_table_reap(t, 250), 0);
        assert_int_equal(proc_table_reap(t, 251), 1);
        assert_int_equal(proc_table_reap(t, UINT64_MAX), 0);
        assert_non_null(proc_table_get(t, 3));
        assert_string_equal(proc_table_comm(t, 4, 4), "task");

        assert_int_equal(proc_table_exit(t, 4, 4, 400), 0);
        assert_int_equal(proc_table_reap(t, 401), 1);

        /* Seen since the start, against in the table now (what status reports as known). */
        ProcTableStats st;
        proc_table_get_stats(t, &st);
        assert_int_equal(st.tasks, 4);
        assert_int_equal(st.reaped, 3);
        assert_int_equal(st.live, 1);
        proc_table_free(t);
}

static void test_many_tasks(void **state) {
        ProcTable *t = proc_table_new();
        char name[16];

        for (uint32_t i = 1; i <= 50000; i++) {
                snprintf(name, sizeof(name), "t%u", i);
                assert_int_equal(proc_table_comm_event(t, i, i, name, false), 0);
        }
        for (uint32_t i = 1; i <= 50000; i += 997) {
                snprintf(name, sizeof(name), "t%u", i);
                assert_string_equal(proc_table_comm(t, i, i), name);
                assert_int_equal(proc_table_exit(t, i, i, 10), 0);
        }
        assert_int_equal(proc_table_reap(t, 11), (50000 + 996) / 997);
        proc_table_free(t);
}

static const struct {
        const char *line;
        int ret;
        uint64_t start, end, pgoff, ino;
        const char *path;
} maps_lines[] = {
        { "55d0c0a00000-55d0c0a21000 r-xp 00002000 fd:01 1234567                    /usr/bin/true\n", 1,
          0x55d0c0a00000, 0x55d0c0a21000, 0x2000, 1234567, "/usr/bin/true" },
        { "7ffd1b5f2000-7ffd1b5f4000 r-xp 00000000 00:00 0                          [vdso]\n", 1,
          0x7ffd1b5f2000, 0x7ffd1b5f4000, 0, 0, "[vdso]" },
        { "7f0000000000-7f0000001000 rwxp 00000000 00:00 0 \n", 1, 0x7f0000000000, 0x7f0000001000, 0, 0, "" },
        { "7f00a0000000-7f00a0001000 r-xp 00000000 08:01 99 /tmp/with space (deleted)\n", 1,
          0x7f00a0000000, 0x7f00a0001000, 0, 99, "/tmp/with space (deleted)" },
        { "55d0c0800000-55d0c0a00000 r--p 00000000 fd:01 1234567 /usr/bin/true\n", 0 },
        { "garbage\n", -EBADMSG },
        { "2000-1000 r-xp 00000000 00:00 0 /x\n", -EBADMSG },
        { "", -EBADMSG },
};

static void test_comm_tidy(void **state) {
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "kworker/u8:3-ev", "kworker/u8:3" },   /* idle, last ran events_unbound */
                { "kworker/0:1H-kb", "kworker/0:1H" },   /* high priority pool, kblockd */
                { "kworker/u8:5+fl", "kworker/u8:5" },   /* running a flush work item */
                { "kworker/R-loop0", "kworker/R-loop0" }, /* a rescuer: its name is the workqueue's */
                { "kworker/3:0", "kworker/3:0" },
                { "my-app-server", "my-app-server" },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char c[32];
                snprintf(c, sizeof c, "%s", cases[i].in);
                proc_comm_tidy(c);
                assert_string_equal(c, cases[i].out);
        }
}

/* As perf script names a task it has no comm for; a task already unhashed is -1 (its u32 pid). */
static void test_unnamed(void **state) {
        char buf[PROC_UNNAMED_BYTES];

        assert_string_equal(proc_unnamed(4242, buf), ":4242");
        assert_string_equal(proc_unnamed(UINT32_MAX, buf), ":-1");
        assert_string_equal(proc_unnamed(4194304, buf), ":4194304"); /* PID_MAX_LIMIT */
}

static void test_parse_maps_lines(void **state) {
        for (size_t i = 0; i < ELEMENTSOF(maps_lines); i++) {
                ProcMap m = {};
                int r = proc_maps_parse_line(maps_lines[i].line, &m);
                assert_int_equal(r, maps_lines[i].ret);
                if (r <= 0)
                        continue;
                assert_int_equal(m.start, maps_lines[i].start);
                assert_int_equal(m.end, maps_lines[i].end);
                assert_int_equal(m.pgoff, maps_lines[i].pgoff);
                assert_int_equal(m.ino, maps_lines[i].ino);
                assert_string_equal(m.path, maps_lines[i].path);
                proc_map_done(&m);
        }
}

static void test_scan_fixture(void **state) {
        char root[] = "/tmp/tprof-proc.XXXXXX", p[512];
        ProcTable *t = proc_table_new();

        assert_non_null(mkdtemp(root));
        snprintf(p, sizeof(p), "%s/42/task/43", root);
        assert_int_equal(mkdir_p(p, 0755), 0);
        snprintf(p, sizeof(p), "%s/7", root);
        assert_int_equal(mkdir_p(p, 0755), 0);
        snprintf(p, sizeof(p), "%s/self", root);
        assert_int_equal(mkdir_p(p, 0755), 0);

        snprintf(p, sizeof(p), "%s/42/comm", root);
        assert_int_equal(write_file_atomic(p, "server\n", 7, 0644), 0);
        snprintf(p, sizeof(p), "%s/42/task/43/comm", root);
        assert_int_equal(write_file_atomic(p, "server-io\n", 10, 0644), 0);
        snprintf(p, sizeof(p), "%s/42/maps", root);
        const char *maps = "00400000-00401000 r--p 00000000 08:01 5 /srv/server\n"
                           "00401000-00402000 r-xp 00001000 08:01 5 /srv/server\n"
                           "not a maps line\n"
                           "7f0000000000-7f0000010000 r-xp 00000000 08:01 6 /lib/libc.so.6\n";
        assert_int_equal(write_file_atomic(p, maps, strlen(maps), 0644), 0);
        /* 7: a kernel thread, comm but empty maps; a workqueue worker's comm in /proc names the
         * workqueue it last ran, cut to 15 characters, which its name in the kernel has not. */
        snprintf(p, sizeof(p), "%s/7/comm", root);
        assert_int_equal(write_file_atomic(p, "kworker/0:1-ev\n", 15, 0644), 0);

        assert_int_equal(proc_table_scan(t, root), 0);
        assert_string_equal(proc_table_comm(t, 42, 42), "server");
        assert_string_equal(proc_table_comm(t, 42, 43), "server-io");
        assert_string_equal(proc_table_comm(t, 7, 7), "kworker/0:1");
        expect(t, 42, 0x401800, "/srv/server", 0x401000, 0x1000);
        expect(t, 42, 0x400800, NULL, 0, 0);
        expect(t, 42, 0x7f0000000010, "/lib/libc.so.6", 0x7f0000000000, 0);
        assert_int_equal(proc_table_scan(t, "/nonexistent-proc"), -ENOENT);

        /* 42 execs another program and 9 is a process the first scan saw that has gone since: a
         * rescan gives 42 what its maps say now, nothing of the old image, and keeps 9's. */
        assert_int_equal(proc_table_mmap(t, 9, &(ProcMap) { .start = 0x500000, .end = 0x501000,
                                                            .path = (char *) "/bin/gone", .prot = PROT_EXEC }), 0);
        uint64_t gen = proc_table_maps_generation(t, 42);
        snprintf(p, sizeof(p), "%s/42/maps", root);
        maps = "00600000-00601000 r-xp 00000000 08:01 8 /usr/bin/other\n";
        assert_int_equal(write_file_atomic(p, maps, strlen(maps), 0644), 0);
        assert_int_equal(proc_table_rescan(t, root), 0);
        expect(t, 42, 0x600010, "/usr/bin/other", 0x600000, 0);
        expect(t, 42, 0x401800, NULL, 0, 0);
        expect(t, 42, 0x7f0000000010, NULL, 0, 0);
        assert_true(proc_table_maps_generation(t, 42) != gen);
        expect(t, 9, 0x500010, "/bin/gone", 0x500000, 0);
        /* A plain scan adds to what the table has. */
        maps = "00700000-00701000 r-xp 00000000 08:01 9 /usr/bin/third\n";
        assert_int_equal(write_file_atomic(p, maps, strlen(maps), 0644), 0);
        assert_int_equal(proc_table_scan(t, root), 0);
        expect(t, 42, 0x600010, "/usr/bin/other", 0x600000, 0);
        expect(t, 42, 0x700010, "/usr/bin/third", 0x700000, 0);

        /* A kernel thread kthreadd makes bears its own name at once (no COMM record comes): read. */
        snprintf(p, sizeof(p), "%s/77", root);
        assert_int_equal(mkdir_p(p, 0755), 0);
        snprintf(p, sizeof(p), "%s/77/comm", root);
        assert_int_equal(write_file_atomic(p, "kworker/u8:5+flush-8:0\n", 23, 0644), 0);
        assert_int_equal(proc_table_comm_event(t, 2, 2, "kthreadd", false), 0);
        assert_int_equal(proc_table_fork(t, 77, 2, 77, 2), 0);
        assert_string_equal(proc_table_comm(t, 77, 77), "kthreadd");
        assert_int_equal(proc_table_kthread_comm(t, root, 77), 0);
        assert_string_equal(proc_table_comm(t, 77, 77), "kworker/u8:5");
        /* gone already: the parent's name stays */
        assert_int_equal(proc_table_fork(t, 78, 2, 78, 2), 0);
        assert_true(proc_table_kthread_comm(t, root, 78) < 0);
        assert_string_equal(proc_table_comm(t, 78, 78), "kthreadd");
        proc_table_free(t);

        char cmd[600];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        assert_int_equal(system(cmd), 0);
}

/*
 * A task whose EXIT record was lost with a ring that overflowed, or that ended before the events
 * ran, is found gone from /proc and reaped like any other; the rest stay, threads by their
 * /proc/PID/task entry.
 */
static void test_sweep_gone(void **state) {
        char root[] = "/tmp/tprof-proc.XXXXXX", p[512];
        ProcTable *t = proc_table_new();
        ProcTableStats st;

        assert_non_null(mkdtemp(root));
        snprintf(p, sizeof(p), "%s/42/task/43", root);
        assert_int_equal(mkdir_p(p, 0755), 0);
        assert_int_equal(proc_table_comm_event(t, 42, 42, "server", false), 0);
        assert_int_equal(proc_table_comm_event(t, 42, 43, "server-io", false), 0);
        assert_int_equal(proc_table_comm_event(t, 42, 44, "server-gone", false), 0);
        assert_int_equal(proc_table_mmap(t, 9, &(ProcMap) { .start = 0x500000, .end = 0x501000,
                                                            .path = (char *) "/bin/gone", .prot = PROT_EXEC }), 0);
        /* 50 exited with its record: its exit time stays as it was. */
        assert_int_equal(proc_table_comm_event(t, 50, 50, "done", false), 0);
        assert_int_equal(proc_table_exit(t, 50, 50, 500), 0);

        assert_int_equal(proc_table_sweep(t, root, 1000), 2);
        assert_int_equal(proc_table_reap(t, 600), 1);  /* 50 */
        assert_int_equal(proc_table_reap(t, 1000), 0); /* the ones swept, from 1000 on */
        assert_int_equal(proc_table_reap(t, 1001), 2);
        assert_null(proc_table_get(t, 9));
        assert_null(proc_table_get(t, 44));
        assert_string_equal(proc_table_comm(t, 42, 43), "server-io");
        assert_true(proc_table_has_maps(t, 9) == false);
        proc_table_get_stats(t, &st);
        assert_int_equal(st.live, 2);
        assert_int_equal(proc_table_sweep(t, root, 2000), 0);
        proc_table_free(t);

        char cmd[600];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        assert_int_equal(system(cmd), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_mmap_and_lookup),
                cmocka_unit_test(test_mmap_overlap_splits),
                cmocka_unit_test(test_fork_exec_exit_reap),
                cmocka_unit_test(test_reap_in_steps),
                cmocka_unit_test(test_many_tasks),
                cmocka_unit_test(test_comm_tidy),
                cmocka_unit_test(test_unnamed),
                cmocka_unit_test(test_parse_maps_lines),
                cmocka_unit_test(test_scan_fixture),
                cmocka_unit_test(test_sweep_gone),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The OOM killer's victim from the kernel's lines: each line is made here with the format string
 * of mm/oom_kill.c at the version named, as the kernel's printk would make it.
 */
#include <stdio.h>
#include <string.h>

#include "bundle/bundle-oom.h"
#include "tests.h"

/* dump_header(), 5.10, 6.1, 6.12 */
#define FMT_INVOKED "%s invoked oom-killer: gfp_mask=%#x(%s), order=%d, oom_score_adj=%hd"
/* __oom_kill_process(), 4.19 */
#define FMT_KILLED_419 "Killed process %d (%s) total-vm:%lukB, anon-rss:%lukB, file-rss:%lukB, shmem-rss:%lukB"
/* oom_kill_process(), 4.19 */
#define FMT_CHOSEN_419 "%s: Kill process %d (%s) score %u or sacrifice child"
/* __oom_kill_process(), 5.10, 6.1, 6.12 */
#define FMT_KILLED \
        "%s: Killed process %d (%s) total-vm:%lukB, anon-rss:%lukB, file-rss:%lukB, shmem-rss:%lukB, UID:%u pgtables:%lukB oom_score_adj:%hd"
/* __oom_kill_process(), 5.10: the chosen task had no mm left */
#define FMT_EXITING "%s: OOM victim %d (%s) is already exiting. Skip killing the task"

typedef struct Line {
        char text[512];
        bool kernel, trigger;
} Line;

static OomVictim scan(const Line *l, size_t n) {
        OomVictim v = {};

        for (size_t i = 0; i < n; i++)
                bundle_oom_victim_feed(&v, l[i].text, strlen(l[i].text), l[i].kernel, l[i].trigger, 1000 + i);
        return v;
}

static void test_lines(void **state) {
        char buf[512];
        const char *comm;
        size_t len;
        uint64_t pid;

        snprintf(buf, sizeof buf, FMT_INVOKED, "stress-ng", 0x140dca, "GFP_HIGHUSER_MOVABLE|__GFP_COMP|__GFP_ZERO", 0,
                 (short) 0);
        assert_int_equal(bundle_oom_line(buf, strlen(buf), NULL, NULL, NULL), OOM_LINE_INVOKED);
        snprintf(buf, sizeof buf, FMT_KILLED, "Out of memory", 4242, "mem-hog", 8000000UL, 7900000UL, 4UL, 0UL, 0U,
                 15700UL, (short) 0);
        assert_int_equal(bundle_oom_line(buf, strlen(buf), &pid, &comm, &len), OOM_LINE_KILLED);
        assert_int_equal(pid, 4242);
        assert_int_equal(len, strlen("mem-hog"));
        assert_memory_equal(comm, "mem-hog", len);
        snprintf(buf, sizeof buf, FMT_KILLED, "Memory cgroup out of memory", 77, "java", 1UL, 2UL, 3UL, 4UL, 1000U,
                 5UL, (short) 900);
        assert_int_equal(bundle_oom_line(buf, strlen(buf), &pid, &comm, &len), OOM_LINE_KILLED);
        assert_int_equal(pid, 77);
        snprintf(buf, sizeof buf, FMT_KILLED, "Out of memory (oom_kill_allocating_task)", 5, "a", 1UL, 2UL, 3UL, 4UL,
                 0U, 5UL, (short) 0);
        assert_int_equal(bundle_oom_line(buf, strlen(buf), &pid, NULL, NULL), OOM_LINE_KILLED);
        assert_int_equal(pid, 5);
        /* A comm is any 15 bytes: blanks and parentheses included. */
        snprintf(buf, sizeof buf, FMT_KILLED_419, 31337, "x) total (y", 1UL, 2UL, 3UL, 4UL);
        assert_int_equal(bundle_oom_line(buf, strlen(buf), &pid, &comm, &len), OOM_LINE_KILLED);
        assert_int_equal(pid, 31337);
        assert_memory_equal(comm, "x) total (y", len);
        assert_int_equal(len, strlen("x) total (y"));
        snprintf(buf, sizeof buf, FMT_CHOSEN_419, "Out of memory", 100, "bash", 3U);
        assert_int_equal(bundle_oom_line(buf, strlen(buf), &pid, NULL, NULL), OOM_LINE_CHOSEN);
        assert_int_equal(pid, 100);
        /* RHEL 7's 3.10.0: ", UID %d," after the comm. */
        strcpy(buf, "Killed process 2120 (mysqld), UID 27, total-vm:1311004kB, anon-rss:207404kB, file-rss:0kB, "
                    "shmem-rss:0kB");
        assert_int_equal(bundle_oom_line(buf, strlen(buf), &pid, NULL, NULL), OOM_LINE_KILLED);
        assert_int_equal(pid, 2120);
        /* RHEL 6's 2.6.32: ", UID %d," before the comm. */
        strcpy(buf, "Killed process 12345, UID 48, (httpd) total-vm:1311004kB, anon-rss:207404kB, file-rss:0kB");
        assert_int_equal(bundle_oom_line(buf, strlen(buf), &pid, &comm, &len), OOM_LINE_KILLED);
        assert_int_equal(pid, 12345);
        assert_memory_equal(comm, "httpd", len);
        assert_int_equal(len, strlen("httpd"));
        assert_int_equal(bundle_oom_line("Killed process 12, UID 48, (y)", 30, NULL, NULL, NULL), OOM_LINE_NONE);
        assert_int_equal(bundle_oom_line("Killed process 12, UID x, (y) total-vm:1kB", 42, NULL, NULL, NULL),
                         OOM_LINE_NONE);
        snprintf(buf, sizeof buf, FMT_EXITING, "Out of memory", 9, "gone");
        assert_int_equal(bundle_oom_line(buf, strlen(buf), NULL, NULL, NULL), OOM_LINE_NONE);
        assert_int_equal(bundle_oom_line("oom_reaper: reaped process 4242 (mem-hog), now anon-rss:0kB", 59, NULL,
                                         NULL, NULL),
                         OOM_LINE_NONE);
        assert_int_equal(bundle_oom_line("Killed process x (y) total-vm:1kB", 33, NULL, NULL, NULL), OOM_LINE_NONE);
        assert_int_equal(bundle_oom_line("Killed process 12 (y", 20, NULL, NULL, NULL), OOM_LINE_NONE);
}

/* 6.1: the line that opens the kill names the task asking for memory; the victim comes after the
 * dumps, and a second kill's lines are not this event's. */
static void test_victim_after_invoked(void **state) {
        Line l[8] = {};
        OomVictim v;

        snprintf(l[0].text, sizeof l[0].text, "systemd-journald[312]: something before");
        snprintf(l[1].text, sizeof l[1].text, FMT_INVOKED, "stress-ng", 0x140dca, "GFP_HIGHUSER_MOVABLE", 0, (short) 0);
        l[1].trigger = true;
        snprintf(l[2].text, sizeof l[2].text, "Mem-Info:");
        /* A line of user space that looks like one is not the kernel's. */
        snprintf(l[3].text, sizeof l[3].text, FMT_KILLED, "Out of memory", 1, "forged", 1UL, 2UL, 3UL, 4UL, 0U, 5UL,
                 (short) 0);
        snprintf(l[4].text, sizeof l[4].text,
                 "oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,"
                 "task_memcg=/user.slice,task=mem-hog,pid=4242,uid=0");
        snprintf(l[5].text, sizeof l[5].text, FMT_KILLED, "Out of memory", 4242, "mem-hog", 8000000UL, 7900000UL, 4UL,
                 0UL, 0U, 15700UL, (short) 0);
        snprintf(l[6].text, sizeof l[6].text, FMT_INVOKED, "other", 0xcc0, "GFP_KERNEL", 0, (short) 0);
        snprintf(l[7].text, sizeof l[7].text, FMT_KILLED, "Out of memory", 5555, "second", 1UL, 2UL, 3UL, 4UL, 0U, 5UL,
                 (short) 0);
        for (size_t i = 0; i < ELEMENTSOF(l); i++)
                l[i].kernel = i != 0 && i != 3;
        v = scan(l, ELEMENTSOF(l));
        assert_true(v.found);
        assert_int_equal(v.pid, 4242);
        assert_string_equal(v.comm, "mem-hog");
        assert_int_equal(v.t_perf_ns, 1005);

        /* The kill opened by the event killed nobody (its task was already exiting): the next
         * kill's victim is not this event's. */
        snprintf(l[5].text, sizeof l[5].text, FMT_EXITING, "Out of memory", 4242, "mem-hog");
        v = scan(l, ELEMENTSOF(l));
        assert_false(v.found);
}

/* 4.19: the task chosen may give way to a child; only "Killed process" names the victim. Its
 * header rate limited away, the kill's first line is the event's. */
static void test_victim_sacrificed_child(void **state) {
        Line l[3] = {};
        OomVictim v;

        snprintf(l[0].text, sizeof l[0].text, FMT_CHOSEN_419, "Memory cgroup out of memory", 100, "bash", 3U);
        l[0].trigger = true;
        snprintf(l[1].text, sizeof l[1].text, FMT_KILLED_419, 101, "worker", 1UL, 2UL, 3UL, 4UL);
        snprintf(l[2].text, sizeof l[2].text, FMT_KILLED_419, 102, "group-member", 1UL, 2UL, 3UL, 4UL);
        for (size_t i = 0; i < ELEMENTSOF(l); i++)
                l[i].kernel = true;
        v = scan(l, ELEMENTSOF(l));
        assert_true(v.found);
        assert_int_equal(v.pid, 101);
        assert_string_equal(v.comm, "worker");
}

/* The kill line itself as the event's (dump_header() rate limited), and events that are no kill. */
static void test_victim_trigger_only(void **state) {
        Line l[2] = {};
        OomVictim v;

        snprintf(l[0].text, sizeof l[0].text, FMT_KILLED, "Out of memory", 4242, "mem-hog", 1UL, 2UL, 3UL, 4UL, 0U, 5UL,
                 (short) 0);
        l[0].trigger = l[0].kernel = l[1].kernel = true;
        snprintf(l[1].text, sizeof l[1].text, FMT_KILLED, "Out of memory", 4243, "later", 1UL, 2UL, 3UL, 4UL, 0U, 5UL,
                 (short) 0);
        v = scan(l, ELEMENTSOF(l));
        assert_true(v.found);
        assert_int_equal(v.pid, 4242);

        /* Another rule's event: a kill later in its log is not its victim. */
        snprintf(l[0].text, sizeof l[0].text, "ena 0000:00:05.0 eth0: Trigger reset is on");
        v = scan(l, ELEMENTSOF(l));
        assert_false(v.found);
        /* A user-space line as the event: no kill of the kernel's. */
        snprintf(l[0].text, sizeof l[0].text, FMT_INVOKED, "stress-ng", 0x140dca, "GFP_KERNEL", 0, (short) 0);
        l[0].kernel = false;
        v = scan(l, ELEMENTSOF(l));
        assert_false(v.found);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_lines),
                cmocka_unit_test(test_victim_after_invoked),
                cmocka_unit_test(test_victim_sacrificed_child),
                cmocka_unit_test(test_victim_trigger_only),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

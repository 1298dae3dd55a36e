/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The manifest's "threads": a named thread's process, from its main thread's samples in the slice
 * or else from /proc (a fixture tree here), once; a reused pid names nothing; a name shared by two
 * processes goes with the one that had most of its samples, main threads counted; threads named
 * as their process, baseline-only threads and main threads and the idle task are not listed; at
 * most INCIDENT_THREADS_MAX names.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/fileio.h"
#include "basic/time-util.h"
#include "incident/incident-threads.h"
#include "json-test-util.h"
#include "tests.h"

static char root[] = "/tmp/test-incident-threads-XXXXXX";

static int setup(void **state) {
        return test_dir_make(root);
}

static int teardown(void **state) {
        return test_dir_remove(root);
}

static void add(IncidentThreads *t, uint32_t pid, uint32_t tid, const char *comm, bool in_slice, unsigned n) {
        Sample s = { .pid = pid, .tid = tid, .comm = comm };

        for (unsigned i = 0; i < n; i++)
                assert_int_equal(incident_threads_add(t, &s, in_slice), 0);
}

/* The manifest's "threads" as parsed JSON (an object holding the array). */
static JsonValue *listing(const IncidentThreads *t) {
        JsonWriter w;

        json_writer_init(&w, false);
        json_begin_object(&w);
        incident_threads_json(t, &w);
        json_end_object(&w);
        return test_json_finish_parse(&w);
}

static const JsonValue *entry(const JsonValue *v, size_t i) {
        const JsonValue *a = json_object_get(v, "threads");

        assert_non_null(a);
        return i < json_length(a) ? json_array_get(a, i) : NULL;
}

static void assert_entry(const JsonValue *e, const char *comm, uint64_t pid, const char *process, uint64_t samples) {
        uint64_t u;

        assert_non_null(e);
        assert_string_equal(json_string_value(json_object_get(e, "comm")), comm);
        assert_true(json_u64_value(json_object_get(e, "pid"), &u));
        assert_int_equal(u, pid);
        assert_string_equal(json_string_value(json_object_get(e, "process")), process);
        assert_true(json_u64_value(json_object_get(e, "samples"), &u));
        assert_int_equal(u, samples);
}

static void proc_file(uint32_t pid, uint32_t tid, const char *comm) {
        char p[512];

        if (tid)
                snprintf(p, sizeof p, "%s/proc/%u/task/%u", root, pid, tid);
        else
                snprintf(p, sizeof p, "%s/proc/%u", root, pid);
        assert_int_equal(mkdir_p(p, 0755), 0);
        strcat(p, "/comm");
        FILE *f = fopen(p, "we");
        assert_non_null(f);
        fprintf(f, "%s\n", comm);
        fclose(f);
}

static void test_from_samples(void **state) {
        _cleanup_(incident_threads_freep) IncidentThreads *t = incident_threads_new();
        JsonValue *v;

        assert_non_null(t);
        add(t, 100, 100, "java", true, 1);          /* the main thread, once in the slice */
        add(t, 100, 101, "VM Thread", true, 30);    /* named: listed, raw */
        add(t, 100, 102, "java", true, 50);         /* named as its process: not listed */
        add(t, 100, 103, "C2 CompilerThre", false, 9); /* baseline only: not listed */
        add(t, 0, 0, "swapper/0", true, 90);        /* the idle task */
        add(t, 200, 201, "r3-wrk", true, 40);
        add(t, 200, 200, "r3-mt", true, 1);
        add(t, 300, 301, "orphan", true, 70);       /* no main thread, nothing in /proc */
        /* A main thread seen before the slice only: the pid may be another program's by now. */
        add(t, 600, 600, "cc1", false, 5);
        add(t, 600, 601, "pool-1", true, 20);
        /* A name that is mostly a process's own is that process's, though another has a thread
         * of that name. */
        add(t, 10, 10, "python3", true, 1000);
        add(t, 20, 20, "gunicorn", true, 1);
        add(t, 20, 21, "python3", true, 1);
        incident_threads_resolve(t, root, 0);
        v = listing(t);
        assert_entry(entry(v, 0), "r3-wrk", 200, "r3-mt", 40);
        assert_entry(entry(v, 1), "VM Thread", 100, "java", 30);
        assert_null(entry(v, 2));
        json_value_free(v);
}

static void test_from_proc(void **state) {
        _cleanup_(incident_threads_freep) IncidentThreads *t = incident_threads_new();
        JsonValue *v;

        assert_non_null(t);
        proc_file(400, 401, "burn-wrk");
        proc_file(400, 0, "burn");
        /* a pool whose sampled worker (701) is gone: another of its workers still has the name */
        proc_file(700, 702, "pool-wrk");
        proc_file(700, 0, "server");
        add(t, 700, 701, "pool-wrk", true, 10);
        /* pid 500 is another process now: its thread 501 has another name */
        proc_file(500, 501, "bash");
        proc_file(500, 0, "bash");
        add(t, 400, 401, "burn-wrk", true, 20);
        add(t, 500, 501, "gone-wrk", true, 25);
        incident_threads_resolve(t, root, 0);
        v = listing(t);
        assert_entry(entry(v, 0), "burn-wrk", 400, "burn", 20);
        assert_entry(entry(v, 1), "pool-wrk", 700, "server", 10);
        assert_null(entry(v, 2));
        json_value_free(v);

        /* Resolved once: a manifest written again after the process went says the same. */
        char p[512];
        snprintf(p, sizeof p, "rm -rf '%s/proc'", root);
        assert_int_equal(system(p), 0);
        incident_threads_resolve(t, root, 0);
        v = listing(t);
        assert_entry(entry(v, 0), "burn-wrk", 400, "burn", 20);
        json_value_free(v);
}

/* /proc/PID/stat of a process that started at the boot time start_s, in clock ticks as the kernel
 * writes it (do_task_stat(), fs/proc/array.c, Linux 6.12: the start time is field 22), its comm
 * with a blank and a ')' as a comm may have them. */
static void proc_stat(uint32_t pid, const char *comm, unsigned start_s) {
        char p[512];
        FILE *f;

        snprintf(p, sizeof p, "%s/proc/%u/stat", root, pid);
        f = fopen(p, "we");
        assert_non_null(f);
        fprintf(f, "%u (%s) S 1 %u %u 0 -1 4194560 120 0 0 0 3 1 0 0 20 0 3 0 %llu 9510912 512 "
                   "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
                pid, comm, pid, pid, (unsigned long long) start_s * (unsigned long long) sysconf(_SC_CLK_TCK));
        fclose(f);
}

/* A server whose main thread only waits (never sampled) and whose request threads, each named for
 * its request, are gone when the bundle is written: the server is the process sampled, for it
 * started before its threads' samples, and names them. A pid that another process took since (it
 * started after the last sample of the first) names nothing. */
static void test_threads_gone(void **state) {
        _cleanup_(incident_threads_freep) IncidentThreads *t = incident_threads_new();
        JsonValue *v;

        assert_non_null(t);
        for (uint32_t i = 0; i < 3; i++) {
                char name[16];
                Sample s = { .t_ns = (40 + i) * NSEC_PER_SEC, .pid = 1500, .tid = 1501 + i, .comm = name };

                snprintf(name, sizeof name, "rq-srv-%u", i);
                for (unsigned n = 0; n < 3 - i; n++)
                        assert_int_equal(incident_threads_add(t, &s, true), 0);
        }
        proc_file(1500, 1500, "rq srv)");
        proc_file(1500, 0, "rq srv)");
        proc_stat(1500, "rq srv)", 30);
        /* pid 1600's threads were sampled until 45 s; a process of that pid started at 50 s */
        Sample s = { .t_ns = 45 * NSEC_PER_SEC, .pid = 1600, .tid = 1601, .comm = "job-wrk" };
        assert_int_equal(incident_threads_add(t, &s, true), 0);
        proc_file(1600, 1600, "sleep");
        proc_file(1600, 0, "sleep");
        proc_stat(1600, "sleep", 50);
        incident_threads_resolve(t, root, 0);
        v = listing(t);
        assert_entry(entry(v, 0), "rq-srv-0", 1500, "rq srv)", 3);
        assert_entry(entry(v, 1), "rq-srv-1", 1500, "rq srv)", 2);
        assert_entry(entry(v, 2), "rq-srv-2", 1500, "rq srv)", 1);
        assert_null(entry(v, 3));
        json_value_free(v);
}

/* The same pid, the perf clock 10 s behind the boot time: the process of 1600 started at 40 s of
 * the samples' clock, before their last, and is the one sampled. */
static void test_threads_gone_clock(void **state) {
        _cleanup_(incident_threads_freep) IncidentThreads *t = incident_threads_new();
        Sample s = { .t_ns = 45 * NSEC_PER_SEC, .pid = 1600, .tid = 1601, .comm = "job-wrk" };
        JsonValue *v;

        assert_non_null(t);
        assert_int_equal(incident_threads_add(t, &s, true), 0);
        proc_file(1600, 1600, "sleep");
        proc_file(1600, 0, "sleep");
        proc_stat(1600, "sleep", 50);
        incident_threads_resolve(t, root, 10 * (int64_t) NSEC_PER_SEC);
        v = listing(t);
        assert_entry(entry(v, 0), "job-wrk", 1600, "sleep", 1);
        assert_null(entry(v, 1));
        json_value_free(v);
}

/* A main thread sampled only between its fork and its exec bore its parent's name: /proc, where
 * the process still has the thread, says what it is now; where it is gone, the samples' name
 * stands. */
static void test_exec_after_sample(void **state) {
        _cleanup_(incident_threads_freep) IncidentThreads *t = incident_threads_new();
        JsonValue *v;

        assert_non_null(t);
        add(t, 800, 800, "run-tests.sh", true, 1); /* the shell's child, before its exec */
        add(t, 800, 801, "pool-0", true, 30);
        add(t, 800, 802, "pool-1", true, 20);
        proc_file(800, 801, "pool-0");
        proc_file(800, 802, "pool-1");
        proc_file(800, 0, "pool");
        add(t, 900, 900, "sh", true, 1); /* exited before the bundle */
        add(t, 900, 901, "gone-0", true, 10);
        incident_threads_resolve(t, root, 0);
        v = listing(t);
        assert_entry(entry(v, 0), "pool-0", 800, "pool", 30);
        assert_entry(entry(v, 1), "pool-1", 800, "pool", 20);
        assert_entry(entry(v, 2), "gone-0", 900, "sh", 10);
        assert_null(entry(v, 3));
        json_value_free(v);
}

/* Names known from the slice's main threads cost no lookup: hundreds of single-threaded
 * processes ranking above it leave a named thread's /proc lookup its turn. */
static void test_budget(void **state) {
        _cleanup_(incident_threads_freep) IncidentThreads *t = incident_threads_new();
        JsonValue *v;
        char name[16];

        assert_non_null(t);
        for (unsigned i = 0; i < 300; i++) {
                snprintf(name, sizeof name, "proc-%u", i);
                add(t, 1000 + i, 1000 + i, name, true, 10);
        }
        proc_file(900, 901, "svc-wrk");
        proc_file(900, 0, "svc");
        add(t, 900, 901, "svc-wrk", true, 5);
        incident_threads_resolve(t, root, 0);
        v = listing(t);
        assert_entry(entry(v, 0), "svc-wrk", 900, "svc", 5);
        assert_null(entry(v, 1));
        json_value_free(v);
}

static void test_shared_name(void **state) {
        _cleanup_(incident_threads_freep) IncidentThreads *t = incident_threads_new();
        JsonValue *v;

        assert_non_null(t);
        add(t, 10, 10, "postgres", true, 1);
        add(t, 20, 20, "mysqld", true, 1);
        add(t, 10, 11, "worker", true, 5);
        add(t, 20, 21, "worker", true, 8);
        add(t, 20, 22, "worker", true, 3); /* the same name in the same process adds up */
        incident_threads_resolve(t, root, 0);
        v = listing(t);
        assert_entry(entry(v, 0), "worker", 20, "mysqld", 11);
        assert_null(entry(v, 1));
        json_value_free(v);
}

static void test_bounded(void **state) {
        _cleanup_(incident_threads_freep) IncidentThreads *t = incident_threads_new();
        JsonValue *v;
        char name[16];

        assert_non_null(t);
        add(t, 7, 7, "app", true, 1);
        for (unsigned i = 0; i < 2 * INCIDENT_THREADS_MAX; i++) {
                snprintf(name, sizeof name, "wrk-%u", i);
                add(t, 7, 8 + i, name, true, 1 + i);
        }
        incident_threads_resolve(t, root, 0);
        v = listing(t);
        assert_non_null(entry(v, INCIDENT_THREADS_MAX - 1));
        assert_null(entry(v, INCIDENT_THREADS_MAX));
        /* most samples first */
        snprintf(name, sizeof name, "wrk-%u", 2 * INCIDENT_THREADS_MAX - 1);
        assert_entry(entry(v, 0), name, 7, "app", 2 * INCIDENT_THREADS_MAX);
        json_value_free(v);
}

/* "renames": a process that renamed itself in the slice (PR_SET_NAME, prctl(2); the kernel's
 * __set_task_comm(), fs/exec.c, Linux 6.12, changes the comm its later samples carry) had its
 * samples under both names; its former name is listed with its name now, where most of that
 * name's samples were its own. A name another process had most of (a shell's, whose child ran
 * under it until its exec) and a thread that renamed itself (listed in "threads") are not. */
static void test_renames(void **state) {
        _cleanup_(incident_threads_freep) IncidentThreads *t = incident_threads_new();
        const JsonValue *a, *e;
        JsonValue *v;
        uint64_t u;

        assert_non_null(t);
        add(t, 50, 50, "rn-old", true, 40); /* then PR_SET_NAME */
        add(t, 50, 50, "rn-new", true, 45);
        add(t, 60, 60, "bash", true, 30);   /* the shell */
        add(t, 61, 61, "bash", true, 2);    /* its child, then exec */
        add(t, 61, 61, "make", true, 20);
        add(t, 70, 70, "svc", true, 5);
        add(t, 70, 71, "svc", true, 3);     /* a thread, then renamed */
        add(t, 70, 71, "svc-io", true, 9);
        add(t, 80, 80, "two", true, 10);    /* half of a name's samples is not most */
        add(t, 81, 81, "two", true, 10);
        add(t, 80, 80, "two-b", true, 1);
        add(t, 90, 90, "mt-old", true, 10); /* its main thread, then PR_SET_NAME; */
        add(t, 90, 91, "mt-old", true, 15); /* its worker keeps the name it was made with */
        add(t, 90, 90, "mt-new", true, 30);
        incident_threads_resolve(t, root, 0);
        v = listing(t);
        a = json_object_get(v, "renames");
        assert_non_null(a);
        assert_int_equal(json_length(a), 2);
        e = json_array_get(a, 0);
        assert_string_equal(json_string_value(json_object_get(e, "comm")), "rn-old");
        assert_true(json_u64_value(json_object_get(e, "pid"), &u));
        assert_int_equal(u, 50);
        assert_string_equal(json_string_value(json_object_get(e, "process")), "rn-new");
        assert_true(json_u64_value(json_object_get(e, "samples"), &u));
        assert_int_equal(u, 40);
        /* the multi-threaded one, whose last sample of the name was its worker's */
        e = json_array_get(a, 1);
        assert_string_equal(json_string_value(json_object_get(e, "comm")), "mt-old");
        assert_true(json_u64_value(json_object_get(e, "pid"), &u));
        assert_int_equal(u, 90);
        assert_string_equal(json_string_value(json_object_get(e, "process")), "mt-new");
        assert_true(json_u64_value(json_object_get(e, "samples"), &u));
        assert_int_equal(u, 25);
        /* and no thread of rn-new's; mt-new's worker is its thread still */
        assert_entry(entry(v, 0), "mt-old", 90, "mt-new", 25);
        assert_entry(entry(v, 1), "svc-io", 70, "svc", 9);
        assert_null(entry(v, 2));
        json_value_free(v);
}

/* "processes": a shell loop's children, each a process of its own pid (fork(): copy_process() ->
 * alloc_pid(), kernel/fork.c, Linux 6.12) that runs `true` for a few milliseconds, all under one
 * comm; the count is of pids, not of threads (a thread shares its process's pid), in the slice
 * only, and names of one process are not listed. */
static void test_processes(void **state) {
        _cleanup_(incident_threads_freep) IncidentThreads *t = incident_threads_new();
        const JsonValue *a, *e;
        JsonValue *v;
        uint64_t u;

        assert_non_null(t);
        for (uint32_t pid = 1000; pid < 1812; pid++)
                add(t, pid, pid, "true", true, 1 + pid % 2);
        add(t, 900, 900, "sh", true, 30);     /* the loop */
        add(t, 901, 901, "sh", true, 2);      /* a child before its exec */
        add(t, 100, 100, "java", true, 500);  /* one process of many threads */
        add(t, 100, 101, "java", true, 500);
        add(t, 100, 102, "java", true, 500);
        add(t, 200, 200, "cron", false, 9);   /* baseline only */
        add(t, 201, 201, "cron", false, 9);
        incident_threads_resolve(t, root, 0);
        v = listing(t);
        a = json_object_get(v, "processes");
        assert_non_null(a);
        assert_int_equal(json_length(a), 2);
        e = json_array_get(a, 0);
        assert_string_equal(json_string_value(json_object_get(e, "comm")), "true");
        assert_true(json_u64_value(json_object_get(e, "processes"), &u));
        assert_int_equal(u, 812);
        e = json_array_get(a, 1);
        assert_string_equal(json_string_value(json_object_get(e, "comm")), "sh");
        assert_true(json_u64_value(json_object_get(e, "processes"), &u));
        assert_int_equal(u, 2);
        assert_true(json_u64_value(json_object_get(e, "samples"), &u));
        assert_int_equal(u, 32);
        json_value_free(v);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_from_samples),
                cmocka_unit_test(test_from_proc),
                cmocka_unit_test(test_exec_after_sample),
                cmocka_unit_test(test_budget),
                cmocka_unit_test(test_shared_name),
                cmocka_unit_test(test_bounded),
                cmocka_unit_test(test_renames),
                cmocka_unit_test(test_processes),
                cmocka_unit_test(test_threads_gone),
                cmocka_unit_test(test_threads_gone_clock),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}

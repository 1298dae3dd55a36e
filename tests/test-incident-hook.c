/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bundle hook runner with real processes on a real sd-event loop: the documented environment,
 * the bound on running and queued hooks (excess dropped and counted), the time limit (SIGTERM,
 * then SIGKILL for a hook that ignores it), and failures counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic/fileio.h"
#include "basic/time-util.h"
#include "incident/incident-hook.h"
#include "tests.h"

static char tmpdir[] = "/tmp/test-incident-hook-XXXXXX";

static int setup(void **state) {
        assert_non_null(mkdtemp(tmpdir));
        return 0;
}

static int teardown(void **state) {
        (void) rm_rf_at(AT_FDCWD, tmpdir, 4);
        return 0;
}

static IncidentHookBundle bundle(const char *id) {
        return (IncidentHookBundle) {
                .path = "/var/lib/tprof/incidents/x", .id = id, .short_id = "abcd1234", .rule = "ena-reset",
                .host = "node-7", .status = "complete", .state_dir = "/var/lib/tprof",
                .message = "ena 0000:00:05.0 eth0: Reset\tindication", .trigger_realtime_usec = 1700000000123456,
                .trigger_perf_ns = 987654321,
        };
}

/* Runs the loop until no hook runs or waits, at most limit_usec. */
static void run_until_idle(sd_event *e, IncidentHook *h, uint64_t limit_usec) {
        uint64_t end = now_usec(CLOCK_MONOTONIC) + limit_usec;
        IncidentHookStats st;

        for (;;) {
                incident_hook_get_stats(h, &st);
                if (st.running == 0 && st.queued == 0)
                        return;
                assert_true(now_usec(CLOCK_MONOTONIC) < end);
                assert_true(sd_event_run(e, 100 * USEC_PER_MSEC) >= 0);
        }
}

static void test_hook_gets_the_documented_environment(void **state) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_(incident_hook_freep) IncidentHook *h = NULL;
        _cleanup_free_ char *script = NULL, *out = NULL, *text = NULL;
        IncidentHookStats st;

        assert_true(asprintf(&out, "%s/env", tmpdir) > 0);
        assert_true(asprintf(&script, "env | grep ^TPROF_ | sort > %s; echo \"arg=$0 $1\"", out) > 0);
        char *argv[] = { (char *) "/bin/sh", (char *) "-c", script, (char *) "first", (char *) "second", NULL };
        IncidentHookOptions o = { .argv = argv };

        /* The daemon's own value of a bundle variable is replaced; settings for the hook
         * (contrib/hooks: TPROF_SHIP_WINDOWS=0 in tprofd's environment) reach it. */
        assert_int_equal(setenv("TPROF_BUNDLE_ID", "stale", 1), 0);
        assert_int_equal(setenv("TPROF_SHIP_WINDOWS", "0", 1), 0);
        assert_int_equal(sd_event_new(&e), 0);
        assert_int_equal(incident_hook_new(e, 0, &o, &h), 0);
        IncidentHookBundle b = bundle("20261123T000000Z-ena-reset-abcd1234");
        assert_int_equal(incident_hook_submit(h, &b), 0);
        run_until_idle(e, h, 10 * USEC_PER_SEC);
        incident_hook_get_stats(h, &st);
        assert_int_equal(st.started, 1);
        assert_int_equal(st.succeeded, 1);

        assert_int_equal(read_full_file(out, 65536, &text, NULL), 0);
        assert_non_null(strstr(text, "TPROF_BUNDLE_ID=20261123T000000Z-ena-reset-abcd1234\n"));
        assert_non_null(strstr(text, "TPROF_BUNDLE_PATH=/var/lib/tprof/incidents/x\n"));
        assert_non_null(strstr(text, "TPROF_SHORT_ID=abcd1234\n"));
        assert_non_null(strstr(text, "TPROF_RULE=ena-reset\n"));
        assert_non_null(strstr(text, "TPROF_HOST=node-7\n"));
        assert_non_null(strstr(text, "TPROF_STATUS=complete\n"));
        assert_non_null(strstr(text, "TPROF_STATE_DIR=/var/lib/tprof\n"));
        assert_non_null(strstr(text, "TPROF_TRIGGER_TIME=2023-11-14T22:13:20.123456Z\n"));
        assert_non_null(strstr(text, "TPROF_TRIGGER_REALTIME_USEC=1700000000123456\n"));
        assert_non_null(strstr(text, "TPROF_TRIGGER_PERF_NS=987654321\n"));
        /* One printable line: the tab is escaped as the log escapes it. */
        assert_non_null(strstr(text, "TPROF_TRIGGER_MESSAGE=ena 0000:00:05.0 eth0: Reset\\x09indication\n"));
        assert_non_null(strstr(text, "TPROF_SHIP_WINDOWS=0\n"));
        assert_null(strstr(text, "stale"));
        assert_int_equal(unsetenv("TPROF_BUNDLE_ID"), 0);
        assert_int_equal(unsetenv("TPROF_SHIP_WINDOWS"), 0);
}

static void test_running_and_queued_hooks_are_bounded(void **state) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_(incident_hook_freep) IncidentHook *h = NULL;
        char *argv[] = { (char *) "/bin/sh", (char *) "-c", (char *) "sleep 0.3", NULL };
        IncidentHookOptions o = { .argv = argv, .max_running = 1, .max_queued = 2 };
        IncidentHookStats st;
        IncidentHookBundle b = bundle("b");
        IncidentHookBundle q = bundle("q"), d = bundle("d");

        assert_int_equal(sd_event_new(&e), 0);
        assert_int_equal(incident_hook_new(e, 0, &o, &h), 0);
        assert_int_equal(incident_hook_submit(h, &b), 0);        /* runs */
        assert_int_equal(incident_hook_submit(h, &q), 0);        /* queued */
        assert_int_equal(incident_hook_submit(h, &b), 0);        /* queued */
        assert_int_equal(incident_hook_submit(h, &d), -ENOBUFS); /* dropped */
        assert_int_equal(incident_hook_submit(h, &b), -ENOBUFS); /* dropped */
        /* The bundles of running and waiting hooks are held (the limits pass them over). */
        assert_true(incident_hook_holds(h, "b"));
        assert_true(incident_hook_holds(h, "q"));
        assert_false(incident_hook_holds(h, "d"));
        assert_false(incident_hook_holds(h, "x"));
        incident_hook_get_stats(h, &st);
        assert_int_equal(st.running, 1);
        assert_int_equal(st.queued, 2);
        assert_int_equal(st.dropped, 2);

        run_until_idle(e, h, 20 * USEC_PER_SEC);
        incident_hook_get_stats(h, &st);
        assert_int_equal(st.started, 3);
        assert_int_equal(st.succeeded, 3);
        assert_int_equal(st.dropped, 2);
        assert_false(incident_hook_holds(h, "b"));
        assert_false(incident_hook_holds(h, "q"));
}

static void test_hook_past_its_limit_is_terminated_then_killed(void **state) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_(incident_hook_freep) IncidentHook *h = NULL;
        /* The second ignores SIGTERM: only SIGKILL, HOOK_KILL_USEC later, ends it. */
        char *polite[] = { (char *) "/bin/sleep", (char *) "30", NULL };
        char *stubborn[] = { (char *) "/bin/sh", (char *) "-c", (char *) "trap '' TERM; sleep 30; sleep 30", NULL };
        IncidentHookOptions o = { .argv = polite, .timeout_usec = 200 * USEC_PER_MSEC };
        IncidentHookBundle b = bundle("slow");
        IncidentHookStats st;
        uint64_t t0;

        assert_int_equal(sd_event_new(&e), 0);
        assert_int_equal(incident_hook_new(e, 0, &o, &h), 0);
        t0 = now_usec(CLOCK_MONOTONIC);
        assert_int_equal(incident_hook_submit(h, &b), 0);
        run_until_idle(e, h, 10 * USEC_PER_SEC);
        assert_true(now_usec(CLOCK_MONOTONIC) - t0 < 10 * USEC_PER_SEC);
        incident_hook_get_stats(h, &st);
        assert_int_equal(st.timed_out, 1);

        o.argv = stubborn;
        assert_int_equal(incident_hook_set_options(h, &o), 0);
        t0 = now_usec(CLOCK_MONOTONIC);
        assert_int_equal(incident_hook_submit(h, &b), 0);
        run_until_idle(e, h, 20 * USEC_PER_SEC);
        assert_true(now_usec(CLOCK_MONOTONIC) - t0 >= HOOK_KILL_USEC);
        incident_hook_get_stats(h, &st);
        assert_int_equal(st.timed_out, 2);
}

static bool process_gone(pid_t pid) {
        _cleanup_free_ char *path = NULL, *stat = NULL;
        const char *p;

        assert_true(asprintf(&path, "/proc/%d/stat", (int) pid) > 0);
        if (read_full_file(path, 4096, &stat, NULL) < 0)
                return true;
        p = strrchr(stat, ')');
        return p && p[1] == ' ' && p[2] == 'Z'; /* dead, not yet reaped by its new parent */
}

/* The hook's process group outlives the hook: what ignores SIGTERM there gets the SIGKILL too. */
static void test_group_left_behind_is_killed(void **state) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_(incident_hook_freep) IncidentHook *h = NULL;
        _cleanup_free_ char *pidfile = NULL, *script = NULL, *text = NULL;
        IncidentHookBundle b = bundle("straggler");
        IncidentHookStats st;
        uint64_t t0;

        assert_true(asprintf(&pidfile, "%s/straggler", tmpdir) > 0);
        assert_true(asprintf(&script, "(trap '' TERM; exec sleep 30) & echo $! >%s; sleep 30",
                             pidfile) > 0);
        char *argv[] = { (char *) "/bin/sh", (char *) "-c", script, NULL };
        IncidentHookOptions o = { .argv = argv, .timeout_usec = 300 * USEC_PER_MSEC };

        assert_int_equal(sd_event_new(&e), 0);
        assert_int_equal(incident_hook_new(e, 0, &o, &h), 0);
        t0 = now_usec(CLOCK_MONOTONIC);
        assert_int_equal(incident_hook_submit(h, &b), 0);
        run_until_idle(e, h, 20 * USEC_PER_SEC);
        assert_true(now_usec(CLOCK_MONOTONIC) - t0 >= HOOK_KILL_USEC);
        incident_hook_get_stats(h, &st);
        assert_int_equal(st.timed_out, 1);
        assert_int_equal(read_full_file(pidfile, 64, &text, NULL), 0);
        pid_t pid = (pid_t) atoi(text);
        assert_true(pid > 1);
        for (int i = 0; i < 50 && !process_gone(pid); i++)
                usleep(20000);
        if (!process_gone(pid)) {
                (void) kill(pid, SIGKILL);
                fail_msg("PID %d of the hook's group outlived its SIGKILL", (int) pid);
        }
}

static void test_failures_are_counted(void **state) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_(incident_hook_freep) IncidentHook *h = NULL;
        char *failing[] = { (char *) "/bin/sh", (char *) "-c", (char *) "echo broken >&2; exit 3", NULL };
        char *missing[] = { (char *) "/nonexistent/hook", NULL };
        IncidentHookOptions o = { .argv = failing };
        IncidentHookBundle b = bundle("f");
        IncidentHookStats st;

        assert_int_equal(sd_event_new(&e), 0);
        assert_int_equal(incident_hook_new(e, 0, &o, &h), 0);
        assert_int_equal(incident_hook_submit(h, &b), 0);
        run_until_idle(e, h, 10 * USEC_PER_SEC);
        o.argv = missing;
        assert_int_equal(incident_hook_set_options(h, &o), 0);
        assert_int_equal(incident_hook_submit(h, &b), 0); /* logged, counted */
        run_until_idle(e, h, 10 * USEC_PER_SEC);
        incident_hook_get_stats(h, &st);
        assert_int_equal(st.failed, 2);
        assert_int_equal(st.succeeded, 0);

        /* No hook configured: nothing runs. */
        o.argv = NULL;
        assert_int_equal(incident_hook_set_options(h, &o), 0);
        assert_false(incident_hook_enabled(h));
        assert_int_equal(incident_hook_submit(h, &b), 0);
        incident_hook_get_stats(h, &st);
        assert_int_equal(st.running + st.queued, 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_hook_gets_the_documented_environment),
                cmocka_unit_test(test_running_and_queued_hooks_are_bounded),
                cmocka_unit_test(test_hook_past_its_limit_is_terminated_then_killed),
                cmocka_unit_test(test_group_left_behind_is_killed),
                cmocka_unit_test(test_failures_are_counted),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}

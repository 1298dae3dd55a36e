/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bundle worker: the event loop keeps running while a job works, done() comes back on the
 * event loop's thread, one job at a time, and stopping waits for the job.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "basic/fileio.h"
#include "basic/time-util.h"
#include "incident/incident-worker.h"
#include "tests.h"

typedef struct Job {
        unsigned work_ms;
        pthread_t worked_on, done_on;
        bool worked, done;
        unsigned ticks_while_working; /* timer ticks the event loop ran while the job worked */
        unsigned *ticks;
} Job;

static void work(void *p) {
        Job *j = p;
        unsigned before = __atomic_load_n(j->ticks, __ATOMIC_ACQUIRE);

        j->worked_on = pthread_self();
        usleep(j->work_ms * 1000);
        j->ticks_while_working = __atomic_load_n(j->ticks, __ATOMIC_ACQUIRE) - before;
        j->worked = true;
}

static void on_done(void *p, void *userdata) {
        Job *j = p;
        sd_event *e = userdata;

        j->done_on = pthread_self();
        j->done = true;
        if (e)
                (void) sd_event_exit(e, 0);
}

typedef struct Ticker {
        unsigned ticks;
} Ticker;

static void on_done_nothing(void *p, void *userdata) {
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata) {
        Ticker *t = userdata;

        __atomic_add_fetch(&t->ticks, 1, __ATOMIC_RELEASE);
        (void) sd_event_source_set_time_relative(s, 10 * USEC_PER_MSEC);
        return 0;
}

static void test_loop_runs_while_working(void **state) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_(incident_worker_freep) IncidentWorker *w = NULL;
        _cleanup_(sd_event_source_unrefp) sd_event_source *tick = NULL;
        Ticker t = {};
        Job j = { .work_ms = 500, .ticks = &t.ticks };

        assert_int_equal(sd_event_new(&e), 0);
        assert_int_equal(incident_worker_new(e, 0, on_done, e, &w), 0);
        assert_int_equal(sd_event_add_time_relative(e, &tick, CLOCK_MONOTONIC, 10 * USEC_PER_MSEC, 1, on_tick, &t), 0);
        assert_int_equal(sd_event_source_set_enabled(tick, SD_EVENT_ON), 0);

        assert_false(incident_worker_busy(w));
        assert_int_equal(incident_worker_start(w, work, &j), 0);
        assert_true(incident_worker_busy(w));
        assert_int_equal(incident_worker_start(w, work, &j), -EBUSY);
        assert_int_equal(sd_event_loop(e), 0);

        assert_true(j.worked && j.done);
        assert_false(incident_worker_busy(w));
        assert_false(pthread_equal(j.worked_on, pthread_self()));
        assert_true(pthread_equal(j.done_on, pthread_self()));
        /* 500 ms of work, a tick every 10 ms: even a starved loop ticks a few times; a loop blocked
         * by the work would not tick at all. */
        assert_true(j.ticks_while_working >= 2);
}

static void test_wait_calls_done_now(void **state) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_(incident_worker_freep) IncidentWorker *w = NULL;
        unsigned ticks = 0;
        Job j = { .work_ms = 100, .ticks = &ticks };

        assert_int_equal(sd_event_new(&e), 0);
        assert_int_equal(incident_worker_new(e, 0, on_done, NULL, &w), 0);
        assert_int_equal(incident_worker_start(w, work, &j), 0);
        incident_worker_wait(w);
        assert_true(j.worked && j.done);
        assert_true(pthread_equal(j.done_on, pthread_self()));
        assert_false(incident_worker_busy(w));
        /* The eventfd was drained: the loop has nothing to dispatch for it. */
        assert_int_equal(sd_event_run(e, 0), 0);

        /* And it takes the next job. */
        Job k = { .work_ms = 10, .ticks = &ticks };
        assert_int_equal(incident_worker_start(w, work, &k), 0);
        incident_worker_wait(w);
        assert_true(k.worked && k.done);
}

static void test_free_waits_without_done(void **state) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        IncidentWorker *w = NULL;
        unsigned ticks = 0;
        Job j = { .work_ms = 100, .ticks = &ticks };

        assert_int_equal(sd_event_new(&e), 0);
        assert_int_equal(incident_worker_new(e, 0, on_done, NULL, &w), 0);
        assert_int_equal(incident_worker_start(w, work, &j), 0);
        incident_worker_free(w);
        assert_true(j.worked);
        assert_false(j.done);
}

/* A job that allocated much and freed it, below a block it keeps (the arena's top cannot shrink):
 * once it is done the pages are back, not resident until the next job. */
static void *pin;
static void work_allocating(void *p) {
        enum { BLOCKS = 49152 }; /* 48 MiB in 1 KiB blocks: below malloc's mmap threshold */
        char **v = calloc(BLOCKS, sizeof *v);

        assert_non_null(v);
        for (size_t i = 0; i < BLOCKS; i++) {
                v[i] = malloc(1000);
                assert_non_null(v[i]);
                memset(v[i], 1, 1000);
        }
        pin = malloc(64);
        for (size_t i = 0; i < BLOCKS; i++)
                free(v[i]);
        free(v);
}

static void test_freed_memory_goes_back(void **state) {
#if defined(__SANITIZE_ADDRESS__) || !defined(__GLIBC__)
        skip(); /* another allocator's pages */
#else
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_(incident_worker_freep) IncidentWorker *w = NULL;
        uint64_t before, after;

        assert_int_equal(sd_event_new(&e), 0);
        assert_int_equal(incident_worker_new(e, 0, on_done_nothing, NULL, &w), 0);
        assert_int_equal(self_rss_bytes(&before), 0);
        assert_int_equal(incident_worker_start(w, work_allocating, NULL), 0);
        incident_worker_wait(w);
        assert_int_equal(self_rss_bytes(&after), 0);
        free(pin);
        assert_true(after < before + 16 * 1024 * 1024);
#endif
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_loop_runs_while_working),
                cmocka_unit_test(test_wait_calls_done_now),
                cmocka_unit_test(test_free_waits_without_done),
                cmocka_unit_test(test_freed_memory_goes_back),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

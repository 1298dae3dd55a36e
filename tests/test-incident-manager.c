/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The incident manager on a real event loop, ring and log context: when an incident's deadline
 * fires while the clock mapping its owner keeps up to date moves under it, and the time a bundle of
 * another boot's entry is given. No bundle is published here (that would announce it in the host's
 * journal): the owner's flush, which a deadline calls first, notes the time and takes the staged
 * folder's windows/ away, so the bundle is discarded right after.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "basic/time-util.h"
#include "bundle/bundle-format.h"
#include "incident/incident-manager.h"
#include "store-test-util.h"
#include "tests.h"

static char dir[] = "/tmp/test-incident-manager-XXXXXX";

static int setup(void **state) {
        return test_dir_make(dir);
}

static int teardown(void **state) {
        return test_dir_remove(dir);
}

#define LEND(s) ((char *) (s))

typedef struct Harness {
        char state_dir[256];
        sd_event *event;
        RingStore *ring;
        LogContext *log_context;
        ClockMap clock;
        IncidentManager *im;
        bool flushed;
        uint64_t flushed_perf_ns; /* the perf clock by the mapping of that moment */
} Harness;

/* The owner's flush at a deadline: where the perf clock is now, by the mapping as it is now. */
static void on_flush(void *userdata) {
        Harness *h = userdata;
        char cmd[512];
        int r;

        h->flushed = true;
        h->flushed_perf_ns = clock_map_mono_to_perf(&h->clock, now_nsec(CLOCK_MONOTONIC));
        snprintf(cmd, sizeof cmd, "rm -rf '%s'/incidents/" BUNDLE_TMP_PREFIX "*/" BUNDLE_WINDOWS_DIR, h->state_dir);
        r = system(cmd);
        assert_int_equal(r, 0);
}

static void harness_new(Harness *h, const char *name) {
        static const IncidentHost host = { "testhost", "0123456789abcdef0123456789abcdef", "6.1.0-test" };
        static const IncidentProfile profile = { "cpu-clock", 97, 2 };
        WindowHeaderInfo info = test_header_info();
        RingOptions ro = { .window_usec = 3600 * USEC_PER_SEC };
        char path[300];

        *h = (Harness) {};
        snprintf(h->state_dir, sizeof h->state_dir, "%s/%s", dir, name);
        assert_int_equal(mkdir(h->state_dir, 0750), 0);
        snprintf(path, sizeof path, "%s/incidents", h->state_dir);
        assert_int_equal(mkdir(path, 0750), 0);
        snprintf(path, sizeof path, "%s/ring", h->state_dir);
        assert_int_equal(ring_store_open(path, &ro, &info, &h->ring), 0);
        assert_int_equal(log_context_new(NULL, &h->log_context), 0);
        assert_int_equal(sd_event_new(&h->event), 0);
        h->clock = (ClockMap) {
                .method = CLOCK_MAP_PERF_BRACKET,
                .realtime_minus_mono_ns = (int64_t) (now_nsec(CLOCK_REALTIME) - now_nsec(CLOCK_MONOTONIC)),
                .measured_mono_ns = now_nsec(CLOCK_MONOTONIC),
        };

        IncidentManagerOptions o = {
                .event = h->event,
                .state_dir = h->state_dir,
                .ring = h->ring,
                .log_context = h->log_context,
                .clock = &h->clock,
                .host = host,
                .profile = profile,
                .limits = { .max_bundles = 100, .max_bundle_bytes = UINT64_C(1) << 30 },
                .flush = on_flush,
                .userdata = h,
        };
        assert_int_equal(incident_manager_new(&o, &h->im), 0);
}

static void harness_free(Harness *h) {
        h->im = incident_manager_free(h->im);
        h->ring = ring_store_free(h->ring);
        h->log_context = log_context_free(h->log_context);
        h->event = sd_event_unref(h->event);
}

/* Runs the loop until a deadline has flushed, at most limit_usec. */
static void harness_run(Harness *h, uint64_t limit_usec) {
        uint64_t end = now_usec(CLOCK_MONOTONIC) + limit_usec;

        while (!h->flushed && now_usec(CLOCK_MONOTONIC) < end)
                assert_true(sd_event_run(h->event, 50 * USEC_PER_MSEC) >= 0);
}

static const IncidentRule kernel_rule = {
        .name = LEND("hung-task"),
        .source = LEND("kernel"),
        .origin = LEND("kernel"),
        .match = LEND("blocked for more than"),
        .before_usec = USEC_PER_SEC,
        .after_usec = 500 * USEC_PER_MSEC,
        .cooldown_usec = 600 * USEC_PER_SEC,
};

static void match_kmsg(Harness *h, uint64_t t_ns) {
        static const char msg[] = "INFO: task kworker/0:1:12 blocked for more than 122 seconds.";
        LogRecord rec = LOG_RECORD_NULL;

        rec.source = LOG_SOURCE_KMSG;
        rec.kernel_origin = true;
        rec.priority = 3;
        rec.facility = 0;
        rec.seq = 1;
        rec.t_ns = t_ns;
        rec.source_usec = t_ns / NSEC_PER_USEC;
        rec.message = rec.message_escaped = msg;
        rec.message_len = rec.message_escaped_len = sizeof msg - 1;
        assert_int_equal(incident_manager_match(h->im, &kernel_rule, &rec, NULL, 0), 0);
}

/* The perf clock ran 100 s behind CLOCK_MONOTONIC when the hung task was logged (the host had been
 * paused), and the mapping the owner measured before did not know yet: by that old mapping t + after
 * was long past. The mapping measured since is the one to go by: the deadline waits until t + after
 * has been sampled, not until a time an outdated mapping gave. */
static void test_deadline_follows_a_mapping_measured_after_the_match(void **state) {
        Harness h;
        uint64_t t;

        harness_new(&h, "early");
        t = now_nsec(CLOCK_MONOTONIC) - 100 * NSEC_PER_SEC;
        match_kmsg(&h, t);
        h.clock.perf_minus_mono_ns = -100 * (int64_t) NSEC_PER_SEC;
        h.clock.measured_mono_ns = now_nsec(CLOCK_MONOTONIC);

        harness_run(&h, 10 * USEC_PER_SEC);
        assert_true(h.flushed);
        assert_true(h.flushed_perf_ns >= t + kernel_rule.after_usec * NSEC_PER_USEC);
        harness_free(&h);
}

/* The other way: the perf clock ran 100 s ahead, the old mapping put t + after 100 s away. The
 * event was logged before it was read, so t + after has been sampled once `after` has passed;
 * the deadline does not wait for what an outdated mapping says. */
static void test_deadline_is_not_held_back_by_an_outdated_mapping(void **state) {
        Harness h;
        uint64_t t;

        harness_new(&h, "late");
        t = now_nsec(CLOCK_MONOTONIC) + 100 * NSEC_PER_SEC;
        match_kmsg(&h, t);
        h.clock.perf_minus_mono_ns = 100 * (int64_t) NSEC_PER_SEC;
        h.clock.measured_mono_ns = now_nsec(CLOCK_MONOTONIC);

        harness_run(&h, 10 * USEC_PER_SEC);
        assert_true(h.flushed);
        assert_true(h.flushed_perf_ns >= t + kernel_rule.after_usec * NSEC_PER_USEC);
        harness_free(&h);
}

/* The name of the one staged bundle in incidents/. */
static void staged_name(const Harness *h, char *buf, size_t size) {
        char path[300];
        struct dirent *de;
        DIR *d;
        int n = 0;

        snprintf(path, sizeof path, "%s/incidents", h->state_dir);
        assert_non_null(d = opendir(path));
        while ((de = readdir(d)))
                if (strncmp(de->d_name, BUNDLE_TMP_PREFIX, strlen(BUNDLE_TMP_PREFIX)) == 0) {
                        snprintf(buf, size, "%s", de->d_name + strlen(BUNDLE_TMP_PREFIX));
                        n++;
                }
        closedir(d);
        assert_int_equal(n, 1);
}

/* A journal entry of the boot before this one (read on after a reboot from the saved cursor) has no
 * place on this boot's perf clock, only its realtime (docs/design.md, "Time"): its bundle is named
 * and dated by that realtime, not by this boot's start its perf time was clamped to. */
static void test_entry_of_another_boot_keeps_its_realtime(void **state) {
        static const IncidentRule rule = {
                .name = LEND("unit-failed"),
                .source = LEND("journal"),
                .match = LEND("Failed with result"),
                .before_usec = 60 * USEC_PER_SEC,
                .after_usec = 10 * USEC_PER_SEC,
                .cooldown_usec = 600 * USEC_PER_SEC,
        };
        static const char msg[] = "kubelet.service: Failed with result 'exit-code'.";
        LogRecord rec = LOG_RECORD_NULL;
        char name[256], stamp[32];
        uint64_t boot_realtime_usec;
        struct tm tm;
        time_t sec;
        Harness h;

        harness_new(&h, "other-boot");
        boot_realtime_usec = now_usec(CLOCK_REALTIME) - now_usec(CLOCK_MONOTONIC);
        rec.source = LOG_SOURCE_JOURNAL;
        rec.priority = 4;
        rec.t_ns = 0; /* what the journal source gives an entry of another boot */
        rec.source_usec = 5000 * USEC_PER_SEC;
        rec.realtime_usec = boot_realtime_usec - 2 * USEC_PER_DAY; /* two days before this boot began */
        rec.unit = "kubelet.service";
        rec.message = rec.message_escaped = msg;
        rec.message_len = rec.message_escaped_len = sizeof msg - 1;
        assert_int_equal(incident_manager_match(h.im, &rule, &rec, NULL, 0), 0);

        staged_name(&h, name, sizeof name);
        sec = (time_t) (rec.realtime_usec / USEC_PER_SEC);
        assert_non_null(gmtime_r(&sec, &tm));
        strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ-unit-failed-", &tm);
        assert_string_equal(strndupa(name, strlen(stamp)), stamp);
        harness_free(&h);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_deadline_follows_a_mapping_measured_after_the_match),
                cmocka_unit_test(test_deadline_is_not_held_back_by_an_outdated_mapping),
                cmocka_unit_test(test_entry_of_another_boot_keeps_its_realtime),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}

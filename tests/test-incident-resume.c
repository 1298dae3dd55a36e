/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading a staged bundle's pending manifest back (incident-resume.h): what incident_stage() wrote
 * at the match rebuilds the same incident, a capture included; a manifest that is damaged, not
 * pending, of a newer format or naming another folder is refused; a resumed incident's manifest
 * says it was interrupted, and the hole the restart left in its slice makes it partial.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/fileio.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "incident/incident-resume.h"
#include "incident/incident-write.h"
#include "tests.h"

static char dir[] = "/tmp/test-incident-resume-XXXXXX";
static int dir_fd = -1;

static int setup(void **state) {
        if (test_dir_make(dir) < 0)
                return -1;
        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return dir_fd < 0 ? -1 : 0;
}

static int teardown(void **state) {
        close(dir_fd);
        return test_dir_remove(dir);
}

/* IncidentRule owns its strings; the test lends it literals, which incident_new() copies. */
#define LEND(s) ((char *) (s))

static const IncidentRule rule = {
        .name = LEND("ena-reset"),
        .description = LEND("AWS ENA driver reset"),
        .source = LEND("kernel"),
        .origin = LEND("any"),
        .match = LEND("^ena (?<pci>\\S+) \\S+: Trigger reset is on"),
        .group = LEND("nic-tx-reset"),
        .before_usec = 10 * USEC_PER_SEC,
        .after_usec = 6 * USEC_PER_SEC,
        .cooldown_usec = 600 * USEC_PER_SEC,
};

static const IncidentHost host = { "testhost", "0123456789abcdef0123456789abcdef", "6.1.0-test" };
static const IncidentProfile profile = { "cpu-clock", 97, 2 };

static const ClockMap clock_map = {
        .method = CLOCK_MAP_PERF_BRACKET,
        .perf_minus_mono_ns = 3000,
        .realtime_minus_mono_ns = INT64_C(1795271400) * 1000000000,
        .error_ns = 4200,
};

static void make_incident(Incident **ret) {
        /* A line as printk stores it in the kernel log (kernel/printk/printk.c, Linux 6.1): text with
         * a tab and a quote, which the manifest escapes. */
        const char msg[] = "ena 0000:00:05.0 eth0: Trigger reset is on \t\"tx\"";
        LogRecord rec = LOG_RECORD_NULL;

        assert_int_equal(incident_new(&rule, 100 * NSEC_PER_SEC, 0, &clock_map, ret), 0);
        rec.source = LOG_SOURCE_KMSG;
        rec.kernel_origin = false;
        rec.priority = 3;
        rec.facility = 1;
        rec.seq = 77;
        rec.t_ns = 100 * NSEC_PER_SEC;
        rec.message = msg;
        rec.message_len = sizeof msg - 1;
        assert_int_equal(incident_set_trigger(*ret, &rec, "kmsg-timestamp", 4200), 0);
        assert_int_equal(incident_add_capture(*ret, "pci", "0000:00:05.0", 12), 0);
        assert_int_equal(incident_add_capture(*ret, "cpu", "1", 1), 0);
}

/* Stages i and returns the text of its pending manifest. */
static char *stage_and_read(const Incident *i) {
        _cleanup_close_ int tmp_fd = -EBADF;
        char path[512], *text = NULL;
        size_t size;

        assert_int_equal(incident_stage(dir_fd, i, &host, &profile, &tmp_fd), 0);
        snprintf(path, sizeof path, "%s/.tmp-%s/" BUNDLE_PENDING, dir, i->id);
        assert_int_equal(read_full_file(path, 1 << 20, &text, &size), 0);
        return text;
}

static void test_stage_then_resume(void **state) {
        _cleanup_(incident_freep) Incident *i = NULL, *back = NULL;
        _cleanup_free_ char *boot = NULL, *text = NULL;
        _cleanup_close_ int tmp_fd = -EBADF;
        char name[300];

        make_incident(&i);
        i->note = strdup("seen on the canary");
        assert_non_null(i->note);
        text = stage_and_read(i);
        snprintf(name, sizeof name, ".tmp-%s", i->id);
        tmp_fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(tmp_fd >= 0);

        assert_int_equal(incident_resume_load(tmp_fd, &back, &boot), 0);
        assert_string_equal(boot, host.boot_id);
        assert_string_equal(back->id, i->id);
        assert_string_equal(back->short_id, i->short_id);
        assert_string_equal(back->rule.name, "ena-reset");
        assert_string_equal(back->rule.group, "nic-tx-reset");
        assert_string_equal(back->rule.origin, "any");
        assert_string_equal(back->rule.match, rule.match);
        assert_string_equal(incident_rule_cooldown_key(&back->rule), "nic-tx-reset");
        assert_int_equal(back->rule.before_usec, rule.before_usec);
        assert_int_equal(back->rule.after_usec, rule.after_usec);
        assert_int_equal(back->rule.cooldown_usec, rule.cooldown_usec);
        assert_int_equal(back->t_ns, i->t_ns);
        assert_int_equal(back->t_mono_ns, i->t_mono_ns);
        assert_int_equal(back->t_realtime_usec, i->t_realtime_usec);
        assert_int_equal(back->from_ns, i->from_ns);
        assert_int_equal(back->to_ns, i->to_ns);
        assert_int_equal(back->created_realtime_usec, i->created_realtime_usec);
        /* The slice's ends are placed on the wall clock as before. */
        assert_int_equal(clock_map_perf_to_realtime(&back->clock, back->from_ns) / NSEC_PER_USEC,
                         clock_map_perf_to_realtime(&i->clock, i->from_ns) / NSEC_PER_USEC);
        assert_int_equal(back->clock.method, CLOCK_MAP_PERF_BRACKET);
        assert_int_equal(back->error_ns, 4200);
        assert_string_equal(back->alignment, "kmsg-timestamp");
        assert_int_equal(back->source, LOG_SOURCE_KMSG);
        assert_false(back->kernel_origin);
        assert_int_equal(back->priority, 3);
        assert_int_equal(back->facility, 1);
        assert_int_equal(back->seq, 77);
        assert_int_equal(back->message_len, i->message_len);
        assert_memory_equal(back->message, i->message, i->message_len);
        assert_string_equal(incident_capture(back, "pci"), "0000:00:05.0");
        assert_string_equal(incident_capture(back, "cpu"), "1");
        assert_string_equal(back->note, "seen on the canary");
        assert_int_equal(back->repeats, 1);
        assert_int_equal(back->resumed_realtime_usec, 0);

        /* The trigger line for the bundle's log, from what was read back. */
        LogRecord rec;
        incident_trigger_record(back, &rec);
        assert_int_equal(rec.source, LOG_SOURCE_KMSG);
        assert_int_equal(rec.t_ns, i->t_ns);
        assert_int_equal(rec.realtime_usec, i->t_realtime_usec);
        assert_int_equal(rec.seq, 77);
        assert_memory_equal(rec.message, i->message, i->message_len);
        assert_int_equal(incident_discard(dir_fd, i), 0);
}

static void test_capture_resumes(void **state) {
        _cleanup_(incident_freep) Incident *i = NULL, *back = NULL;
        _cleanup_free_ char *text = NULL;
        IncidentRule manual = { .name = LEND("manual"), .source = LEND("manual"),
                                .description = LEND("manual capture (tprof-bundle capture)"),
                                .before_usec = 60 * USEC_PER_SEC, .after_usec = 10 * USEC_PER_SEC };

        assert_int_equal(incident_new(&manual, 500 * NSEC_PER_SEC, 0, &clock_map, &i), 0);
        i->alignment = "capture-request";
        text = stage_and_read(i);
        assert_int_equal(incident_resume_parse(text, strlen(text), &back, NULL), 0);
        assert_int_equal(back->source, _LOG_SOURCE_INVALID);
        assert_null(back->message);
        assert_string_equal(back->alignment, "capture-request");
        assert_int_equal(back->to_ns, 510 * NSEC_PER_SEC);
        assert_null(back->rule.group);
        assert_int_equal(incident_discard(dir_fd, i), 0);
}

/* text with the first occurrence of from replaced by to. */
static char *replaced(const char *text, const char *from, const char *to) {
        const char *at = strstr(text, from);
        char *s = NULL;

        assert_non_null(at);
        assert_true(asprintf(&s, "%.*s%s%s", (int) (at - text), text, to, at + strlen(from)) > 0);
        return s;
}

static void test_damaged_is_refused(void **state) {
        _cleanup_(incident_freep) Incident *i = NULL;
        _cleanup_free_ char *text = NULL, *id = NULL;
        Incident *back = NULL;
        char *bad;

        make_incident(&i);
        text = stage_and_read(i);

        /* Cut short, as a write stopped halfway would leave it. */
        assert_int_equal(incident_resume_parse(text, strlen(text) / 2, &back, NULL), -EBADMSG);
        assert_int_equal(incident_resume_parse(text, 0, &back, NULL), -EBADMSG);
        assert_int_equal(incident_resume_parse("[]", 2, &back, NULL), -EBADMSG);

        struct {
                const char *from, *to;
                int error;
        } cases[] = {
                { "\"status\": \"pending\"", "\"status\": \"complete\"", -EBADMSG },
                { "\"format\": 1", "\"format\": 2", -EPROTO },
                { "\"name\": \"ena-reset\"", "\"name\": null", -EBADMSG },
                { "\"after_usec\": 6000000", "\"after_usec\": \"6s\"", -EBADMSG },
                { "\"t_perf_ns\"", "\"t_perf\"", -EBADMSG },
                { "\"method\": \"kmsg-timestamp\"", "\"method\": \"guess\"", -EBADMSG },
                { "\"source\": \"kmsg\"", "\"source\": \"pipe\"", -EBADMSG },
                { "\"pci\": \"0000:00:05.0\"", "\"pci\": 5", -EBADMSG },
                { "\"created_utc\": \"", "\"created_utc\": \"x", -EBADMSG },
        };
        for (size_t k = 0; k < ELEMENTSOF(cases); k++) {
                bad = replaced(text, cases[k].from, cases[k].to);
                assert_int_equal(incident_resume_parse(bad, strlen(bad), &back, NULL), cases[k].error);
                assert_null(back);
                free(bad);
        }

        /* An id that is no plain folder name, or not the short id's. */
        assert_true(asprintf(&id, "\"id\": \"%s\"", i->id) > 0);
        bad = replaced(text, id, "\"id\": \"../../etc\"");
        assert_int_equal(incident_resume_parse(bad, strlen(bad), &back, NULL), -EBADMSG);
        free(bad);
        bad = replaced(text, id, "\"id\": \"20261121T143140Z-ena-reset-00000000\"");
        assert_int_equal(incident_resume_parse(bad, strlen(bad), &back, NULL), -EBADMSG);
        free(bad);

        /* Unchanged, it reads. */
        assert_int_equal(incident_resume_parse(text, strlen(text), &back, NULL), 0);
        incident_free(back);
        assert_int_equal(incident_discard(dir_fd, i), 0);
}

static void test_missing_is_refused(void **state) {
        Incident *back = NULL;
        _cleanup_close_ int fd = -EBADF;

        assert_int_equal(mkdirat(dir_fd, ".tmp-empty", 0750), 0);
        fd = openat(dir_fd, ".tmp-empty", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(incident_resume_load(fd, &back, NULL), -ENOENT);
        assert_null(back);
        assert_int_equal(unlinkat(dir_fd, ".tmp-empty", AT_REMOVEDIR), 0);
}

static void test_interrupted_mark_and_hole(void **state) {
        _cleanup_(incident_freep) Incident *i = NULL;
        _cleanup_free_ char *plain = NULL, *marked = NULL;
        IncidentSlice s = { .samples = 1000, .covered_from_ns = 90 * NSEC_PER_SEC, .covered_to_ns = 106 * NSEC_PER_SEC };

        make_incident(&i);
        assert_int_equal(incident_manifest_json(i, &host, &profile, &s, NULL, 0, false, &plain), 0);
        assert_non_null(strstr(plain, "\"interrupted\": null"));
        assert_int_equal(incident_status(i, &s), BUNDLE_COMPLETE);

        /* Killed 2 s after the match at 100 s, started again 3 s later. */
        i->resumed_realtime_usec = UINT64_C(1795271505) * USEC_PER_SEC;
        i->resumed_ns = 105 * NSEC_PER_SEC;
        s.resume_gap_from_ns = 102 * NSEC_PER_SEC;
        s.resume_gap_to_ns = 105 * NSEC_PER_SEC;
        assert_int_equal(incident_manifest_json(i, &host, &profile, &s, NULL, 0, false, &marked), 0);
        assert_non_null(strstr(marked, "\"interrupted\": {"));
        assert_non_null(strstr(marked, "\"resumed_utc\": \"2026-11-21T14:31:45.000000Z\""));
        assert_int_equal(incident_status(i, &s), BUNDLE_PARTIAL);
        /* A restart quicker than the sampling's own gaps leaves no hole. */
        s.resume_gap_from_ns = 104 * NSEC_PER_SEC;
        assert_int_equal(incident_status(i, &s), BUNDLE_COMPLETE);
        /* No sample after the restart inside the slice: the hole reaches its end. */
        s.resume_gap_to_ns = 0;
        s.covered_to_ns = 104 * NSEC_PER_SEC + 1;
        assert_int_equal(incident_status(i, &s), BUNDLE_COMPLETE);
        s.resume_gap_from_ns = 102 * NSEC_PER_SEC;
        s.covered_to_ns = 106 * NSEC_PER_SEC;
        assert_int_equal(incident_status(i, &s), BUNDLE_PARTIAL);

        /* The sink finds the samples either side of the restart. */
        _cleanup_(incident_sink_freep) IncidentSink *k = NULL;
        IncidentSlice got;
        assert_int_equal(incident_sink_new(i, &k), 0);
        for (uint64_t t = 90; t <= 106; t++) {
                Sample x = { .t_ns = t * NSEC_PER_SEC, .cpu = 0, .pid = 42, .tid = 42, .comm = "kubelet" };
                if (t > 102 && t < 105)
                        continue;
                assert_int_equal(incident_sink_add(k, &x), 0);
        }
        incident_sink_get_slice(k, &got);
        assert_int_equal(got.resume_gap_from_ns, 102 * NSEC_PER_SEC);
        assert_int_equal(got.resume_gap_to_ns, 105 * NSEC_PER_SEC);
        assert_int_equal(incident_status(i, &got), BUNDLE_PARTIAL);
}

/* A repeated batch (the earlier run died before saving the position past it) gives the trigger line
 * again: it is the resumed incident's, not a new match nor a repeat. */
static void test_trigger_read_again(void **state) {
        _cleanup_(incident_freep) Incident *i = NULL;
        IncidentRule other = rule;
        LogRecord rec;

        make_incident(&i);
        incident_trigger_record(i, &rec);
        assert_false(incident_resumed_trigger(i, &rule, &rec)); /* not resumed: a match like any */
        i->resumed_realtime_usec = UINT64_C(1795271505) * USEC_PER_SEC;
        assert_true(incident_resumed_trigger(i, &rule, &rec));
        other.name = LEND("ena-any");
        assert_false(incident_resumed_trigger(i, &other, &rec));
        rec.seq++; /* the same text logged again: a repeat */
        assert_false(incident_resumed_trigger(i, &rule, &rec));
        rec.seq--;
        rec.message_len--;
        assert_false(incident_resumed_trigger(i, &rule, &rec));
        rec.message_len++;

        /* A journal entry, placed on the perf clock again by this run's mapping. */
        i->source = rec.source = LOG_SOURCE_JOURNAL;
        rec.t_ns = i->t_ns + 3000;
        assert_true(incident_resumed_trigger(i, &rule, &rec));
        rec.t_ns = i->t_ns + 2 * NSEC_PER_SEC;
        assert_false(incident_resumed_trigger(i, &rule, &rec));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_stage_then_resume),
                cmocka_unit_test(test_capture_resumes),
                cmocka_unit_test(test_damaged_is_refused),
                cmocka_unit_test(test_missing_is_refused),
                cmocka_unit_test(test_interrupted_mark_and_hole),
                cmocka_unit_test(test_trigger_read_again),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Staging and publishing a bundle: the files docs/bundle-format.md lists, their modes, the slice
 * versus baseline split, the per-CPU view, and that nothing is visible under its final name
 * until it is complete.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/fileio.h"
#include "basic/time-util.h"
#include "incident/incident-resume.h"
#include "incident/incident-write.h"
#include "tests.h"

static char dir[] = "/tmp/test-incident-write-XXXXXX";
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
        .origin = LEND("kernel"),
        .match = LEND("^ena \\S+ \\S+: Trigger reset is on"),
        .before_usec = 10 * USEC_PER_SEC,
        .after_usec = 5 * USEC_PER_SEC,
        .cooldown_usec = 600 * USEC_PER_SEC,
};

static const IncidentHost host = { "testhost", "0123456789abcdef0123456789abcdef", "6.1.0-test" };
static const IncidentProfile profile = { "cpu-clock", 97, 2 };

static const Frame burn[] = {
        { .symbol = "mem_cgroup_nr_lru_pages", .dso = "[kernel.kallsyms]", .kernel = true },
        { .symbol = "main", .dso = "/usr/bin/kubelet" },
};
static const Frame idle[] = {
        { .symbol = "native_safe_halt", .dso = "[kernel.kallsyms]", .kernel = true },
};

/* The idle task's samples at 6.8 and later (leaf first, as perf gives them): halted; a NIC's
 * receive softirq on the way out of its interrupt (__irq_exit_rcu -> handle_softirqs); the
 * interrupt's handler itself; and, at 3.10, the local timer's softirq (irq_exit -> __do_softirq). */
#define K(s) { .symbol = s, .dso = "[kernel.kallsyms]", .kernel = true }
static const Frame idle_618[] = {
        K("pv_native_safe_halt"), K("default_idle"), K("default_enter_idle"), K("cpuidle_enter_state"),
        K("cpuidle_enter"), K("do_idle"), K("cpu_startup_entry"), K("start_secondary"), K("common_startup_64"),
};
static const Frame softirq_618[] = {
        K("ena_clean_rx_irq"), K("ena_io_poll"), K("__napi_poll"), K("net_rx_action"), K("handle_softirqs"),
        K("__irq_exit_rcu"), K("common_interrupt"), K("asm_common_interrupt"), K("pv_native_safe_halt"),
        K("default_idle"), K("default_enter_idle"), K("cpuidle_enter_state"), K("cpuidle_enter"), K("do_idle"),
        K("cpu_startup_entry"), K("start_secondary"), K("common_startup_64"),
};
static const Frame hardirq_618[] = {
        K("vring_interrupt"), K("__handle_irq_event_percpu"), K("handle_irq_event"), K("handle_edge_irq"),
        K("common_interrupt"), K("asm_common_interrupt"), K("pv_native_safe_halt"), K("default_idle"),
        K("do_idle"), K("cpu_startup_entry"), K("start_secondary"),
};
static const Frame softirq_310[] = {
        K("run_timer_softirq"), K("__do_softirq"), K("irq_exit"), K("smp_apic_timer_interrupt"),
        K("apic_timer_interrupt"), K("default_idle"), K("arch_cpu_idle"), K("cpu_idle_loop"),
        K("cpu_startup_entry"), K("start_secondary"),
};
/* A busy process's own softirq, raised at local_bh_enable(): its own work, as ever. */
static const Frame softirq_busy[] = {
        K("net_rx_action"), K("handle_softirqs"), K("do_softirq"), K("__local_bh_enable_ip"), K("tcp_sendmsg"),
        K("__sys_sendto"), K("do_syscall_64"), K("entry_SYSCALL_64_after_hwframe"),
        { .symbol = "__send", .dso = "/usr/lib/x86_64-linux-gnu/libc.so.6" },
};
#undef K

static int fake_perf_script(FILE *out, void *userdata) {
        fputs("kubelet 1/1 [000] 100.000001: 1 cpu-clock:\n\tffff mem_cgroup_nr_lru_pages+0x0 ([kernel.kallsyms])\n\n",
              out);
        (*(int *) userdata)++;
        return 0;
}

static void make_incident(Incident **ret) {
        ClockMap m = { .method = CLOCK_MAP_PERF_BRACKET, .realtime_minus_mono_ns = INT64_C(1795271400) * 1000000000, .error_ns = 4200 };
        const char msg[] = "ena 0000:00:05.0 eth0: Trigger reset is on \x1b[2J\xff";
        LogRecord rec = LOG_RECORD_NULL;

        assert_int_equal(incident_new(&rule, 100 * NSEC_PER_SEC, 0, &m, ret), 0);
        rec.source = LOG_SOURCE_KMSG;
        rec.kernel_origin = true;
        rec.priority = 3;
        rec.facility = 0;
        rec.seq = 77;
        rec.t_ns = 100 * NSEC_PER_SEC;
        rec.message = msg;
        rec.message_len = sizeof msg - 1;
        assert_int_equal(incident_set_trigger(*ret, &rec, "kmsg-timestamp", 4200), 0);
        assert_int_equal(incident_add_capture(*ret, "cpu", "1", 1), 0);
}

static void test_id_is_time_rule_and_short_id(void **state) {
        _cleanup_(incident_freep) Incident *i = NULL;

        make_incident(&i);
        /* realtime = 1795271400 s + 100 s = 2026-11-21T14:31:40Z */
        assert_int_equal(strncmp(i->id, "20261121T143140Z-ena-reset-", 27), 0);
        assert_int_equal(strlen(i->short_id), BUNDLE_SHORT_ID_LEN);
        assert_string_equal(i->id + 27, i->short_id);
        assert_int_equal(i->from_ns, 90 * NSEC_PER_SEC);
        assert_int_equal(i->to_ns, 105 * NSEC_PER_SEC);
}

static void test_hostile_rule_name_stays_in_directory(void **state) {
        _cleanup_(incident_freep) Incident *i = NULL;
        IncidentRule evil = rule;
        ClockMap m = {};

        evil.name = LEND("../../etc");
        assert_int_equal(incident_new(&evil, NSEC_PER_SEC, 0, &m, &i), 0);
        assert_null(strchr(i->id, '/'));
}

static void test_stage_publish(void **state) {
        _cleanup_(incident_freep) Incident *i = NULL;
        _cleanup_(incident_sink_freep) IncidentSink *k = NULL;
        _cleanup_close_ int tmp_fd = -EBADF;
        char path[512], *windows[] = { LEND("host-20261121T143000Z-120s.tpw") };
        int perf_calls = 0;
        struct stat st;

        make_incident(&i);
        assert_int_equal(incident_stage(dir_fd, i, &host, &profile, &tmp_fd), 0);
        snprintf(path, sizeof path, "%s/.tmp-%s/pending", dir, i->id);
        assert_int_equal(access(path, F_OK), 0);

        assert_int_equal(incident_sink_new(i, &k), 0);
        for (uint64_t t = 80; t < 110; t++) {
                Sample s1 = { .t_ns = t * NSEC_PER_SEC, .cpu = 1, .pid = 42, .tid = 42, .comm = "kubelet",
                              .n_frames = 2, .frames = burn };
                Sample s0 = { .t_ns = t * NSEC_PER_SEC + 1, .cpu = 0, .pid = 0, .tid = 0, .comm = "swapper",
                              .n_frames = 1, .frames = idle };
                assert_int_equal(incident_sink_add(k, &s1), 0);
                assert_int_equal(incident_sink_add(k, &s0), 0);
        }
        IncidentSlice sl;
        incident_sink_get_slice(k, &sl);
        /* Slice [90 s, 105 s]: seconds 90..105 for CPU 1 (16), 90..104 for CPU 0 (+1 ns past 105). */
        assert_int_equal(sl.samples, 31);
        assert_int_equal(sl.baseline_samples, 60 - 31);

        LogRecord rec = LOG_RECORD_NULL;
        rec.source = LOG_SOURCE_KMSG;
        rec.priority = 3;
        rec.t_ns = 100 * NSEC_PER_SEC;
        rec.message = i->message;
        rec.message_len = i->message_len;
        IncidentLogLine lines[] = { { &rec, true } };

        /* What a run that died in the middle of a window copy or a restage left: not published. */
        snprintf(path, sizeof path, "%s/.tmp-%s/windows/.host-20261121T143000Z-120s.tpw" COPY_FILE_TMP_SUFFIX, dir,
                 i->id);
        assert_int_equal(write_file_atomic(path, "torn", 4, 0640), 0);
        snprintf(path, sizeof path, "%s/.tmp-%s/.pending.tmp", dir, i->id);
        assert_int_equal(write_file_atomic(path, "{", 1, 0640), 0);

        assert_int_equal(incident_publish(dir_fd, tmp_fd, i, k, &host, &profile, windows, 1, lines, 1,
                                          fake_perf_script, &perf_calls),
                         0);
        assert_int_equal(perf_calls, 1);

        snprintf(path, sizeof path, "%s/.tmp-%s", dir, i->id);
        assert_int_not_equal(access(path, F_OK), 0);

        static const char *const files[] = { "manifest.json", "log.txt", "log.jsonl", "stacks.folded",
                                             "stacks.perf-script", "baseline.folded", "event.folded", "activity.tsv",
                                             "cpu1.folded", "cpu1-baseline.folded", "report.html" };
        for (size_t f = 0; f < ELEMENTSOF(files); f++) {
                snprintf(path, sizeof path, "%s/%s/%s", dir, i->id, files[f]);
                if (stat(path, &st) < 0)
                        fail_msg("missing %s", files[f]);
                assert_int_equal(st.st_mode & 0777, 0640);
        }
        snprintf(path, sizeof path, "%s/%s/pending", dir, i->id);
        assert_int_not_equal(access(path, F_OK), 0);
        snprintf(path, sizeof path, "%s/%s/.pending.tmp", dir, i->id);
        assert_int_not_equal(access(path, F_OK), 0);
        snprintf(path, sizeof path, "%s/%s/windows/.host-20261121T143000Z-120s.tpw" COPY_FILE_TMP_SUFFIX, dir, i->id);
        assert_int_not_equal(access(path, F_OK), 0);
        snprintf(path, sizeof path, "%s/%s", dir, i->id);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0750);

        _cleanup_free_ char *data = NULL;
        snprintf(path, sizeof path, "%s/%s/stacks.folded", dir, i->id);
        assert_int_equal(read_full_file(path, 1 << 20, &data, NULL), 0);
        assert_string_equal(data, "kubelet;main;mem_cgroup_nr_lru_pages 16\nswapper;native_safe_halt 15\n");
        data = mfree(data);

        /* The event's own seconds, [95 s, 105 s] of the slice [90 s, 105 s]. */
        snprintf(path, sizeof path, "%s/%s/event.folded", dir, i->id);
        assert_int_equal(read_full_file(path, 1 << 20, &data, NULL), 0);
        assert_string_equal(data, "kubelet;main;mem_cgroup_nr_lru_pages 11\nswapper;native_safe_halt 10\n");
        data = mfree(data);

        snprintf(path, sizeof path, "%s/%s/cpu1.folded", dir, i->id);
        assert_int_equal(read_full_file(path, 1 << 20, &data, NULL), 0);
        assert_string_equal(data, "kubelet;main;mem_cgroup_nr_lru_pages 16\n");
        data = mfree(data);

        snprintf(path, sizeof path, "%s/%s/activity.tsv", dir, i->id);
        assert_int_equal(read_full_file(path, 1 << 20, &data, NULL), 0);
        assert_non_null(strstr(data, "# offset_s\tcpu\tsamples\tbusy\n0\t0\t1\t0\n0\t1\t1\t1\n"));
        data = mfree(data);

        snprintf(path, sizeof path, "%s/%s/log.txt", dir, i->id);
        assert_int_equal(read_full_file(path, 1 << 20, &data, NULL), 0);
        assert_non_null(strstr(data, "> 2026-11-21T14:31:40.000000Z kmsg     err     ena 0000:00:05.0 eth0: "
                                     "Trigger reset is on \\x1b[2J\\xff\n"));
        assert_null(strchr(data, '\x1b'));
        data = mfree(data);

        /* report.html: made from the files just written, the manifest's id and status in it. */
        snprintf(path, sizeof path, "%s/%s/report.html", dir, i->id);
        assert_int_equal(read_full_file(path, 4 << 20, &data, NULL), 0);
        assert_non_null(strstr(data, "\"kind\":\"bundle\""));
        assert_non_null(strstr(data, i->id));
        assert_non_null(strstr(data, "\"status\":\"complete\""));
        assert_non_null(strstr(data, "\"slice_total\":31"));
        data = mfree(data);

        snprintf(path, sizeof path, "%s/%s/manifest.json", dir, i->id);
        assert_int_equal(read_full_file(path, 1 << 20, &data, NULL), 0);
        assert_non_null(strstr(data, "\"status\": \"complete\""));
        assert_non_null(strstr(data, "\"captures\": {\n      \"cpu\": \"1\"\n    }"));
        assert_non_null(strstr(data, "\"samples\": 31"));
        assert_non_null(strstr(data, "\"windows\": [\n    \"host-20261121T143000Z-120s.tpw\"\n  ]"));
}

/* activity.tsv counts a CPU busy where its idle task ran an interrupt's work: a NIC's receive storm
 * on an idle CPU is no idle CPU in the heatmap. The folded stacks keep perf's swapper. */
/* Repeats that came after the match reach the staged folder's pending manifest, which a later run
 * resumes the incident from. */
static void test_restage_keeps_repeats(void **state) {
        _cleanup_(incident_freep) Incident *i = NULL, *back = NULL;
        _cleanup_free_ char *boot_id = NULL;
        _cleanup_close_ int tmp_fd = -EBADF;

        make_incident(&i);
        assert_int_equal(incident_stage(dir_fd, i, &host, &profile, &tmp_fd), 0);
        assert_int_equal(incident_add_repeat(i, i->rule.name, i->t_ns + NSEC_PER_SEC), 0);
        assert_int_equal(incident_add_repeat(i, i->rule.name, i->t_ns + 2 * NSEC_PER_SEC), 0);
        assert_int_equal(incident_restage(tmp_fd, i, &host, &profile), 0);
        assert_int_not_equal(faccessat(tmp_fd, ".pending.tmp", F_OK, 0), 0);

        assert_int_equal(incident_resume_load(tmp_fd, &back, &boot_id), 0);
        assert_int_equal(back->repeats, 3);
        assert_string_equal(back->id, i->id);
        assert_string_equal(boot_id, host.boot_id);
        assert_int_equal(incident_discard(dir_fd, i), 0);
}

static void test_activity_irq_in_idle(void **state) {
        _cleanup_(incident_freep) Incident *i = NULL;
        _cleanup_(incident_sink_freep) IncidentSink *k = NULL;
        _cleanup_close_ int tmp_fd = -EBADF;
        _cleanup_free_ char *data = NULL;
        char path[512];
        int perf_calls = 0;
        /* In second 0 of the slice, CPU 0: 4 halted, 2 in softirq, 1 in a hardirq, 1 at 3.10's
         * timer softirq; CPU 1: 3 of nginx, 1 of its own softirq. */
        static const struct {
                const Frame *frames;
                size_t n;
                uint32_t cpu, pid;
                const char *comm;
                unsigned times;
        } plan[] = {
                { idle_618, ELEMENTSOF(idle_618), 0, 0, "swapper", 4 },
                { softirq_618, ELEMENTSOF(softirq_618), 0, 0, "swapper", 2 },
                { hardirq_618, ELEMENTSOF(hardirq_618), 0, 0, "swapper", 1 },
                { softirq_310, ELEMENTSOF(softirq_310), 0, 0, "swapper", 1 },
                { burn, ELEMENTSOF(burn), 1, 42, "nginx", 3 },
                { softirq_busy, ELEMENTSOF(softirq_busy), 1, 42, "nginx", 1 },
        };
        uint64_t t = 90 * NSEC_PER_SEC;

        make_incident(&i);
        assert_int_equal(incident_stage(dir_fd, i, &host, &profile, &tmp_fd), 0);
        assert_int_equal(incident_sink_new(i, &k), 0);
        for (size_t p = 0; p < ELEMENTSOF(plan); p++)
                for (unsigned n = 0; n < plan[p].times; n++) {
                        Sample s = { .t_ns = t++, .cpu = plan[p].cpu, .pid = plan[p].pid, .tid = plan[p].pid,
                                     .comm = plan[p].comm, .n_frames = (uint32_t) plan[p].n,
                                     .frames = plan[p].frames };
                        assert_int_equal(incident_sink_add(k, &s), 0);
                }
        assert_int_equal(incident_publish(dir_fd, tmp_fd, i, k, &host, &profile, NULL, 0, NULL, 0, fake_perf_script,
                                          &perf_calls),
                         0);

        snprintf(path, sizeof path, "%s/%s/activity.tsv", dir, i->id);
        assert_int_equal(read_full_file(path, 1 << 20, &data, NULL), 0);
        assert_non_null(strstr(data, "# offset_s\tcpu\tsamples\tbusy\n0\t0\t8\t4\n0\t1\t4\t4\n"));
        data = mfree(data);

        snprintf(path, sizeof path, "%s/%s/stacks.folded", dir, i->id);
        assert_int_equal(read_full_file(path, 1 << 20, &data, NULL), 0);
        assert_non_null(strstr(data, "swapper;common_startup_64;start_secondary;cpu_startup_entry;do_idle;cpuidle_enter;"
                                     "cpuidle_enter_state;default_enter_idle;default_idle;pv_native_safe_halt;"
                                     "asm_common_interrupt;common_interrupt;__irq_exit_rcu;handle_softirqs;"
                                     "net_rx_action;__napi_poll;ena_io_poll;ena_clean_rx_irq 2\n"));
        assert_null(strstr(data, "[irq]"));
}

static void test_discard_removes_everything(void **state) {
        _cleanup_(incident_freep) Incident *i = NULL;
        _cleanup_close_ int tmp_fd = -EBADF;
        char path[512];

        make_incident(&i);
        assert_int_equal(incident_stage(dir_fd, i, &host, &profile, &tmp_fd), 0);
        snprintf(path, sizeof path, "%s/.tmp-%s/windows/w.tpw", dir, i->id);
        assert_int_equal(write_file_atomic(path, "x", 1, 0640), 0);
        assert_int_equal(incident_discard(dir_fd, i), 0);
        snprintf(path, sizeof path, "%s/.tmp-%s", dir, i->id);
        assert_int_not_equal(access(path, F_OK), 0);
}

static void test_no_samples_is_no_coverage(void **state) {
        _cleanup_(incident_freep) Incident *i = NULL;
        IncidentSlice none = {}, half = { .samples = 10, .covered_from_ns = 99 * NSEC_PER_SEC,
                                          .covered_to_ns = 105 * NSEC_PER_SEC };

        make_incident(&i);
        assert_int_equal(incident_status(i, &none), BUNDLE_NO_COVERAGE);
        assert_int_equal(incident_status(i, &half), BUNDLE_PARTIAL);

        /* Covered from end to end, but with samples lost inside: partial from 5% of them. */
        IncidentSlice whole = { .samples = 950, .covered_from_ns = i->from_ns, .covered_to_ns = i->to_ns };
        assert_int_equal(incident_status(i, &whole), BUNDLE_COMPLETE);
        whole.lost = 49;
        assert_int_equal(incident_status(i, &whole), BUNDLE_COMPLETE);
        whole.lost = 50;
        assert_int_equal(incident_status(i, &whole), BUNDLE_PARTIAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_id_is_time_rule_and_short_id),
                cmocka_unit_test(test_hostile_rule_name_stays_in_directory),
                cmocka_unit_test(test_stage_publish),
                cmocka_unit_test(test_restage_keeps_repeats),
                cmocka_unit_test(test_activity_irq_in_idle),
                cmocka_unit_test(test_discard_removes_everything),
                cmocka_unit_test(test_no_samples_is_no_coverage),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}

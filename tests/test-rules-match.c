/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rules-match.c: which records a rule may fire on (source, kernel origin, origin: any, severity,
 * journal trusted fields, never SYSLOG_IDENTIFIER), named captures, the match limit on a
 * catastrophic pattern, and that the prefilter changes speed only, never results.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "rules/rules.h"
#include "tests.h"

static RuleSet *load(const char *yaml) {
        RuleError e = RULE_ERROR_NULL;
        RuleSet *rs = NULL;
        int r = rule_set_load_string("test.yaml", yaml, strlen(yaml), &rs, &e);
        if (r < 0)
                fail_msg("load failed: %d %s:%u:%u: %s", r, e.file, e.line, e.column, e.message);
        return rs;
}

static LogRecord kmsg(const char *msg, int facility) {
        LogRecord r = LOG_RECORD_NULL;
        r.source = LOG_SOURCE_KMSG;
        r.facility = facility;
        r.priority = 3;
        r.kernel_origin = facility == 0;
        r.message = msg;
        r.message_len = strlen(msg);
        return r;
}

static LogRecord journal(const char *msg) {
        LogRecord r = LOG_RECORD_NULL;
        r.source = LOG_SOURCE_JOURNAL;
        r.message = msg;
        r.message_len = strlen(msg);
        return r;
}

typedef struct Seen {
        char names[512];
        char captures[512];
} Seen;

static int record_match(const RuleMatch *m, const LogRecord *rec, void *userdata) {
        Seen *s = userdata;
        size_t l = strlen(s->names);
        snprintf(s->names + l, sizeof s->names - l, "%s%s", l ? "," : "", m->rule->name);
        for (size_t i = 0; i < m->n_captures; i++) {
                l = strlen(s->captures);
                snprintf(s->captures + l, sizeof s->captures - l, "%s%s=%.*s", l ? " " : "", m->captures[i].name,
                         (int) m->captures[i].value_len, m->captures[i].value);
        }
        return 0;
}

static const char *matches(RuleSet *rs, const LogRecord *rec) {
        static Seen s;
        memset(&s, 0, sizeof s);
        assert_true(rule_set_match(rs, rec, record_match, &s) >= 0);
        return s.names;
}

static const char kernel_rules[] =
        "rules:\n"
        "  - name: k\n"
        "    source: kernel\n"
        "    match: 'Trigger reset'\n"
        "  - name: k-any\n"
        "    source: kernel\n"
        "    origin: any\n"
        "    match: 'Trigger reset'\n";

static void test_kernel_rules_need_kernel_origin_unless_origin_any(void **state) {
        _cleanup_(rule_set_freep) RuleSet *rs = load(kernel_rules);
        LogRecord r;

        r = kmsg("ena x eth0: Trigger reset is on", 0);
        assert_string_equal(matches(rs, &r), "k,k-any");
        /* facility 1 (user): someone wrote into /dev/kmsg */
        r = kmsg("ena x eth0: Trigger reset is on", 1);
        assert_string_equal(matches(rs, &r), "k-any");
        /* text a person pasted counts as kernel-originated */
        r = kmsg("Trigger reset", 0);
        r.source = LOG_SOURCE_TEXT;
        assert_string_equal(matches(rs, &r), "k,k-any");
        /* Kernel messages arriving through the journal are not matched again: kmsg already was. */
        r = journal("ena x eth0: Trigger reset is on");
        r.kernel_origin = true;
        r.transport = "kernel";
        assert_string_equal(matches(rs, &r), "");
        /* no match at all */
        r = kmsg("Trigger rese", 0);
        assert_string_equal(matches(rs, &r), "");
}

static const char journal_rules[] =
        "rules:\n"
        "  - name: any-journal\n"
        "    source: journal\n"
        "    match: 'PLEG is not healthy'\n"
        "  - name: kubelet\n"
        "    source: journal\n"
        "    unit: kubelet.service\n"
        "    match: 'PLEG is not healthy'\n"
        "  - name: root-kubelet\n"
        "    source: journal\n"
        "    comm: kubelet\n"
        "    exe: /usr/bin/kubelet\n"
        "    uid: 0\n"
        "    transport: stdout\n"
        "    match: 'PLEG'\n";

static void test_journal_rules_filter_on_trusted_fields_only(void **state) {
        _cleanup_(rule_set_freep) RuleSet *rs = load(journal_rules);
        LogRecord r;

        r = journal("PLEG is not healthy");
        assert_string_equal(matches(rs, &r), "any-journal");

        /* A client can set SYSLOG_IDENTIFIER to anything: it satisfies no filter. */
        r.identifier = "kubelet.service";
        assert_string_equal(matches(rs, &r), "any-journal");

        r.unit = "kubelet.service";
        assert_string_equal(matches(rs, &r), "any-journal,kubelet");
        r.unit = "other.service";
        assert_string_equal(matches(rs, &r), "any-journal");

        r = journal("PLEG is not healthy");
        r.comm = "kubelet";
        r.exe = "/usr/bin/kubelet";
        r.transport = "stdout";
        r.uid = 0;
        assert_string_equal(matches(rs, &r), "any-journal,root-kubelet");
        r.uid = 1000;
        assert_string_equal(matches(rs, &r), "any-journal");
        r.uid = 0;
        r.transport = "syslog";
        assert_string_equal(matches(rs, &r), "any-journal");

        /* Journal rules never see kmsg or text records. */
        r = kmsg("PLEG is not healthy", 0);
        assert_string_equal(matches(rs, &r), "");

        /* The tester's mode: filters cannot be checked from text, the pattern alone decides. */
        Seen s = {};
        r = journal("PLEG is not healthy");
        assert_int_equal(rule_set_match_full(rs, &r, RULE_MATCH_IGNORE_TRUSTED_FIELDS, record_match, &s), 3);
        assert_string_equal(s.names, "any-journal,kubelet,root-kubelet");
}

static void test_disabled_and_severity(void **state) {
        _cleanup_(rule_set_freep) RuleSet *rs = load("rules:\n"
                                                     "  - {name: off, source: kernel, match: x, enabled: false}\n"
                                                     "  - {name: err, source: kernel, match: x, severity: err}\n"
                                                     "  - {name: all, source: kernel, match: x}\n");
        LogRecord r = kmsg("x", 0);

        r.priority = 3;
        assert_string_equal(matches(rs, &r), "err,all");
        r.priority = 2; /* crit: more urgent than err */
        assert_string_equal(matches(rs, &r), "err,all");
        r.priority = 6; /* info */
        assert_string_equal(matches(rs, &r), "all");
        r.priority = -1; /* unknown passes */
        assert_string_equal(matches(rs, &r), "err,all");
}

static void test_named_captures_are_returned(void **state) {
        _cleanup_(rule_set_freep) RuleSet *rs =
                load("rules:\n"
                     "  - name: lockup\n"
                     "    source: kernel\n"
                     "    match: 'soft lockup - CPU#(?<cpu>\\d+) stuck for (?<secs>\\d+)s!(?: \\[(?<comm>[^]]*)\\])?'\n");
        LogRecord r;
        Seen s = {};

        r = kmsg("watchdog: BUG: soft lockup - CPU#12 stuck for 23s! [kworker/12:1:99]", 0);
        assert_int_equal(rule_set_match(rs, &r, record_match, &s), 1);
        assert_string_equal(s.captures, "comm=kworker/12:1:99 cpu=12 secs=23");

        /* A group that took no part is left out rather than returned empty. */
        memset(&s, 0, sizeof s);
        r = kmsg("soft lockup - CPU#3 stuck for 5s!", 0);
        assert_int_equal(rule_set_match(rs, &r, record_match, &s), 1);
        assert_string_equal(s.captures, "cpu=3 secs=5");
}

static void test_catastrophic_pattern_hits_limit_promptly(void **state) {
        _cleanup_(rule_set_freep) RuleSet *rs = load("rules:\n"
                                                     "  - {name: evil, source: kernel, match: '(a+)+$'}\n"
                                                     "  - {name: fine, source: kernel, match: 'aaab'}\n");
        size_t n = 100 * 1024;
        _cleanup_free_ char *line = malloc(n + 2);
        RuleStats st;
        LogRecord r;
        Seen s = {};

        memset(line, 'a', n);
        line[n] = 'b';
        line[n + 1] = '\0';
        r = kmsg(line, 0);

        uint64_t t0 = now_usec(CLOCK_MONOTONIC);
        int k = rule_set_match(rs, &r, record_match, &s);
        uint64_t elapsed = now_usec(CLOCK_MONOTONIC) - t0;

        assert_int_equal(k, 1); /* the other rule still matched */
        assert_string_equal(s.names, "fine");
        rule_set_get_stats(rs, &st);
        assert_int_equal(st.limit_hits, 1);
        assert_int_equal(st.matches, 1);
        rule_set_get_rule_stats(rs, 0, &st);
        assert_int_equal(st.limit_hits, 1);
        assert_int_equal(st.matches, 0);
        if (elapsed > 2 * USEC_PER_SEC)
                fail_msg("(a+)+$ took %llu ms", (unsigned long long) (elapsed / USEC_PER_MSEC));
}

static int stop_handler(const RuleMatch *m, const LogRecord *rec, void *userdata) {
        (*(int *) userdata)++;
        return -ECANCELED;
}

static void test_handler_error_stops(void **state) {
        _cleanup_(rule_set_freep) RuleSet *rs = load(kernel_rules);
        LogRecord r = kmsg("Trigger reset", 0);
        int calls = 0;

        assert_int_equal(rule_set_match(rs, &r, stop_handler, &calls), -ECANCELED);
        assert_int_equal(calls, 1);
        assert_int_equal(rule_set_match(rs, &r, NULL, NULL), 2);
}

/* Lines built to poke at literals: present, split, at the edges, with NULs and high bytes. */
static const char *const probe_lines[] = {
        "",
        "a",
        "Trigger reset is on",
        "ena 0000:00:05.0 eth0: Trigger reset is on",
        "ena 0000:00:05.0 eth0: Trigger reset is o",
        "ena  eth0: Trigger reset is on",
        "xena 0000:00:05.0 eth0: Trigger reset is on",
        "nvme nvme0: I/O 123 QID 4 timeout, aborting",
        "nvme nvme0: I/O tag 123 (007b) opcode 0x2 (Read) QID 4 timeout, reset controller",
        "nvme nvme0: controller is down; will reset: CSTS=0xffffffff, PCI_STATUS=0xffff",
        "INFO: task kworker/u8:1:123 blocked for more than 120 seconds.",
        "INFO: task a:b:c:1 blocked for more than 1 seconds.",
        "watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [swapper/0:0]",
        "NMI watchdog: Watchdog detected hard LOCKUP on cpu 5",
        "rcu: INFO: rcu_preempt self-detected stall on CPU",
        "INFO: rcu_sched detected stalls on CPUs/tasks:",
        "Out of memory: Killed process 1 (a) total-vm:1kB",
        "Memory cgroup out of memory: Killed process 2 (b c) total-vm:1kB",
        "lib: Out of memory: Killed process",
        "ena 0000:00:05.0 eth0: NETDEV WATCHDOG: CPU: 3: transmit queue 2 timed out 5000 ms",
        "NETDEV WATCHDOG: eth0 (ena): transmit queue 0 timed out",
        "mce: [Hardware Error]: CPU 3: Machine Check Exception: 5 Bank 4: b200000000070f0f",
        "mce: [Hardware Error]: Machine check events logged",
        "kswapd0: page allocation failure: order:4, mode:0x40cc0(GFP_KERNEL|__GFP_COMP)",
        "EXT4-fs error (device sda1): ext4_find_entry:1455: inode #2: comm ls: reading directory lblock 0",
        "EXT4-fs error (device nvme0n1p1) in ext4_reserve_inode_write:5735: IO failure",
        "XFS (dm-0): Corruption detected. Unmount and run xfs_repair",
        "XFS (sdb): metadata I/O error in \"xfs_trans_read_buf_map\" at daddr 0x1 len 8 error 5",
        "TrTrTrigger reset is onn",
        "\xff\xfe Trigger reset is on \x80",
        "NETDEV WATCHDOG",
        "XF",
};

static void test_prefilter_changes_nothing_but_speed(void **state) {
        const char *root = getenv("TPROF_SOURCE_ROOT");
        _cleanup_free_ char *path = NULL;
        _cleanup_(rule_set_freep) RuleSet *rs = NULL;
        RuleError e = RULE_ERROR_NULL;
        RuleStats with, without;
        size_t hits = 0;

        assert_non_null(root);
        assert_true(asprintf(&path, "%s/rules", root) > 0);
        assert_int_equal(rule_set_load(path, &rs, &e), 0);

        /* Probe lines, each also with a NUL byte in the middle and truncated at every length. */
        for (size_t i = 0; i < ELEMENTSOF(probe_lines); i++) {
                size_t len = strlen(probe_lines[i]);
                for (size_t cut = 0; cut <= len; cut++)
                        for (int variant = 0; variant < 2; variant++) {
                                char buf[256];
                                Seen a = {}, b = {};
                                LogRecord r;

                                memcpy(buf, probe_lines[i], len);
                                if (variant == 1 && cut > 2)
                                        buf[cut / 2] = '\0';
                                r = kmsg(buf, 0);
                                r.message_len = cut;

                                rule_set_set_prefilter(rs, true);
                                int ka = rule_set_match(rs, &r, record_match, &a);
                                rule_set_set_prefilter(rs, false);
                                int kb = rule_set_match(rs, &r, record_match, &b);
                                assert_int_equal(ka, kb);
                                if (strcmp(a.names, b.names) != 0 || strcmp(a.captures, b.captures) != 0)
                                        fail_msg("prefilter changed the result for '%.*s': '%s' vs '%s'", (int) cut,
                                                 buf, a.names, b.names);
                                hits += (size_t) ka;
                        }
        }
        assert_true(hits > 20); /* the probes do exercise matches */

        /* And it does save work: regex runs on the same input, prefilter on vs off. */
        rule_set_reset_stats(rs);
        rule_set_set_prefilter(rs, true);
        for (size_t i = 0; i < ELEMENTSOF(probe_lines); i++) {
                LogRecord r = kmsg(probe_lines[i], 0);
                assert_true(rule_set_match(rs, &r, NULL, NULL) >= 0);
        }
        rule_set_get_stats(rs, &with);
        rule_set_reset_stats(rs);
        rule_set_set_prefilter(rs, false);
        for (size_t i = 0; i < ELEMENTSOF(probe_lines); i++) {
                LogRecord r = kmsg(probe_lines[i], 0);
                assert_true(rule_set_match(rs, &r, NULL, NULL) >= 0);
        }
        rule_set_get_stats(rs, &without);
        assert_int_equal(with.matches, without.matches);
        assert_true(with.regex_runs * 4 < without.regex_runs);
}

static void test_prefilter_random_lines(void **state) {
        /* Random lines over a small alphabet make literals and near misses frequent. */
        _cleanup_(rule_set_freep) RuleSet *rs = load("rules:\n"
                                                     "  - {name: a, source: kernel, match: 'abc'}\n"
                                                     "  - {name: b, source: kernel, match: '^ab?c+a'}\n"
                                                     "  - {name: c, source: kernel, match: 'b[ac]ca{2}b'}\n"
                                                     "  - {name: d, source: kernel, match: 'cab|bac'}\n"
                                                     "  - {name: e, source: kernel, match: '(?i)CAB'}\n"
                                                     "  - {name: f, source: kernel, match: 'aa\\.?b'}\n"
                                                     "  - {name: g, source: kernel, match: 'ca\\x62c'}\n"
                                                     "  - {name: h, source: kernel, match: 'c\\x61{2,}b'}\n"
                                                     "  - {name: i, source: kernel, match: '(a)b\\1c'}\n"
                                                     /* literals indexed past their first bytes, or at 0 */
                                                     "  - {name: j, source: kernel, match: '\\.\\.ab'}\n"
                                                     "  - {name: k, source: kernel, match: '\\.c\\.'}\n"
                                                     "  - {name: l, source: kernel, match: 'c\\.\\.ba'}\n");
        unsigned seed = 12345;

        for (int n = 0; n < 20000; n++) {
                char buf[24];
                size_t len = (size_t) (rand_r(&seed) % (int) sizeof buf);
                Seen a = {}, b = {};

                for (size_t i = 0; i < len; i++)
                        buf[i] = "abc."[rand_r(&seed) % 4];
                LogRecord r = kmsg(buf, 0);
                r.message_len = len;
                rule_set_set_prefilter(rs, true);
                assert_true(rule_set_match(rs, &r, record_match, &a) >= 0);
                rule_set_set_prefilter(rs, false);
                assert_true(rule_set_match(rs, &r, record_match, &b) >= 0);
                if (strcmp(a.names, b.names) != 0)
                        fail_msg("'%.*s': '%s' vs '%s'", (int) len, buf, a.names, b.names);
        }
}

/* Every alternative of every shipped rule fills the captures an incident is filed under. */
static void test_default_rules_capture_what_an_incident_needs(void **state) {
        static const struct {
                const char *line, *rule, *captures;
        } cases[] = {
                { "ena 0000:00:05.0 eth0: Keep alive watchdog timeout.", "ena-reset", "dev=eth0 pci=0000:00:05.0" },
                { "ena 0000:00:06.0 ens6: Keep alive watchdog timeout, 6012 msecs since last keep alive.", "ena-reset",
                  "dev=ens6 pci=0000:00:06.0" },
                { "ena 0000:00:05.0 eth0: The number of lost tx completions is above the threshold (129 > 128). Reset "
                  "the device",
                  "ena-reset", "dev=eth0 missed=129 pci=0000:00:05.0" },
                { "ena 0000:00:05.0 eth0: [1/2] Lost TX completions are above threshold (129 > 128), completion "
                  "timeout: 5000 (msec), 5120 msecs since interrupt, 5124 msecs since napi, qid: 3",
                  "ena-reset", "dev=eth0 missed=129 pci=0000:00:05.0" },
                { "ena 0000:00:05.0 eth0: Potential MSIX issue on Tx side Queue = 3. Reset the device", "ena-reset",
                  "dev=eth0 pci=0000:00:05.0 queue=3" },
                { "ena 0000:00:05.0 eth0: TX q 1 is paused for too long (threshold 5000000). usecs since napi "
                  "7000000. napi scheduled: 1. napi CPU: 11. msecs since interrupt: 7004",
                  "ena-reset", "cpu=11 dev=eth0 pci=0000:00:05.0 queue=1 threshold_usec=5000000" },
                { "ena 0000:00:05.0 eth0: TX q 2 is paused for too long (threshold 5000000). Time since last napi "
                  "6012000 usec. napi scheduled: 1",
                  "ena-reset", "dev=eth0 pci=0000:00:05.0 queue=2 threshold_usec=5000000" },
                { "ena 0000:00:05.0 eth0: Trigger reset is on", "ena-reset", "dev=eth0 pci=0000:00:05.0" },
                { "nvme nvme1: I/O tag 45 (002d) opcode 0x1 (Write) QID 2 timeout, aborting req_op:WRITE(1) size:4096",
                  "nvme-io-timeout", "action=aborting dev=nvme1 qid=2 tag=45" },
                { "nvme nvme0: I/O 137 QID 4 timeout, completion polled", "nvme-io-timeout",
                  "action=completion polled dev=nvme0 qid=4 tag=137" },
                { "nvme nvme0: controller is down; will reset: CSTS=0xffffffff, PCI_STATUS=0x10", "nvme-io-timeout",
                  "csts=0xffffffff dev=nvme0" },
                { "nvme nvme2: Removing after probe failure status: -19", "nvme-controller-removed",
                  "dev=nvme2 status=-19" },
                { "nvme nvme2: Disabling device after reset failure: -19", "nvme-controller-removed",
                  "dev=nvme2 status=-19" },
                { "nvme 0000:00:04.0: Timeout I/O 137 QID 4", "nvme-io-timeout", "dev=0000:00:04.0 qid=4 tag=137" },
                { "nvme 0000:00:04.0: I/O 137 QID 4 timeout, reset controller", "nvme-io-timeout",
                  "action=reset controller dev=0000:00:04.0 qid=4 tag=137" },
                { "nvme 0000:00:04.0: Device failed to resume", "nvme-controller-removed", "dev=0000:00:04.0" },
                { "watchdog: BUG: soft lockup - CPU#7 stuck for 22s! [stress-ng:9876]", "soft-lockup",
                  "comm=stress-ng cpu=7 pid=9876 secs=22" },
                { "NMI watchdog: Watchdog detected hard LOCKUP on cpu 3", "hard-lockup", "cpu=3" },
                { "INFO: rcu_tasks detected stalls on tasks:", "rcu-stall", "flavor=rcu_tasks" },
                /* Before 3.4: the CPU that reports its own stall names itself; 2.6.32-2.6.34 and RHEL 6
                 * name no flavour. */
                { "INFO: rcu_sched_state detected stall on CPU 0 (t=105060 jiffies)", "rcu-stall",
                  "cpu=0 flavor=rcu_sched_state" },
                { "INFO: RCU detected CPU 3 stall (t=60000 jiffies)", "rcu-stall", "cpu=3" },
                { "INFO: RCU detected CPU stalls: 3 (detected by 0, t=60002 jiffies)", "rcu-stall", "" },
                { "rcu_tasks_wait_gp: rcu_tasks_trace grace period number 4221 (since boot) is 10001 jiffies old.",
                  "rcu-stall", "flavor=rcu_tasks_trace" },
                { "tasks_rcu_exit_srcu_stall: rcu_tasks grace period number 57 (since boot) gp_state: "
                  "RTGS_POST_SCAN_TASKLIST is 10000 jiffies old.",
                  "rcu-stall", "flavor=rcu_tasks" },
                { "sched: RT throttling activated", "rt-throttling", "" },
                { "BUG: workqueue lockup - pool cpus=3 node=0 flags=0x0 nice=0 stuck for 41s!", "workqueue-lockup",
                  "cpu=3 secs=41" },
                { "BUG: workqueue lockup - pool cpus=0-7,16-23 flags=0x4 nice=0 stuck for 30s!", "workqueue-lockup",
                  "cpus=0-7,16-23 secs=30" },
                { "BUG: workqueue lockup - pool cpus=12 node=1 flags=0x0 nice=-20 stuck for 35s!", "workqueue-lockup",
                  "cpu=12 secs=35" },
                /* A BH pool, Linux 6.9 on: " bh" or " bh-hi" where other pools print " nice=%d". */
                { "BUG: workqueue lockup - pool cpus=3 node=0 flags=0x5 bh stuck for 31s!", "workqueue-lockup",
                  "cpu=3 secs=31" },
                { "BUG: workqueue lockup - pool cpus=5 node=0 flags=0x5 bh-hi stuck for 62s!", "workqueue-lockup",
                  "cpu=5 secs=62" },
                { "Clocksource tsc unstable (delta = -95326406 ns)", "clocksource-unstable", "clocksource=tsc" },
                { "Clocksource tsc unstable (delta = -95326406 ns).  Enable clocksource failover by adding "
                  "clocksource_failover kernel parameter.",
                  "clocksource-unstable", "clocksource=tsc" },
                { "timekeeping watchdog: Marking clocksource 'tsc' as unstable, because the skew is too large:",
                  "clocksource-unstable", "clocksource=tsc" },
                { "clocksource: timekeeping watchdog on CPU1: Marking clocksource 'tsc' as unstable because the skew "
                  "is too large:",
                  "clocksource-unstable", "clocksource=tsc cpu=1" },
                { "clocksource: timekeeping watchdog on CPU3: hpet read-back delay of 305381ns, attempt 4, marking "
                  "unstable",
                  "clocksource-unstable", "cpu=3 watchdog=hpet" },
                { "clocksource: timekeeping watchdog on CPU0: wd-tsc-early-wd excessive read-back delay of 1003810ns "
                  "vs. limit of 125000ns, wd-wd read-back delay only 31250ns, attempt 3, marking tsc-early unstable",
                  "clocksource-unstable", "clocksource=tsc-early cpu=0" },
                { "clocksource: Marking clocksource tsc unstable due to inter CPU skew", "clocksource-unstable",
                  "clocksource=tsc" },
                { "java invoked oom-killer: gfp_mask=0x6200ca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=0",
                  "oom-kill", "comm=java" },
                { "Out of memory: Killed process 4321 (java) total-vm:1kB", "oom-kill",
                  "comm=java pid=4321 scope=Out of memory" },
                { "Memory cgroup out of memory: Kill process 4321 (java) score 998 or sacrifice child", "oom-kill",
                  "comm=java pid=4321 scope=Memory cgroup out of memory" },
                { "Killed process 4321 (java) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB", "oom-kill",
                  "comm=java pid=4321" },
                { "Killed process 12345, UID 48, (httpd) total-vm:1023872kB, anon-rss:412356kB, file-rss:212kB",
                  "oom-kill", "comm=httpd pid=12345" },
                { "ibmvnic 30000002: Firmware reports error, cause: adapter problem. Starting recovery...", "nic-reset",
                  "vio=30000002" },
                { "ena 0000:00:05.0 eth0: NETDEV WATCHDOG: CPU: 2: transmit queue 3 timed out 5376 ms",
                  "netdev-tx-timeout", "cpu=2 dev=eth0 driver=ena queue=3" },
                { "NETDEV WATCHDOG: eth0 (ena): transmit queue 0 timed out", "netdev-tx-timeout",
                  "dev=eth0 driver=ena queue=0" },
                { "mce: [Hardware Error]: CPU 5: Machine Check Exception: 5 Bank 4: b200000000070f0f",
                  "machine-check", "bank=4 cpu=5" },
                { "mce: [Hardware Error]: CPU 0: Machine Check: 0 Bank 12: 8c000040000800c0", "machine-check",
                  "bank=12 cpu=0" },
                { "EDAC MC0: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0 (channel:1 slot:0)",
                  "machine-check", "count=1 mc=MC0 type=CE" },
                { "[Hardware Error]: CPU:2 (19:1:1) MC16_STATUS[-|CE|MiscV|AddrV|-|-|SyndV|CECC|-|-|-]: "
                  "0x9c2040000000011b",
                  "machine-check", "bank=16 cpu=2" },
                { "[Hardware Error]: MC4 Error (node 0): DRAM ECC error detected on the NB.", "machine-check",
                  "bank=4" },
                { "EDAC sbridge MC1: HANDLING MCE MEMORY ERROR", "machine-check", "mc=MC1" },
                { "EDAC skx MC2: CPU 24: Machine Check Event: 0x0 Bank 13: 0x8c00004000010091", "machine-check",
                  "bank=13 cpu=24 mc=MC2" },
                { "CPU 0: Machine Check Exception: 0 Bank 7: 8c00004000010090", "machine-check", "bank=7 cpu=0" },
                { "{3}Hardware error detected on CPU17", "machine-check", "cpu=17" },
                { "SError Interrupt on CPU3, code 0x00000000be000011 -- SError", "machine-check", "cpu=3" },
                { "mce: Uncorrected hardware memory error in user-access at 1a2b3c000", "machine-check",
                  "addr=1a2b3c000" },
                { "mce: Kernel accessed poison in user space at 1a2b3c000", "machine-check", "addr=1a2b3c000" },
                { "Memory failure: 0x1a2b3c: recovery action for dirty LRU page: Recovered", "machine-check",
                  "pfn=0x1a2b3c" },
                { "MCE 0x1a2b3c: Killing java:4321 due to hardware memory corruption", "machine-check",
                  "pfn=0x1a2b3c" },
                { "NMI: PCI system error (SERR) for reason a1 on CPU 0.", "machine-check", "cpu=0 reason=a1" },
                { "NMI: IOCK error (debug interrupt?) for reason 71 on CPU 4.", "machine-check", "cpu=4 reason=71" },
                { "INFO: task kworker/u16:2:123 blocked for more than 120 seconds.", "hung-task",
                  "comm=kworker/u16:2 pid=123 secs=120" },
                { "java: page allocation failure. order:1, mode:0x20", "page-allocation-failure", "comm=java order=1" },
                { "Aborting journal on device dm-0-8.", "ext4-error", "dev=dm-0" },
                { "EXT4-fs (sda1): Remounting filesystem read-only", "ext4-error", "dev=sda1" },
                { "EXT4-fs (mmcblk0p2): failed to convert unwritten extents to written extents -- potential data loss!  "
                  "(inode 1234, error -5)",
                  "ext4-error", "dev=mmcblk0p2 inode=1234" },
                { "XFS (dm-0): xfs_do_force_shutdown(0x2) called from line 1196 of file fs/xfs/xfs_log.c. Return "
                  "address = xlog_ioend_work+0x6e/0x70 [xfs]",
                  "xfs-error", "dev=dm-0 flags=2" },
                { "XFS (sdb1): Log I/O Error (0x2) detected at xlog_ioend_work+0x6e/0x70 [xfs] "
                  "(fs/xfs/xfs_log.c:1377).  Shutting down filesystem.",
                  "xfs-error", "dev=sdb1" },
        };
        const char *root = getenv("TPROF_SOURCE_ROOT");
        _cleanup_free_ char *path = NULL;
        _cleanup_(rule_set_freep) RuleSet *rs = NULL;

        assert_true(asprintf(&path, "%s/rules", root) > 0);
        assert_int_equal(rule_set_load(path, &rs, NULL), 0);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                LogRecord r = kmsg(cases[i].line, 0);
                Seen s = {};

                assert_int_equal(rule_set_match(rs, &r, record_match, &s), 1);
                assert_string_equal(s.names, cases[i].rule);
                assert_string_equal(s.captures, cases[i].captures);
        }
}

static void test_journal_matches(void **state) {
        _cleanup_(rule_set_freep) RuleSet *rs = NULL;
        char **l = NULL;
        bool any;

        rs = load("rules:\n"
                  "  - {name: k, source: kernel, match: x}\n"
                  "  - {name: a, source: journal, unit: kubelet.service, uid: 0, match: x}\n"
                  "  - {name: b, source: journal, unit: kubelet.service, match: y}\n"
                  "  - {name: c, source: journal, exe: /usr/bin/containerd, match: x}\n"
                  "  - {name: d, source: journal, uid: 1000, match: x}\n"
                  "  - {name: e, source: journal, transport: audit, match: x}\n"
                  "  - {name: f, source: journal, comm: sshd, match: x}\n"
                  "  - {name: g, source: journal, match: x, enabled: false}\n");
        assert_int_equal(rule_set_journal_matches(rs, &l, &any), 0);
        assert_false(any);
        assert_string_equal(l[0], "_COMM=sshd");
        assert_string_equal(l[1], "_EXE=/usr/bin/containerd");
        assert_string_equal(l[2], "_SYSTEMD_UNIT=kubelet.service");
        assert_string_equal(l[3], "_TRANSPORT=audit");
        assert_string_equal(l[4], "_UID=1000");
        assert_null(l[5]);
        l = strv_free(l);
        rs = rule_set_free(rs);

        rs = load("rules:\n"
                  "  - {name: a, source: journal, unit: kubelet.service, match: x}\n"
                  "  - {name: b, source: journal, match: y}\n");
        assert_int_equal(rule_set_journal_matches(rs, &l, &any), 0);
        assert_true(any);
        l = strv_free(l);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_kernel_rules_need_kernel_origin_unless_origin_any),
                cmocka_unit_test(test_journal_rules_filter_on_trusted_fields_only),
                cmocka_unit_test(test_disabled_and_severity),
                cmocka_unit_test(test_named_captures_are_returned),
                cmocka_unit_test(test_catastrophic_pattern_hits_limit_promptly),
                cmocka_unit_test(test_handler_error_stops),
                cmocka_unit_test(test_prefilter_changes_nothing_but_speed),
                cmocka_unit_test(test_prefilter_random_lines),
                cmocka_unit_test(test_default_rules_capture_what_an_incident_needs),
                cmocka_unit_test(test_journal_matches),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The shipped rules and the incident trigger together: an event that prints several lines (the
 * OOM killer's header, task dump and kill; ENA's reason, then "Trigger reset is on"; an NVMe
 * abort, then its reset; the stack's NETDEV WATCHDOG, then ENA's or another driver's reset) becomes ONE incident,
 * opened by its first line, with the later lines joined as repeats, also when they are another
 * rule's that shares the first rule's cooldown group. The lines go through rule_set_match() and trigger_decide()/register() as
 * tprofd's manager calls them, one second apart on the kernel clock unless the event gives their times.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic/time-util.h"
#include "incident/incident-trigger.h"
#include "rules/rules.h"
#include "tests.h"

#define EVENT_LINES_MAX 8

typedef struct Event {
        const char *what;
        const char *rule; /* the one rule the event must open an incident of */
        const char *lines[EVENT_LINES_MAX];
        unsigned opens; /* the line that must open the incident, counted from 1; 0: the first that matches */
        unsigned at[EVENT_LINES_MAX]; /* each line's second, counted from the first; all 0: one second apart */
} Event;

/* The second of line i of e, counted from its first line. */
static uint64_t line_second(const Event *e, unsigned i) {
        for (unsigned k = 0; k < EVENT_LINES_MAX; k++)
                if (e->at[k] > 0)
                        return e->at[i];
        return i;
}

static const Event events[] = {
        { "ENA keep-alive reset, Linux 5.10", "ena-reset",
          { "ena 0000:00:05.0 eth0: Keep alive watchdog timeout.", "ena 0000:00:05.0 eth0: Trigger reset is on",
            "ena 0000:00:05.0: Device reset completed successfully" } },
        { "ENA lost TX completions, amzn-drivers 2.17", "ena-reset",
          { "ena 0000:00:06.0 ens6: [1/2] Lost TX completions are above threshold (129 > 128), completion timeout: "
            "5000 (msec), 5120 msecs since interrupt, 5124 msecs since napi, qid: 2",
            "ena 0000:00:06.0 ens6: [2/2] qid: 2, napi CPU: 5", "ena 0000:00:06.0 ens6: Resetting the device",
            "ena 0000:00:06.0 ens6: Trigger reset is on",
            "ena 0000:00:06.0: Device reset completed, status: 0, Driver info: Elastic Network Adapter (ENA) "
            "v2.17.0g" } },
        /* The admin command's own timeout comes a second before the timer finds the queue stopped. */
        { "ENA admin command lost, amzn-drivers 2.17", "ena-reset",
          { "ena 0000:00:05.0 eth0: The ena device didn't send a completion for the admin cmd 5 status 1",
            "ena 0000:00:05.0 eth0: Failed to submit get_feature command 7 error: -62",
            "ena 0000:00:05.0 eth0: ENA admin queue is not in running state!",
            "ena 0000:00:05.0 eth0: Trigger reset is on",
            "ena 0000:00:05.0: Device reset completed, status: 0, Driver info: Elastic Network Adapter (ENA) "
            "v2.17.0g" },
          1 },
        { "ENA admin interrupt lost, Linux 4.9", "ena-reset",
          { "ena: The ena device have completion but the driver didn't receive any MSI-X interrupt (cmd 4)",
            "ena 0000:00:05.0 eth0: ENA admin queue is not in running state!",
            "ena 0000:00:05.0 eth0: Trigger reset is on", "ena 0000:00:05.0: Device reset completed successfully" },
          1 },
        { "ENA admin polling timeout, amzn-drivers 2.2.10", "ena-reset",
          { "ena: Wait for completion (polling) timeout", "ena: Failed to submit get_feature command 7 error: -62",
            "ena 0000:00:05.0 eth0: ENA admin queue is not in running state!",
            "ena 0000:00:05.0 eth0: Trigger reset is on" },
          1 },
        { "ENA TX stall, Linux 6.12", "ena-reset",
          { "ena 0000:00:05.0 eth0: TX q 3 is paused for too long (threshold 5000000). Time since last napi 6012000 "
            "usec. napi scheduled: 1",
            "ena 0000:00:05.0 eth0: napi handler hasn't been called for a long time but is scheduled",
            "ena 0000:00:05.0 eth0: Trigger reset is on" } },
        { "NETDEV WATCHDOG on ENA, Linux 6.1", "netdev-tx-timeout",
          { "------------[ cut here ]------------", "NETDEV WATCHDOG: eth0 (ena): transmit queue 2 timed out",
            "WARNING: CPU: 3 PID: 0 at net/sched/sch_generic.c:525 dev_watchdog+0x207/0x210",
            "ena 0000:00:05.0 eth0: Transmit time out", "ena 0000:00:05.0 eth0: Trigger reset is on",
            "ena 0000:00:05.0: Device reset completed successfully" } },
        { "NETDEV WATCHDOG on ENA, Linux 6.12", "netdev-tx-timeout",
          { "ena 0000:00:05.0 eth0: NETDEV WATCHDOG: CPU: 3: transmit queue 2 timed out 5120 ms",
            "ena 0000:00:05.0 eth0: TX q 2 is paused for too long (threshold 5000000). Time since last napi 6012000 "
            "usec. napi scheduled: 1",
            "ena 0000:00:05.0 eth0: Trigger reset is on" } },
        /* Other drivers' own hang reports and the resets they start (rule nic-reset); Intel's is one record. */
        { "ixgbe TX unit hang and its reset, Linux 6.1", "nic-reset",
          { "ixgbe 0000:3b:00.0 ens1f0: Detected Tx Unit Hang \n  Tx Queue             <5>\n"
            "  TDH, TDT             <1a0>, <1c4>\n  next_to_use          <1c4>",
            "ixgbe 0000:3b:00.0 ens1f0: tx hang 1 detected on queue 5, resetting adapter",
            "ixgbe 0000:3b:00.0 ens1f0: initiating reset due to tx timeout", "ixgbe 0000:3b:00.0 ens1f0: Reset adapter",
            "ixgbe 0000:3b:00.0 ens1f0: NIC Link is Up 10 Gbps, Flow Control: RX/TX" } },
        { "mlx5 fatal error and recovery, Linux 6.1", "nic-reset",
          { "mlx5_core 0000:08:00.0: poll_health:824:(pid 0): Fatal error 1 detected",
            "mlx5_core 0000:08:00.0: print_health_info:431:(pid 0): assert_var[0] 0x00000001",
            "mlx5_core 0000:08:00.0: mlx5_health_try_recover:335:(pid 9): handling bad device here",
            "mlx5_core 0000:08:00.0: mlx5_health_try_recover:345:(pid 9): starting health recovery flow",
            "mlx5_core 0000:08:00.0: health recovery succeeded" } },
        { "NETDEV WATCHDOG on mlx5, Linux 6.1", "netdev-tx-timeout",
          { "------------[ cut here ]------------", "NETDEV WATCHDOG: eth2 (mlx5_core): transmit queue 3 timed out",
            "WARNING: CPU: 7 PID: 0 at net/sched/sch_generic.c:525 dev_watchdog+0x207/0x210",
            "mlx5_core 0000:08:00.0 eth2: TX timeout detected",
            "mlx5_core 0000:08:00.0 eth2: TX timeout on queue: 3, SQ: 0x8a, CQ: 0x4f2, SQ Cons: 0x1c SQ Prod: 0x2a, "
            "usecs since last trans: 8204000" } },
        /* WARN_ONCE(): a later stall of the same boot prints the driver's lines alone. */
        { "i40e TX timeout after the boot's first, Linux 5.15", "nic-reset",
          { "i40e 0000:3b:00.0 ens1f0: tx_timeout: VSI_seid: 390, Q 6, NTC: 0x1a, HWB: 0x1a, NTU: 0x2b, TAIL: 0x2b, "
            "INT: 0x1",
            "i40e 0000:3b:00.0 ens1f0: tx_timeout recovery level 1, txqueue 6",
            "i40e 0000:3b:00.0 ens1f0: NIC Link is Up, 25 Gbps Full Duplex, Flow Control: None" } },
        { "bnxt_en firmware fatal condition, Linux 6.12", "nic-reset",
          { "bnxt_en 0000:5e:00.0 ens2f0np0: Detected firmware fatal condition, initiating reset",
            "bnxt_en 0000:5e:00.0 ens2f0np0: Fatal firmware reset event, data1: 0x2, data2: 0x80000010, min wait 1500 "
            "ms, max wait 12000 ms" } },
        { "OOM kill, Linux 4.14", "oom-kill",
          { "java invoked oom-killer: gfp_mask=0x14200ca(GFP_HIGHUSER_MOVABLE), nodemask=(null),  order=0, "
            "oom_score_adj=0",
            "[ pid ]   uid  tgid total_vm      rss nr_ptes nr_pmds swapents oom_score_adj name",
            "Out of memory: Kill process 4321 (java) score 912 or sacrifice child",
            "Killed process 4321 (java) total-vm:12345678kB, anon-rss:8000000kB, file-rss:0kB, shmem-rss:0kB",
            "oom_reaper: reaped process 4321 (java), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB" } },
        { "cgroup OOM kill, Linux 6.1", "oom-kill",
          { "python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0",
            "Tasks state (memory values in pages):",
            "Memory cgroup out of memory: Killed process 777 (python3) total-vm:1048576kB, anon-rss:524288kB, "
            "file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:1200kB oom_score_adj:0" } },
        { "NVMe timeout, abort, reset, Linux 6.1", "nvme-io-timeout",
          { "nvme nvme0: I/O 137 (Write) QID 4 timeout, aborting", "nvme nvme0: Abort status: 0x371",
            "nvme nvme0: I/O 137 QID 4 timeout, reset controller" } },
        /* Linux 4.4: on the PCI device, "Timeout I/O" before the abort and again before the reset. */
        { "NVMe timeout, abort, reset, Linux 4.4", "nvme-io-timeout",
          { "nvme 0000:00:04.0: Timeout I/O 137 QID 4", "nvme 0000:00:04.0: Aborting I/O 137 QID 4",
            "nvme 0000:00:04.0: Timeout I/O 137 QID 4", "nvme 0000:00:04.0: I/O 137 QID 4 timeout, reset controller",
            "nvme 0000:00:04.0: Cancelling I/O 137 QID 4" },
          1 },
        { "ext4 journal abort, Linux 5.15", "ext4-error",
          { "Aborting journal on device nvme1n1p1-8.",
            "EXT4-fs error (device nvme1n1p1): ext4_journal_check_start:83: comm kworker/u16:1: Detected aborted "
            "journal",
            "EXT4-fs (nvme1n1p1): Remounting filesystem read-only" } },
        { "XFS log I/O error shutdown, Linux 5.4", "xfs-error",
          { "XFS (dm-0): log I/O error -5",
            "XFS (dm-0): xfs_do_force_shutdown(0x2) called from line 1250 of file fs/xfs/xfs_log.c. Return address "
            "= 00000000a1b2c3d4",
            "XFS (dm-0): Log I/O Error Detected. Shutting down filesystem",
            "XFS (dm-0): Please umount the filesystem and rectify the problem(s)" } },
        { "corrected memory error, Linux 6.6", "machine-check",
          { "mce: [Hardware Error]: Machine check events logged",
            "EDAC MC0: 1 CE memory read error on CPU_SrcID#0_MC#0_Chan#1_DIMM#0 (channel:1 slot:0 page:0x1a2b3c "
            "offset:0x0 grain:32 syndrome:0x0)" } },
        /* With an EDAC decoder loaded the core prints nothing; the decoder's first line opens. */
        { "corrected memory error through sb_edac, Linux 4.4", "machine-check",
          { "EDAC sbridge MC0: HANDLING MCE MEMORY ERROR",
            "EDAC sbridge MC0: CPU 0: Machine Check Event: 0 Bank 7: 8c00004000010090",
            "EDAC sbridge MC0: PROCESSOR 0:306f2 TIME 1700000000 SOCKET 0 APIC 0",
            "EDAC MC0: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0 (channel:1 slot:0 page:0x1a2b3c "
            "offset:0x0 grain:32 syndrome:0x0)" },
          1 },
        { "corrected memory error through mce_amd, Linux 6.19", "machine-check",
          { "[Hardware Error]: Corrected error, no action required.",
            "[Hardware Error]: CPU:2 (19:1:1) MC16_STATUS[-|CE|MiscV|AddrV|-|-|SyndV|CECC|-|-|-]: 0x9c2040000000011b",
            "[Hardware Error]: Error Addr: 0x00000001a2b3c5c0",
            "[Hardware Error]: IPID: 0x0000009600450f00, Syndrome: 0x000000005a020001",
            "EDAC MC0: 1 CE on mc#0csrow#1channel#0 (csrow:1 channel:0 page:0x1a2b3c offset:0x5c0 grain:64 "
            "syndrome:0x5a02)" },
          1 },
        /* A memory error a task consumed (SRAR), Linux 6.6 (arch/x86/kernel/cpu/mce/core.c):
         * kill_me_maybe() runs as task_work on the return to user space and calls memory_failure();
         * the notifier chain prints from a kworker, here after it. */
        { "recoverable memory error in user space, Linux 6.6", "machine-check",
          { "mce: Uncorrected hardware memory error in user-access at 1a2b3c000",
            "Memory failure: 0x1a2b3c: Sending SIGBUS to java:4321 due to hardware memory corruption",
            "Memory failure: 0x1a2b3c: recovery action for dirty LRU page: Recovered",
            "mce: [Hardware Error]: Machine check events logged",
            "EDAC MC0: 1 UE memory read error on CPU_SrcID#0_MC#0_Chan#1_DIMM#0 (channel:1 slot:0 page:0x1a2b3c "
            "offset:0x0 grain:32 syndrome:0x0)" },
          1 },
        /* Tasks RCU, Linux 6.6 (kernel/rcu/tasks.h, rcu_tasks_wait_gp(), check_holdout_task(); HZ
         * 250): the pre-stall lines 10, 40, 130 and 400 s into the grace period, then the stall
         * report at 600 s, inside the cooldown of the first. */
        { "Tasks RCU grace period held up, Linux 6.6", "rcu-stall",
          { "rcu_tasks_wait_gp: rcu_tasks grace period number 1093 (since boot) is 2502 jiffies old.",
            "rcu_tasks_wait_gp: rcu_tasks grace period number 1093 (since boot) is 10003 jiffies old.",
            "rcu_tasks_wait_gp: rcu_tasks grace period number 1093 (since boot) is 32504 jiffies old.",
            "rcu_tasks_wait_gp: rcu_tasks grace period number 1093 (since boot) is 100005 jiffies old.",
            "INFO: rcu_tasks detected stalls on tasks:",
            "00000000a1b2c3d4: .N nvcsw: 21/21 holdout: 1 idle_cpu: -1/3" },
          1,
          { 0, 30, 120, 390, 590, 590 } },
        /* The workqueue watchdog, Linux 6.6 (kernel/workqueue.c, wq_watchdog_timer_fn()): the lockup
         * line, the dump of busy workqueues and the stalled CPU's workers, and the same lockup again
         * a watchdog_thresh (30 s) later while the pool is still stuck. */
        { "workqueue lockup, Linux 6.6", "workqueue-lockup",
          { "BUG: workqueue lockup - pool cpus=1 node=0 flags=0x0 nice=0 stuck for 31s!",
            "Showing busy workqueues and worker pools:", "workqueue events: flags=0x0",
            "  pwq 2: cpus=1 node=0 flags=0x0 nice=0 active=3/256 refcnt=4",
            "pool 2: cpus=1 node=0 flags=0x0 nice=0 hung=31s workers=3 idle: 2207 31",
            "Showing backtraces of running workers in stalled CPU-bound worker pools:",
            "BUG: workqueue lockup - pool cpus=1 node=0 flags=0x0 nice=0 stuck for 62s!" },
          1,
          { 0, 0, 0, 0, 0, 0, 31 } },
        /* The clocksource watchdog, Linux 6.1 (kernel/time/clocksource.c, clocksource_watchdog();
         * arch/x86/kernel/tsc.c, tsc_cs_mark_unstable()): the report, its indented lines, the TSC's
         * own line and the switch to the reference clock. */
        { "TSC marked unstable, Linux 6.1", "clocksource-unstable",
          { "clocksource: timekeeping watchdog on CPU2: Marking clocksource 'tsc' as unstable because the skew is "
            "too large:",
            "clocksource:                       'hpet' wd_nsec: 505225238 wd_now: 69f7b3e wd_last: 66fa4b2 mask: "
            "ffffffff",
            "clocksource:                       'tsc' cs_nsec: 503858542 cs_now: 1c5c8d8dd96 cs_last: 1c5aaf8e4a0 "
            "mask: ffffffffffffffff",
            "clocksource:                       'tsc' is current clocksource.",
            "tsc: Marking TSC unstable due to clocksource watchdog", "clocksource: Switched to clocksource hpet" },
          1,
          { 0, 0, 0, 0, 0, 1 } },
        /* Linux 7.1's rewritten watchdog (watchdog_print_remote_skew()). */
        { "TSC marked unstable, Linux 7.1", "clocksource-unstable",
          { "clocksource: Marking clocksource tsc unstable due to inter CPU skew",
            "clocksource: CPU3     987654320512 < CPU0     987654321000 (cycles)",
            "tsc: Marking TSC unstable due to clocksource watchdog", "clocksource: Switched to clocksource hpet" },
          1,
          { 0, 0, 0, 1 } },
};

typedef struct Run {
        Trigger *trigger;
        uint64_t t_ns;
        unsigned line;
        unsigned n_new, n_joined, first_new_line;
        char first_rule[64]; /* the rule that opened the incident */
        char rules[256]; /* every rule that matched, comma-separated */
        int incident;    /* the cookie */
} Run;

static int on_match(const RuleMatch *m, const LogRecord *rec, void *userdata) {
        Run *r = userdata;
        void *cookie = NULL;
        uint64_t cooldown_ns = m->rule->cooldown_usec * NSEC_PER_USEC;
        size_t l = strlen(r->rules);

        snprintf(r->rules + l, sizeof r->rules - l, "%s%s", l ? "," : "", m->rule->name);
        switch (trigger_decide(r->trigger, rule_cooldown_key(m->rule), rec->t_ns, cooldown_ns, rec->t_ns, &cookie)) {
        case TRIGGER_NEW:
                if (r->n_new++ == 0) {
                        r->first_new_line = r->line;
                        snprintf(r->first_rule, sizeof r->first_rule, "%s", m->rule->name);
                }
                return trigger_register(r->trigger, rule_cooldown_key(m->rule), rec->t_ns, cooldown_ns, rec->t_ns,
                                        &r->incident);
        case TRIGGER_JOINED:
                assert_ptr_equal(cookie, &r->incident);
                r->n_joined++;
                return 0;
        default:
                fail_msg("rule %s: the trigger dropped a match", m->rule->name);
        }
        return 0;
}

static void test_one_event_is_one_incident(void **state) {
        const char *root = getenv("TPROF_SOURCE_ROOT");
        _cleanup_free_ char *path = NULL;
        _cleanup_(rule_set_freep) RuleSet *rs = NULL;

        assert_non_null(root);
        assert_true(asprintf(&path, "%s/rules/default.yaml", root) > 0);
        assert_int_equal(rule_set_load(path, &rs, NULL), 0);

        for (size_t e = 0; e < ELEMENTSOF(events); e++) {
                _cleanup_(trigger_freep) Trigger *t = trigger_new(NULL);
                Run run = { .trigger = t, .t_ns = 1000 * NSEC_PER_SEC };
                unsigned n_matching_lines = 0, first_matching_line = 0;

                assert_non_null(t);
                for (unsigned i = 0; i < EVENT_LINES_MAX && events[e].lines[i]; i++) {
                        LogRecord rec = LOG_RECORD_NULL;
                        int k;

                        rec.source = LOG_SOURCE_KMSG;
                        rec.kernel_origin = true;
                        rec.facility = 0;
                        rec.priority = 3;
                        rec.message = events[e].lines[i];
                        rec.message_len = strlen(events[e].lines[i]);
                        rec.t_ns = run.t_ns + line_second(&events[e], i) * NSEC_PER_SEC;
                        run.line = i;
                        run.rules[0] = '\0';
                        k = rule_set_match(rs, &rec, on_match, &run);
                        assert_true(k >= 0);
                        if (k > 1)
                                fail_msg("%s: line %u matched several rules: %s", events[e].what, i, run.rules);
                        if (k == 1 && n_matching_lines++ == 0)
                                first_matching_line = i;
                }
                if (strcmp(run.first_rule, events[e].rule) != 0)
                        fail_msg("%s: rule %s opened the incident, expected %s", events[e].what, run.first_rule,
                                 events[e].rule);
                if (run.n_new != 1)
                        fail_msg("%s: %u incidents, expected one", events[e].what, run.n_new);
                if (events[e].opens > 0 && run.first_new_line != events[e].opens - 1)
                        fail_msg("%s: the incident opened on line %u, not on line %u", events[e].what,
                                 run.first_new_line + 1, events[e].opens);
                if (run.first_new_line != first_matching_line)
                        fail_msg("%s: the incident opened on line %u, not on the first that matched (%u)",
                                 events[e].what, run.first_new_line, first_matching_line);
                if (n_matching_lines < 2 || run.n_joined != n_matching_lines - 1)
                        fail_msg("%s: %u lines matched, %u joined", events[e].what, n_matching_lines, run.n_joined);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_one_event_is_one_incident),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

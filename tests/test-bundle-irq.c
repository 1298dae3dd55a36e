/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bundle-analyze: interrupt work, keyed apart from the task it ran in, as the rankings, the
 * answer and where its rise ran count it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"

#include "bundle/bundle-analyze.h"

static void load_text(const char *text, Folded *ret) {
        _cleanup_fclose_ FILE *f = fmemopen((void *) text, strlen(text), "r");
        assert_non_null(f);
        assert_int_equal(folded_load_file(f, ret), 0);
}

/* The idle task's stacks at the kernel versions profile-irq.c read: perf's root, the boot CPU's or a
 * secondary's idle loop, then what the sample caught. */
#define IDLE_618 "swapper;common_startup_64;x86_64_start_kernel;x86_64_start_reservations;start_kernel;rest_init;" \
                 "cpu_startup_entry;do_idle;cpuidle_enter;cpuidle_enter_state;default_enter_idle;default_idle"
#define IDLE_510 "swapper/1;secondary_startup_64_no_verify;start_secondary;cpu_startup_entry;do_idle;cpuidle_enter;" \
                 "cpuidle_enter_state"
#define IDLE_419 "swapper/2;secondary_startup_64;start_secondary;cpu_startup_entry;do_idle;default_idle_call;" \
                 "arch_cpu_idle;default_idle"
#define IDLE_310 "swapper/1;start_secondary;cpu_startup_entry;cpu_idle_loop;arch_cpu_idle;default_idle"
#define IDLE_ARM64 "swapper/3;secondary_start_kernel;cpu_startup_entry;do_idle;default_idle_call;arch_cpu_idle;cpu_do_idle"

/* Which of the idle task's samples ran interrupt work, as the rankings key them: a leaf in the idle
 * loop's halt is idle; a hardirq or a softirq entered from it is work, at every version read; a
 * busy process's softirq stays its own; the folded line keeps its "swapper". */
static void test_irq_in_idle(void **state) {
        static const struct {
                const char *stack;
                bool irq;
        } cases[] = {
                /* idle: the halt (6.5+ pv_native_safe_halt, the mwait of intel_idle, polling, arm64's wfi) */
                { IDLE_618 ";pv_native_safe_halt", false },
                { IDLE_510 ";intel_idle", false },
                { IDLE_510 ";acpi_idle_enter;acpi_idle_do_entry", false },
                { IDLE_419 ";native_safe_halt", false },
                { IDLE_310 ";native_safe_halt", false },
                { "swapper/1;start_secondary;cpu_startup_entry;do_idle;cpu_idle_poll", false },
                { IDLE_ARM64, false },
                /* the idle task's own work, no interrupt in it: idle as ever */
                { "swapper;common_startup_64;x86_64_start_kernel;x86_64_start_reservations;start_kernel;rest_init;"
                  "cpu_startup_entry;schedule_idle;__schedule;finish_task_switch.isra.0",
                  false },
                { "swapper", false },
                /* softirq on the way out of an interrupt: 6.8+ handle_softirqs, 5.8+ __irq_exit_rcu and
                 * __do_softirq, 3.10-5.7 irq_exit and __do_softirq from do_IRQ or smp_*_interrupt */
                { IDLE_618 ";pv_native_safe_halt;asm_sysvec_call_function_single;sysvec_call_function_single;"
                           "__irq_exit_rcu;handle_softirqs;net_rx_action;__napi_poll;ena_io_poll",
                  true },
                { IDLE_510 ";intel_idle;asm_common_interrupt;common_interrupt;irq_exit_rcu;__do_softirq;"
                           "net_rx_action;__napi_poll;ixgbe_poll",
                  true },
                { IDLE_419 ";common_interrupt;do_IRQ;irq_exit;__do_softirq;net_rx_action;__napi_poll;mlx5e_napi_poll",
                  true },
                { IDLE_310 ";apic_timer_interrupt;smp_apic_timer_interrupt;irq_exit;__do_softirq;run_timer_softirq",
                  true },
                { IDLE_ARM64 ";el1h_64_irq;el1h_64_irq_handler;el1_interrupt;irq_exit_rcu;__do_softirq;"
                             "handle_softirqs;net_rx_action",
                  true },
                /* a hardirq handler itself */
                { IDLE_618 ";pv_native_safe_halt;asm_common_interrupt;common_interrupt;handle_edge_irq;"
                           "handle_irq_event;__handle_irq_event_percpu;vring_interrupt",
                  true },
                { IDLE_618 ";pv_native_safe_halt;asm_sysvec_apic_timer_interrupt;sysvec_apic_timer_interrupt;"
                           "__sysvec_apic_timer_interrupt;hrtimer_interrupt;__hrtimer_run_queues",
                  true },
                { IDLE_419 ";reschedule_interrupt;smp_reschedule_interrupt;scheduler_ipi", true },
                { IDLE_ARM64 ";el1h_64_irq;el1h_64_irq_handler;el1_interrupt;do_interrupt_handler;gic_handle_irq;"
                             "generic_handle_domain_irq;handle_fasteoi_irq;handle_irq_event;ena_intr_msix_io",
                  true },
                /* a hypervisor's callback vector before 5.8 (arch/x86/entry/entry_64.S at 4.14: apicinterrupt3
                 * HYPERVISOR_CALLBACK_VECTOR xen_hvm_callback_vector xen_evtchn_do_upcall, and
                 * hyperv_callback_vector hyperv_vector_handler, hv_stimer0_callback_vector
                 * hv_stimer0_vector_handler; a Xen PV guest's xen_do_hypervisor_callback calls
                 * xen_evtchn_do_upcall): the handler itself, no irq_exit below it yet. A Xen HVM guest's
                 * passed-through NIC interrupts arrive as event channels, a Hyper-V guest's VMBus and
                 * its direct-mode timer through their own vectors. */
                { IDLE_419 ";native_safe_halt;xen_hvm_callback_vector;xen_evtchn_do_upcall;__xen_evtchn_do_upcall;"
                           "evtchn_fifo_handle_events;handle_edge_irq;handle_irq_event;__handle_irq_event_percpu;"
                           "ena_intr_msix_io",
                  true },
                { IDLE_419 ";xen_safe_halt;xen_hypercall_sched_op;xen_do_hypervisor_callback;xen_evtchn_do_upcall;"
                           "__xen_evtchn_do_upcall",
                  true },
                { IDLE_419 ";native_safe_halt;hyperv_callback_vector;hyperv_vector_handler;vmbus_isr;vmbus_chan_sched",
                  true },
                { IDLE_419 ";native_safe_halt;hv_stimer0_callback_vector;hv_stimer0_vector_handler;hv_stimer0_isr;"
                           "hrtimer_interrupt",
                  true },
                /* a clone of a handler (".cold") is the handler */
                { IDLE_510 ";intel_idle;asm_common_interrupt;common_interrupt;irq_exit_rcu;__do_softirq.cold", true },
                /* a busy process's softirq, on the way out of an interrupt or at local_bh_enable: its own */
                { "java;[unknown];asm_common_interrupt;common_interrupt;irq_exit_rcu;__do_softirq;net_rx_action", false },
                { "nginx;__send;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_sendto;__sys_sendto;"
                  "tcp_sendmsg;__local_bh_enable_ip;do_softirq;handle_softirqs;net_rx_action",
                  false },
                { "ksoftirqd/1;ret_from_fork_asm;ret_from_fork;kthread;smpboot_thread_fn;run_ksoftirqd;handle_softirqs;"
                  "net_rx_action",
                  false },
                /* a program that calls itself swapper is no idle task, but is counted as one, by name */
                { "swapper;main;irq_exit", true },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(folded_donep) Folded f = FOLDED_NULL;
                _cleanup_free_ char *text = NULL, *fkey = NULL;
                const char *leaf = strrchr(cases[i].stack, ';');

                if (folded_stack_irq_in_idle(cases[i].stack) != cases[i].irq)
                        fail_msg("case %zu: %s", i, cases[i].stack);
                assert_true(asprintf(&text, "%s 7\njava;main 3\n", cases[i].stack) > 0);
                load_text(text, &f);
                /* the line itself keeps perf's root */
                assert_int_equal(strncmp(f.lines[0].stack, cases[i].stack, strlen(cases[i].stack)), 0);
                assert_true(folded_key_share(&f, RISE_PROCESS, "[irq in idle]") == (cases[i].irq ? 0.7 : 0));
                if (!leaf)
                        continue;
                assert_true(asprintf(&fkey, "[irq in idle];%s", leaf + 1) > 0);
                assert_true(folded_key_share(&f, RISE_FUNCTION, fkey) == (cases[i].irq ? 0.7 : 0));
        }

        /* A line as long as a line may be, its leaf a handler's name that fills it: its key, longer
         * than the line, is counted whole. */
        _cleanup_(folded_donep) Folded f = FOLDED_NULL;
        _cleanup_free_ char *text = NULL, *fkey = NULL;
        size_t leaf = FOLDED_LINE_MAX - strlen("swapper;") - strlen(" 1\n");

        text = malloc(FOLDED_LINE_MAX + 1);
        assert_non_null(text);
        memcpy(text, "swapper;sysvec_", strlen("swapper;sysvec_"));
        memset(text + strlen("swapper;sysvec_"), 'x', leaf - strlen("sysvec_"));
        strcpy(text + strlen("swapper;") + leaf, " 1\n");
        assert_int_equal(strlen(text), FOLDED_LINE_MAX);
        load_text(text, &f);
        assert_int_equal(f.n, 1);
        assert_true(asprintf(&fkey, "[irq in idle];%s", f.lines[0].stack + strlen("swapper;")) > 0);
        assert_true(folded_key_share(&f, RISE_FUNCTION, fkey) == 1);
}

/* A NIC's receive storm on a mostly idle 2-CPU host (a driver reset): the softirqs run in the idle
 * task, on the way out of the NIC's interrupts. The answer names that work, in its function that
 * rose most and under the interrupt, not idle nor the idle loop; the idle task's own falls. */
static void test_answer_irq_in_idle(void **state) {
        _cleanup_(folded_donep) Folded near = FOLDED_NULL, rest = FOLDED_NULL;
        _cleanup_(answer_done) Answer a = {};
        Rise *np = NULL, *nf = NULL;
        size_t n_np = 0, n_nf = 0;
#define IRQ_618 ";pv_native_safe_halt;asm_common_interrupt;common_interrupt;__irq_exit_rcu;handle_softirqs;net_rx_action;" \
                "__napi_poll;ena_io_poll"
#define TICK_618 ";pv_native_safe_halt;asm_sysvec_apic_timer_interrupt;sysvec_apic_timer_interrupt;" \
                 "__sysvec_apic_timer_interrupt;hrtimer_interrupt"
#define IDLE_618_SECONDARY "swapper/1;common_startup_64;start_secondary;cpu_startup_entry;do_idle;cpuidle_enter;" \
                           "cpuidle_enter_state;default_enter_idle;default_idle"

        /* 2 CPUs at 97 Hz, 10 s around the event, 60 s in the rest; the receive work on both. */
        load_text("sshd;main;poll 20\n"
                  IDLE_618 ";pv_native_safe_halt 700\n" IDLE_618_SECONDARY ";pv_native_safe_halt 640\n"
                  IDLE_618 IRQ_618 ";ena_clean_rx_irq 300\n" IDLE_618_SECONDARY IRQ_618 ";ena_clean_rx_irq 200\n"
                  IDLE_618 IRQ_618 ";napi_gro_receive 40\n" IDLE_618_SECONDARY TICK_618 " 20\n",
                  &near);
        load_text("sshd;main;poll 120\n"
                  IDLE_618 ";pv_native_safe_halt 5700\n" IDLE_618_SECONDARY ";pv_native_safe_halt 5760\n"
                  IDLE_618_SECONDARY TICK_618 " 60\n",
                  &rest);

        assert_int_equal(folded_rises(&near, &rest, RISE_PROCESS, SIZE_MAX, &np, &n_np), 0);
        assert_int_equal(folded_rises(&near, &rest, RISE_FUNCTION, SIZE_MAX, &nf, &n_nf), 0);
        assert_true(n_np >= 1);
        assert_string_equal(np[0].name, "[irq in idle]");
        assert_int_equal(np[0].slice, 560);
        assert_int_equal(np[0].baseline, 60);
        assert_string_equal(np[0].top_function, "ena_clean_rx_irq");
        assert_true(n_nf >= 1);
        assert_string_equal(nf[0].name, "[irq in idle];ena_clean_rx_irq");

        AnswerInput in = { .near_proc = np, .n_near_proc = n_np, .near_func = nf, .n_near_func = n_nf,
                           .near = &near, .rest = &rest, .n_cpus = 2 };
        assert_int_equal(answer_choose(&in, &near, NULL, &a), 0);
        assert_non_null(a.rise.name);
        assert_string_equal(a.rise.name, "[irq in idle]");
        assert_true(a.clear);
        assert_int_equal(a.from, ANSWER_NEAR_PROCESS);
        /* under the receive path (ena_io_poll is in every stack of it), not the boot CPU's idle
         * loop (start_kernel, rest_init: 340 of the 560, all of them beyond the rest's share) */
        assert_non_null(a.under);
        assert_string_equal(a.under, "ena_clean_rx_irq");
        rises_free(np, n_np);
        rises_free(nf, n_nf);
#undef IRQ_618
#undef TICK_618
#undef IDLE_618_SECONDARY
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_irq_in_idle),
                cmocka_unit_test(test_answer_irq_in_idle),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

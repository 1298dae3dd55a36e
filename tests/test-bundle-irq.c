/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bundle-analyze: interrupt work, keyed "[irq]" apart from the task it ran in (the idle task or a
 * busy process), as the rankings, the answer and where its rise ran count it.
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

typedef struct IrqCase {
        const char *stack;
        bool irq;
} IrqCase;

/* Each case's stack keyed "[irq]" by the rankings, or its comm's; the folded line keeps its comm. */
static void check_irq_cases(const IrqCase *cases, size_t n) {
        for (size_t i = 0; i < n; i++) {
                _cleanup_(folded_donep) Folded f = FOLDED_NULL;
                _cleanup_free_ char *text = NULL, *fkey = NULL;
                const char *leaf = strrchr(cases[i].stack, ';');

                if (folded_stack_irq(cases[i].stack) != cases[i].irq)
                        fail_msg("case %zu: %s", i, cases[i].stack);
                assert_true(asprintf(&text, "%s 7\nsshd;main 3\n", cases[i].stack) > 0);
                load_text(text, &f);
                /* the line itself keeps perf's root */
                assert_int_equal(strncmp(f.lines[0].stack, cases[i].stack, strlen(cases[i].stack)), 0);
                assert_true(folded_key_share(&f, RISE_PROCESS, "[irq]") == (cases[i].irq ? 0.7 : 0));
                if (!leaf)
                        continue;
                assert_true(asprintf(&fkey, "[irq];%s", leaf + 1) > 0);
                assert_true(folded_key_share(&f, RISE_FUNCTION, fkey) == (cases[i].irq ? 0.7 : 0));
        }
}

/* Which of the idle task's samples ran interrupt work, as the rankings key them: a leaf in the idle
 * loop's halt is idle; a hardirq or a softirq entered from it is work, at every version read; the
 * folded line keeps its "swapper". */
static void test_irq_in_idle(void **state) {
        static const IrqCase cases[] = {
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
                /* a program that calls itself swapper is no idle task, but is counted as one, by name */
                { "swapper;main;irq_exit", true },
        };

        check_irq_cases(cases, ELEMENTSOF(cases));

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
        assert_true(asprintf(&fkey, "[irq];%s", f.lines[0].stack + strlen("swapper;")) > 0);
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
        assert_string_equal(np[0].name, "[irq]");
        assert_int_equal(np[0].slice, 560);
        assert_int_equal(np[0].baseline, 60);
        assert_string_equal(np[0].top_function, "ena_clean_rx_irq");
        assert_true(n_nf >= 1);
        assert_string_equal(nf[0].name, "[irq];ena_clean_rx_irq");

        AnswerInput in = { .near_proc = np, .n_near_proc = n_np, .near_func = nf, .n_near_func = n_nf,
                           .near = &near, .rest = &rest, .n_cpus = 2 };
        assert_int_equal(answer_choose(&in, &near, NULL, &a), 0);
        assert_non_null(a.rise.name);
        assert_string_equal(a.rise.name, "[irq]");
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

/* A busy process's stacks at the kernel versions profile-irq.c read: x86 5.8+ (asm_common_interrupt
 * and sysvec_*, irq_exit_rcu, handle_softirqs from 6.8, kernel/entry/common.c's way back), x86 4.19
 * (common_interrupt -> do_IRQ, irq_exit; retint_user -> prepare_exit_to_usermode), arm64 5.13+
 * (el0t_64_irq and el1h_64_irq, el0_interrupt and el1_interrupt, do_notify_resume). An interrupt
 * that arrived, from user mode (the entry the kernel chain's root) or in a system call, and the
 * softirqs on its way out are interrupt work; a softirq the process ran itself at local_bh_enable,
 * its own kernel work, and its own work on an interrupt's way back are the process's. */
#define PREAD_68 "postgres;__libc_pread64;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_pread64;" \
                 "ksys_pread64;vfs_read;filemap_read;copy_page_to_iter;_copy_to_iter"
#define RX_68 ";asm_common_interrupt;common_interrupt;irq_exit_rcu;handle_softirqs;net_rx_action;__napi_poll;" \
              "ena_io_poll;ena_clean_rx_irq"
static void test_irq_in_process(void **state) {
        static const IrqCase cases[] = {
                /* a NIC's softirq on the way out of common_interrupt, from user mode: the entry is the
                 * kernel chain's root, above the process's user frames */
                { "java;Interpreter;JavaCalls::call_helper" RX_68, true },
                /* the same interrupt in a system call, above the process's own kernel frames */
                { PREAD_68 RX_68, true },
                /* 4.19, from user mode */
                { "nginx;ngx_worker_process_cycle;ngx_process_events_and_timers;common_interrupt;do_IRQ;irq_exit;"
                  "__do_softirq;net_rx_action;mlx5e_napi_poll",
                  true },
                /* arm64 5.13+, from user mode and in a system call */
                { "nginx;ngx_epoll_process_events;el0t_64_irq;el0t_64_irq_handler;el0_interrupt;irq_exit_rcu;"
                  "__do_softirq;net_rx_action;__napi_poll;ena_io_poll",
                  true },
                { "redis-server;write;el0t_64_sync;el0t_64_sync_handler;el0_svc;do_el0_svc;invoke_syscall;"
                  "__arm64_sys_write;ksys_write;vfs_write;el1h_64_irq;el1h_64_irq_handler;el1_interrupt;"
                  "do_interrupt_handler;gic_handle_irq;generic_handle_domain_irq;handle_fasteoi_irq;"
                  "handle_irq_event;ena_intr_msix_io",
                  true },
                /* the timer interrupt's own handler */
                { "java;Interpreter;asm_sysvec_apic_timer_interrupt;sysvec_apic_timer_interrupt;"
                  "__sysvec_apic_timer_interrupt;hrtimer_interrupt;__hrtimer_run_queues;tick_nohz_handler",
                  true },
                /* a NIC's interrupt in the middle of a softirq the process ran itself */
                { "nginx;__send;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_sendto;__sys_sendto;"
                  "tcp_sendmsg;__local_bh_enable_ip;do_softirq;handle_softirqs;net_rx_action;__napi_poll;"
                  "process_backlog;asm_common_interrupt;common_interrupt;handle_edge_irq;handle_irq_event;"
                  "ena_intr_msix_io",
                  true },
                /* a loopback sender's own softirq, at local_bh_enable: the sender's */
                { "nginx;__send;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_sendto;__sys_sendto;"
                  "tcp_sendmsg;tcp_push;__tcp_transmit_skb;ip_finish_output2;__dev_queue_xmit;__local_bh_enable_ip;"
                  "do_softirq;handle_softirqs;net_rx_action;__napi_poll;process_backlog;__netif_receive_skb",
                  false },
                /* its own kernel work, no interrupt in it */
                { PREAD_68, false },
                /* ksoftirqd runs softirqs as its work */
                { "ksoftirqd/1;ret_from_fork_asm;ret_from_fork;kthread;smpboot_thread_fn;run_ksoftirqd;handle_softirqs;"
                  "net_rx_action",
                  false },
                /* its own work on an interrupt's way back: 5.8+ NUMA balancing's task work on the way to
                 * user mode, a SIGKILL's exit, preemption in the kernel */
                { "java;[unknown];asm_sysvec_apic_timer_interrupt;sysvec_apic_timer_interrupt;irqentry_exit_to_user_mode;"
                  "exit_to_user_mode_loop;task_work_run;task_numa_work;change_prot_numa",
                  false },
                { "stress-ng;[unknown];asm_sysvec_reschedule_ipi;sysvec_reschedule_ipi;irqentry_exit_to_user_mode;"
                  "exit_to_user_mode_loop;arch_do_signal_or_restart;get_signal;do_group_exit;do_exit;mmput;exit_mmap;"
                  "unmap_vmas",
                  false },
                { PREAD_68 ";asm_sysvec_apic_timer_interrupt;sysvec_apic_timer_interrupt;irqentry_exit;"
                           "dynamic_irqentry_exit_cond_resched;raw_irqentry_exit_cond_resched;preempt_schedule_irq;"
                           "__schedule;finish_task_switch.isra.0",
                  false },
                /* 4.19's and arm64's way back to user mode */
                { "java;[unknown];retint_user;prepare_exit_to_usermode;exit_to_usermode_loop;task_work_run;task_numa_work",
                  false },
                { "java;[unknown];el0t_64_irq;el0t_64_irq_handler;el0_interrupt;do_notify_resume;task_work_run;"
                  "task_numa_work",
                  false },
                /* a process's comm alone */
                { "java", false },
        };

        check_irq_cases(cases, ELEMENTSOF(cases));
        /* under the interrupt's entry, as rise_under counts it: not the process's frames below */
        assert_string_equal(folded_stack_irq_from(PREAD_68 RX_68), RX_68 + 1);
        assert_null(folded_stack_irq_from(PREAD_68));
}

/* A NIC's receive storm on a busy 2-CPU host (a driver reset): the softirqs run on the way out of
 * the NIC's interrupts in whichever of eight busy processes ran, a little each, so that none of
 * them rose. The answer names the interrupt work, as [irq], in its function that rose most and
 * under the receive path, not the processes' own frames. */
static void test_answer_irq_spread(void **state) {
        static const char *const procs[] = {
                "java;Interpreter;JavaCalls::call_helper", "postgres;PostgresMain;exec_simple_query",
                "nginx;ngx_worker_process_cycle;ngx_process_events_and_timers", "redis-server;aeMain;aeProcessEvents",
                "envoy;Envoy::Event::DispatcherImpl::run", "node;uv_run;uv__io_poll",
                "python3;_PyEval_EvalFrameDefault", "mysqld;do_command;dispatch_command",
        };
        _cleanup_(folded_donep) Folded near = FOLDED_NULL, rest = FOLDED_NULL;
        _cleanup_(answer_done) Answer a = {};
        _cleanup_free_ char *tn = NULL, *tr = NULL;
        Rise *np = NULL, *nf = NULL;
        size_t n_np = 0, n_nf = 0, ln = 0, lr = 0;
        FILE *fn = open_memstream(&tn, &ln), *fr = open_memstream(&tr, &lr);

        /* 2 CPUs at 97 Hz, busy: 10 s around the event, 60 s in the rest. Each process keeps its
         * eighth of the CPUs in both; around the event 30 of its 240 samples are the NIC's. */
        assert_non_null(fn);
        assert_non_null(fr);
        for (size_t i = 0; i < ELEMENTSOF(procs); i++) {
                fprintf(fn, "%s 210\n%s" RX_68 " 25\n%s" RX_68 ";napi_gro_receive 5\n", procs[i], procs[i], procs[i]);
                fprintf(fr, "%s 1453\n%s" RX_68 " 2\n", procs[i], procs[i]);
        }
        assert_int_equal(fclose(fn), 0);
        assert_int_equal(fclose(fr), 0);
        load_text(tn, &near);
        load_text(tr, &rest);

        /* the rest of a bundle (all of it but the event's seconds) keys it as its files do */
        {
                _cleanup_(folded_donep) Folded back = FOLDED_NULL;

                assert_int_equal(folded_rest(&near, &rest, &near, &back), 0);
                assert_true(folded_key_share(&back, RISE_PROCESS, "[irq]") == folded_key_share(&rest, RISE_PROCESS, "[irq]"));
                assert_true(folded_key_share(&back, RISE_PROCESS, "[irq]") > 0);
        }
        assert_int_equal(folded_rises(&near, &rest, RISE_PROCESS, SIZE_MAX, &np, &n_np), 0);
        assert_int_equal(folded_rises(&near, &rest, RISE_FUNCTION, SIZE_MAX, &nf, &n_nf), 0);
        assert_true(n_np >= 1);
        assert_string_equal(np[0].name, "[irq]");
        assert_int_equal(np[0].slice, 240);
        assert_int_equal(np[0].baseline, 16);
        assert_string_equal(np[0].top_function, "ena_clean_rx_irq");
        for (size_t i = 1; i < n_np; i++) /* no process of the eight rose */
                assert_true(np[i].slice_share < 2 * np[i].baseline_share);
        assert_true(n_nf >= 1);
        assert_string_equal(nf[0].name, "[irq];ena_clean_rx_irq");

        AnswerInput in = { .near_proc = np, .n_near_proc = n_np, .near_func = nf, .n_near_func = n_nf,
                           .near = &near, .rest = &rest, .n_cpus = 2 };
        assert_int_equal(answer_choose(&in, &near, NULL, &a), 0);
        assert_non_null(a.rise.name);
        assert_string_equal(a.rise.name, "[irq]");
        assert_true(a.clear);
        assert_int_equal(a.from, ANSWER_NEAR_PROCESS);
        /* under the NIC's receive path, never a process's own frames (each an eighth of the rise) */
        if (a.under)
                for (size_t i = 0; i < ELEMENTSOF(procs); i++)
                        assert_null(strstr(procs[i], a.under));
        rises_free(np, n_np);
        rises_free(nf, n_nf);
}

/* Where the softirqs land (kernel/softirq.c, 6.12: the hard interrupt's handler runs with interrupts
 * disabled, and handle_softirqs() enables them before the first softirq's handler; __do_softirq()
 * at 4.14 to 6.1): cpu-clock's samples due meanwhile are taken there, handle_softirqs as their leaf,
 * the hard interrupts' time and no softirq's work. A NIC's receive storm on a mostly idle 2-CPU
 * host (6.18) is named in its handler's leaf and under its poll, not in handle_softirqs. */
static void test_irq_softirq_landing(void **state) {
        _cleanup_(folded_donep) Folded near = FOLDED_NULL, rest = FOLDED_NULL;
        _cleanup_free_ char *u = NULL;
        Rise *np = NULL;
        size_t n_np = 0;
#define OUT_618 ";pv_native_safe_halt;asm_common_interrupt;common_interrupt;__irq_exit_rcu;handle_softirqs"
#define TICK_618 ";pv_native_safe_halt;asm_sysvec_apic_timer_interrupt;sysvec_apic_timer_interrupt;" \
                 "__sysvec_apic_timer_interrupt;hrtimer_interrupt"
#define IDLE_618_SECONDARY "swapper/1;common_startup_64;start_secondary;cpu_startup_entry;do_idle;cpuidle_enter;" \
                           "cpuidle_enter_state;default_enter_idle;default_idle"

        /* 2 CPUs at 97 Hz, 10 s around the event, 60 s in the rest. */
        load_text("sshd;main;poll 20\n"
                  IDLE_618 ";pv_native_safe_halt 700\n" IDLE_618_SECONDARY ";pv_native_safe_halt 640\n"
                  IDLE_618 OUT_618 " 120\n" IDLE_618_SECONDARY OUT_618 " 80\n"
                  IDLE_618 OUT_618 ";net_rx_action;__napi_poll;ena_io_poll;ena_clean_rx_irq 74\n"
                  IDLE_618_SECONDARY OUT_618 ";net_rx_action;__napi_poll;ena_io_poll;napi_gro_receive 66\n"
                  IDLE_618_SECONDARY TICK_618 " 20\n",
                  &near);
        load_text("sshd;main;poll 120\n"
                  IDLE_618 ";pv_native_safe_halt 5700\n" IDLE_618_SECONDARY ";pv_native_safe_halt 5760\n"
                  IDLE_618_SECONDARY TICK_618 " 60\n",
                  &rest);
        assert_int_equal(folded_rises(&near, &rest, RISE_PROCESS, SIZE_MAX, &np, &n_np), 0);
        assert_true(n_np >= 1);
        assert_string_equal(np[0].name, "[irq]");
        assert_non_null(np[0].top_function);
        assert_string_equal(np[0].top_function, "ena_clean_rx_irq");
        rises_free(np, n_np);
        assert_int_equal(folded_rise_under(&near, &rest, "[irq]", &u), 0);
        assert_non_null(u);
        assert_string_equal(u, "ena_io_poll");
        u = mfree(u);

        /* At 4.14 to 6.1 __do_softirq, below irq_exit or __irq_exit_rcu: the same. */
        folded_done(&near);
        load_text("sshd;main;poll 20\n"
                  IDLE_419 " 1340\n"
                  IDLE_419 ";common_interrupt;do_IRQ;irq_exit;__do_softirq 200\n"
                  IDLE_419 ";common_interrupt;do_IRQ;irq_exit;__do_softirq;net_rx_action;mlx5e_napi_poll;"
                  "mlx5e_poll_rx_cq 140\n",
                  &near);
        folded_done(&rest);
        load_text("sshd;main;poll 120\n" IDLE_419 " 11520\n", &rest);
        assert_int_equal(folded_rises(&near, &rest, RISE_PROCESS, SIZE_MAX, &np, &n_np), 0);
        assert_true(n_np >= 1);
        assert_string_equal(np[0].name, "[irq]");
        assert_non_null(np[0].top_function);
        assert_string_equal(np[0].top_function, "mlx5e_poll_rx_cq");
        rises_free(np, n_np);

        /* A rise spread over three softirqs, none of them with half of it, is under none: not
         * under the interrupt's way out that all of them took. */
        folded_done(&near);
        folded_done(&rest);
        load_text("sshd;main;poll 120\n"
                  IDLE_618 ";pv_native_safe_halt 5700\n" IDLE_618_SECONDARY ";pv_native_safe_halt 5760\n"
                  IDLE_618_SECONDARY TICK_618 " 60\n",
                  &rest);
        load_text("sshd;main;poll 20\n"
                  IDLE_618 ";pv_native_safe_halt 700\n" IDLE_618_SECONDARY ";pv_native_safe_halt 640\n"
                  IDLE_618 OUT_618 ";net_rx_action;__napi_poll;ena_io_poll;ena_clean_rx_irq 70\n"
                  IDLE_618 OUT_618 ";run_timer_softirq;__run_timers;call_timer_fn;tcp_write_timer 70\n"
                  IDLE_618_SECONDARY OUT_618 ";rcu_core;rcu_do_batch;kmem_cache_free 20\n"
                  IDLE_618_SECONDARY TICK_618 " 60\n",
                  &near);
        assert_int_equal(folded_rise_under(&near, &rest, "[irq]", &u), 0);
        if (u)
                fail_msg("under %s", u);
#undef OUT_618
#undef TICK_618
#undef IDLE_618_SECONDARY
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_irq_in_idle),
                cmocka_unit_test(test_answer_irq_in_idle),
                cmocka_unit_test(test_irq_in_process),
                cmocka_unit_test(test_answer_irq_spread),
                cmocka_unit_test(test_irq_softirq_landing),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

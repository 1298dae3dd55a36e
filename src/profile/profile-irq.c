/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The frame names of the kernel's interrupt entry and exit paths and of its idle loop
 * (profile-irq.h), read in the kernel's sources:
 *
 *  - 3.10 (x86): a device interrupt enters through the common_interrupt stub (entry_64.S) into
 *    do_IRQ (arch/x86/kernel/irq.c), the local timer through apic_timer_interrupt into
 *    smp_apic_timer_interrupt (apic/apic.c), the IPIs through call_function_single_interrupt,
 *    reschedule_interrupt, irq_work_interrupt... into smp_call_function_single_interrupt,
 *    smp_reschedule_interrupt, smp_irq_work_interrupt, smp_x86_platform_ipi; each ends in
 *    irq_exit (kernel/softirq.c), whose invoke_softirq runs __do_softirq; back through
 *    ret_from_intr. do_softirq/call_softirq run it on the IRQ stack elsewhere.
 *  - 4.14 to 5.4 (x86): the same names (do_IRQ, smp_*_interrupt, irq_exit, __do_softirq).
 *  - 5.8 and later (x86, arch/x86/include/asm/idtentry.h): DEFINE_IDTENTRY_IRQ(common_interrupt)
 *    behind the asm_common_interrupt stub, DEFINE_IDTENTRY_SYSVEC's sysvec_* handlers (with
 *    __sysvec_* and the asm_sysvec_* stubs: sysvec_apic_timer_interrupt,
 *    sysvec_call_function_single, sysvec_reschedule_ipi...); the way out is irq_exit_rcu and
 *    __irq_exit_rcu (kernel/softirq.c), still into __do_softirq.
 *  - 6.8 and later: __do_softirq's body is handle_softirqs (kernel/softirq.c), which
 *    __irq_exit_rcu's invoke_softirq calls when it does not switch stacks.
 *  - 3.10 to 5.7 (x86), a hypervisor's callback vector (entry_64.S: apicinterrupt3
 *    HYPERVISOR_CALLBACK_VECTOR ...): xen_hvm_callback_vector into xen_evtchn_do_upcall (a Xen HVM
 *    guest's event channels, its passed-through NICs' MSIs among them; a PV guest's
 *    xen_do_hypervisor_callback calls it too, and xen_pv_evtchn_do_upcall from 5.8),
 *    hyperv_callback_vector into hyperv_vector_handler (Hyper-V's VMBus), from 4.16
 *    hv_stimer0_callback_vector into hv_stimer0_vector_handler (its direct-mode timer) and
 *    hyperv_reenlightenment_vector into hyperv_reenlightenment_intr. None is an smp_*_interrupt;
 *    from 5.8 they are sysvec_xen_hvm_callback, sysvec_hyperv_callback, sysvec_hyperv_stimer0...
 *  - arm64: entry.S el1_irq, el0_irq (el0_irq_naked, el0_irq_compat) and the handle_arch_irq they
 *    call, gic_handle_irq (drivers/irqchip/irq-gic.c, irq-gic-v3.c) through handle_domain_irq
 *    until 5.13; 5.12 entry-common.c el1_irq_handler -> el1_interrupt and el0_irq_handler ->
 *    __el0_irq_handler_common -> el0_interrupt; from 5.13 el1h_64_irq(_handler),
 *    el0t_64_irq(_handler), el0t_32_irq(_handler) and the FIQs' alike, into el1_interrupt or
 *    el0_interrupt -> do_interrupt_handler -> gic_handle_irq (generic_handle_domain_irq),
 *    irq_exit_rcu -> __do_softirq (handle_softirqs from 6.8).
 *
 * Those are split by what they tell of a task other than the idle task: the entry frames, and the
 * handlers only an interrupt runs, say an interrupt arrived; the exit and softirq frames do not, as
 * a task runs softirqs itself where it enables them again (local_bh_enable -> do_softirq, a
 * loopback sender's net_rx_action). An interrupt's way back runs the interrupted task's own work
 * under the entry frames: preemption (preempt_schedule_irq from 3.10 retint_kernel,
 * irqentry_exit_cond_resched and its raw_ and dynamic_ forms from 5.8, arm64_preempt_schedule_irq)
 * and, back to user mode, its signals (a SIGKILL's exit), task work (task_numa_work) and schedule
 * (5.8+ kernel/entry/common.c irqentry_exit_to_user_mode -> exit_to_user_mode_prepare ->
 * exit_to_user_mode_loop; 4.1 to 5.7 x86 retint_user -> prepare_exit_to_usermode ->
 * exit_to_usermode_loop; 3.10 retint_careful, retint_signal -> do_notify_resume; arm64
 * exit_to_user_mode -> prepare_exit_to_user_mode -> do_notify_resume, arm64_exit_to_user_mode).
 *
 * The idle loop: do_idle (kernel/sched/idle.c; cpu_idle_loop before 4.9), cpuidle_enter_state,
 * default_idle_call, arch_cpu_idle, default_idle and its halt (native_safe_halt, and
 * pv_native_safe_halt since 6.5), mwait_idle_with_hints, intel_idle, acpi_idle_do_entry,
 * cpu_idle_poll; arm64's cpu_do_idle.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "basic/macro.h"
#include "profile/profile-irq.h"

static bool name_starts(const char *name, size_t len, const char *s) {
        size_t l = strlen(s);
        return len > l && memcmp(name, s, l) == 0;
}

static bool name_ends(const char *name, size_t len, const char *s) {
        size_t l = strlen(s);
        return len > l && memcmp(name + len - l, s, l) == 0;
}

typedef struct Name {
        const char *s;
        size_t len;
        ProfileKernelFrame kind;
} Name;
#define E(s) { s, sizeof(s) - 1, PROFILE_KERNEL_FRAME_IRQ_ENTRY }
#define S(s) { s, sizeof(s) - 1, PROFILE_KERNEL_FRAME_SOFTIRQ }
#define R(s) { s, sizeof(s) - 1, PROFILE_KERNEL_FRAME_IRQ_RETURN }
#define I(s) { s, sizeof(s) - 1, PROFILE_KERNEL_FRAME_IDLE }

static const Name names[] = {
        /* PROFILE_KERNEL_FRAME_IRQ_ENTRY: an interrupt's entry, and the handlers only an interrupt
         * runs: it arrived. */
        /* x86 */
        E("common_interrupt"), E("asm_common_interrupt"), E("do_IRQ"), E("ret_from_intr"),
        E("apic_timer_interrupt"), E("call_function_interrupt"), E("call_function_single_interrupt"),
        E("reschedule_interrupt"), E("irq_work_interrupt"), E("x86_platform_ipi"), E("spurious_interrupt"),
        E("error_interrupt"),
        /* x86 hypervisor callbacks before 5.8 (and Xen PV's since) */
        E("xen_hvm_callback_vector"), E("xen_do_hypervisor_callback"), E("xen_evtchn_do_upcall"),
        E("xen_pv_evtchn_do_upcall"), E("hyperv_callback_vector"), E("hyperv_vector_handler"),
        E("hv_stimer0_callback_vector"), E("hv_stimer0_vector_handler"), E("hyperv_reenlightenment_vector"),
        E("hyperv_reenlightenment_intr"),
        /* arm64: entry.S before 5.12, entry-common.c's from 5.12 (el1h_64_irq... by prefix) */
        E("el1_irq"), E("el0_irq"), E("el0_irq_naked"), E("el0_irq_compat"), E("el1_irq_handler"),
        E("el0_irq_handler"), E("el1_interrupt"), E("el0_interrupt"), E("__el0_irq_handler_common"),
        E("__el0_fiq_handler_common"), E("do_interrupt_handler"), E("gic_handle_irq"), E("handle_domain_irq"),
        E("__handle_domain_irq"),
        /* PROFILE_KERNEL_FRAME_SOFTIRQ: an interrupt's exit and the softirqs, on the way out of an
         * interrupt or a task's own at local_bh_enable (do_softirq). */
        S("irq_exit"), S("irq_exit_rcu"), S("__irq_exit_rcu"), S("invoke_softirq"), S("do_softirq"),
        S("__do_softirq"), S("do_softirq_own_stack"), S("call_softirq"), S("handle_softirqs"),
        /* PROFILE_KERNEL_FRAME_IRQ_RETURN: the interrupted task's own work on its way back. */
        /* preemption: 3.10 to 5.7 retint_kernel, 5.8+ irqentry_exit_cond_resched, arm64 */
        R("preempt_schedule_irq"), R("irqentry_exit_cond_resched"), R("raw_irqentry_exit_cond_resched"),
        R("dynamic_irqentry_exit_cond_resched"), R("arm64_preempt_schedule_irq"), R("retint_kernel"),
        /* to user mode: 5.8+ kernel/entry/common.c, 4.1 to 5.7 x86 common.c, 3.10 x86
         * entry_64.S, arm64 */
        R("irqentry_exit_to_user_mode"), R("exit_to_user_mode_prepare"), R("exit_to_user_mode_loop"),
        R("prepare_exit_to_usermode"), R("exit_to_usermode_loop"), R("retint_user"), R("retint_careful"),
        R("retint_signal"), R("do_notify_resume"), R("exit_to_user_mode"), R("prepare_exit_to_user_mode"),
        R("arm64_exit_to_user_mode"),
        /* PROFILE_KERNEL_FRAME_IDLE */
        I("do_idle"), I("cpu_idle_loop"), I("cpuidle_enter_state"), I("default_idle_call"), I("arch_cpu_idle"),
        I("default_idle"), I("native_safe_halt"), I("pv_native_safe_halt"), I("arch_safe_halt"), I("safe_halt"),
        I("mwait_idle_with_hints"), I("mwait_idle"), I("intel_idle"), I("intel_idle_irq"),
        I("acpi_idle_do_entry"), I("acpi_safe_halt"), I("cpu_idle_poll"), I("cpu_do_idle"), I("poll_idle"),
};

/* Every frame of every stack is looked up, most of them no name here: by hash, not name by name
 * (a folded file of 50,000 stacks 60 frames deep took 15 times as long to rank). */
#define SLOTS 512
_Static_assert(ELEMENTSOF(names) < SLOTS / 2, "the names fill under half the slots");
static uint16_t slots[SLOTS]; /* index in names + 1; 0 empty */
/* Which (length, first and last byte) the names have, a bit each: most frames are turned away by
 * it, before their hash. */
#define SEEN_BITS 4096
static uint64_t seen[SEEN_BITS / 64];
static pthread_once_t slots_once = PTHREAD_ONCE_INIT;

/* FNV-1a over the length and the first and last 8 bytes: as cheap for a long C++ name as a short one. */
static uint32_t name_hash(const char *name, size_t len) {
        uint32_t h = (2166136261u ^ (uint32_t) len) * 16777619u;
        size_t head = MIN(len, (size_t) 8), tail = len > 16 ? 8 : len - head;

        for (size_t i = 0; i < head; i++)
                h = (h ^ (uint8_t) name[i]) * 16777619u;
        for (size_t i = len - tail; i < len; i++)
                h = (h ^ (uint8_t) name[i]) * 16777619u;
        return h;
}

static uint32_t name_seen_bit(const char *name, size_t len) {
        return ((uint32_t) len * 131u + (uint8_t) name[0] * 31u + (uint8_t) name[len - 1]) & (SEEN_BITS - 1);
}

static void slots_fill(void) {
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                uint32_t h = name_hash(names[i].s, names[i].len) & (SLOTS - 1);

                while (slots[h] != 0)
                        h = (h + 1) & (SLOTS - 1);
                slots[h] = (uint16_t) (i + 1);
                h = name_seen_bit(names[i].s, names[i].len);
                seen[h / 64] |= UINT64_C(1) << (h % 64);
        }
}

static ProfileKernelFrame name_lookup(const char *name, size_t len) {
        uint32_t b;

        (void) pthread_once(&slots_once, slots_fill);
        if (len == 0)
                return PROFILE_KERNEL_FRAME_OTHER;
        b = name_seen_bit(name, len);
        if (!(seen[b / 64] & (UINT64_C(1) << (b % 64))))
                return PROFILE_KERNEL_FRAME_OTHER;
        for (uint32_t h = name_hash(name, len) & (SLOTS - 1); slots[h] != 0; h = (h + 1) & (SLOTS - 1)) {
                const Name *n = &names[slots[h] - 1];

                if (n->len == len && memcmp(n->s, name, len) == 0)
                        return n->kind;
        }
        return PROFILE_KERNEL_FRAME_OTHER;
}

ProfileKernelFrame profile_kernel_frame(const char *name, size_t len) {
        const char *dot = memchr(name, '.', len);
        ProfileKernelFrame kind;

        if (dot && dot > name) /* "handle_softirqs.cold", "default_idle.isra.0": the function's clone */
                len = (size_t) (dot - name);
        kind = name_lookup(name, len);
        if (kind != PROFILE_KERNEL_FRAME_OTHER)
                return kind;
        /* 5.8+: one sysvec_* per system vector; 3.10 to 5.7: one smp_*_interrupt (or _ipi) each;
         * arm64 5.13+: el1h_64_irq, el0t_64_irq, el0t_32_irq and their _handler, and the FIQs'. */
        switch (len > 0 ? name[0] : 0) {
        case 's':
                if (name_starts(name, len, "sysvec_") ||
                    (name_starts(name, len, "smp_") && (name_ends(name, len, "_interrupt") || name_ends(name, len, "_ipi"))))
                        return PROFILE_KERNEL_FRAME_IRQ_ENTRY;
                break;
        case '_':
                if (name_starts(name, len, "__sysvec_"))
                        return PROFILE_KERNEL_FRAME_IRQ_ENTRY;
                break;
        case 'a':
                if (name_starts(name, len, "asm_sysvec_"))
                        return PROFILE_KERNEL_FRAME_IRQ_ENTRY;
                break;
        case 'e':
                if ((name_starts(name, len, "el1h_") || name_starts(name, len, "el0t_")) &&
                    (name_ends(name, len, "_irq") || name_ends(name, len, "_irq_handler") || name_ends(name, len, "_fiq") ||
                     name_ends(name, len, "_fiq_handler")))
                        return PROFILE_KERNEL_FRAME_IRQ_ENTRY;
                break;
        default:
                break;
        }
        return PROFILE_KERNEL_FRAME_OTHER;
}

int profile_irq_step(bool idle, ProfileKernelFrame kind) {
        switch (kind) {
        case PROFILE_KERNEL_FRAME_IRQ_ENTRY:
                return 1;
        case PROFILE_KERNEL_FRAME_SOFTIRQ: /* the idle task runs none of its own */
                return idle ? 1 : 0;
        case PROFILE_KERNEL_FRAME_IDLE:
                return idle ? -1 : 0;
        case PROFILE_KERNEL_FRAME_IRQ_RETURN:
                return idle ? 0 : -1;
        default:
                return 0;
        }
}

bool profile_comm_is_idle(const char *comm, size_t len) {
        return (len == 7 || (len > 8 && comm[7] == '/')) && memcmp(comm, "swapper", 7) == 0;
}

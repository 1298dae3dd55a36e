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
 *  - arm64: entry.S el1_irq and the handle_arch_irq it calls, gic_handle_irq
 *    (drivers/irqchip/irq-gic.c, irq-gic-v3.c) through handle_domain_irq until 5.13; from 5.12
 *    entry-common.c el1h_64_irq_handler -> el1_interrupt -> do_interrupt_handler -> gic_handle_irq
 *    (generic_handle_domain_irq), irq_exit_rcu -> __do_softirq (handle_softirqs from 6.8).
 *
 * The idle loop: do_idle (kernel/sched/idle.c; cpu_idle_loop before 4.9), cpuidle_enter_state,
 * default_idle_call, arch_cpu_idle, default_idle and its halt (native_safe_halt, and
 * pv_native_safe_halt since 6.5), mwait_idle_with_hints, intel_idle, acpi_idle_do_entry,
 * cpu_idle_poll; arm64's cpu_do_idle.
 */
#include <string.h>

#include "basic/macro.h"
#include "profile/profile-irq.h"

static bool name_is(const char *name, size_t len, const char *s) {
        return strlen(s) == len && memcmp(name, s, len) == 0;
}

static bool name_starts(const char *name, size_t len, const char *s) {
        size_t l = strlen(s);
        return len > l && memcmp(name, s, l) == 0;
}

static bool name_ends(const char *name, size_t len, const char *s) {
        size_t l = strlen(s);
        return len > l && memcmp(name + len - l, s, l) == 0;
}

ProfileKernelFrame profile_kernel_frame(const char *name, size_t len) {
        static const char *const irq[] = {
                /* entry, x86 */
                "common_interrupt", "asm_common_interrupt", "do_IRQ", "ret_from_intr", "apic_timer_interrupt",
                "call_function_interrupt", "call_function_single_interrupt", "reschedule_interrupt",
                "irq_work_interrupt", "x86_platform_ipi", "spurious_interrupt", "error_interrupt",
                /* entry, x86 hypervisor callbacks before 5.8 (and Xen PV's since) */
                "xen_hvm_callback_vector", "xen_do_hypervisor_callback", "xen_evtchn_do_upcall",
                "xen_pv_evtchn_do_upcall", "hyperv_callback_vector", "hyperv_vector_handler",
                "hv_stimer0_callback_vector", "hv_stimer0_vector_handler", "hyperv_reenlightenment_vector",
                "hyperv_reenlightenment_intr",
                /* entry, arm64 */
                "el1_irq", "el1h_64_irq", "el1h_64_irq_handler", "el1_interrupt", "do_interrupt_handler",
                "gic_handle_irq", "handle_domain_irq", "__handle_domain_irq",
                /* exit and softirqs */
                "irq_exit", "irq_exit_rcu", "__irq_exit_rcu", "invoke_softirq", "do_softirq", "__do_softirq",
                "do_softirq_own_stack", "call_softirq", "handle_softirqs",
        };
        static const char *const idle[] = {
                "do_idle", "cpu_idle_loop", "cpuidle_enter_state", "default_idle_call", "arch_cpu_idle",
                "default_idle", "native_safe_halt", "pv_native_safe_halt", "arch_safe_halt", "safe_halt",
                "mwait_idle_with_hints", "mwait_idle", "intel_idle", "intel_idle_irq", "acpi_idle_do_entry",
                "acpi_safe_halt", "cpu_idle_poll", "cpu_do_idle", "poll_idle",
        };
        const char *dot = memchr(name, '.', len);

        if (dot && dot > name) /* "handle_softirqs.cold", "default_idle.isra.0": the function's clone */
                len = (size_t) (dot - name);
        for (size_t i = 0; i < ELEMENTSOF(irq); i++)
                if (name_is(name, len, irq[i]))
                        return PROFILE_KERNEL_FRAME_IRQ;
        /* 5.8+: one sysvec_* per system vector; 3.10 to 5.7: one smp_*_interrupt (or _ipi) each. */
        if (name_starts(name, len, "sysvec_") || name_starts(name, len, "__sysvec_") ||
            name_starts(name, len, "asm_sysvec_") ||
            (name_starts(name, len, "smp_") && (name_ends(name, len, "_interrupt") || name_ends(name, len, "_ipi"))))
                return PROFILE_KERNEL_FRAME_IRQ;
        for (size_t i = 0; i < ELEMENTSOF(idle); i++)
                if (name_is(name, len, idle[i]))
                        return PROFILE_KERNEL_FRAME_IDLE;
        return PROFILE_KERNEL_FRAME_OTHER;
}

bool profile_comm_is_idle(const char *comm, size_t len) {
        return (len == 7 || (len > 8 && comm[7] == '/')) && memcmp(comm, "swapper", 7) == 0;
}

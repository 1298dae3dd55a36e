/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Interrupt work the idle task ran. An interrupt that arrives on an idle CPU runs its handler, and
 * the softirqs on its way out, in the context of the task it interrupted: the idle task, pid 0,
 * whose samples perf names "swapper". Such a sample is work (a NIC's receive storm on an idle host
 * is all of it), not idle; what tells it is the kernel frames between the idle loop and the leaf.
 * perf's kernel call chain starts at the registers the sampling interrupt interrupted, so that
 * interrupt itself is never among them: an idle CPU's sample ends in the halt
 * ("...;default_idle;pv_native_safe_halt").
 *
 * PROFILE_IRQ_IN_IDLE_KEY is the name such samples count under where processes are ranked and
 * how bundles count a CPU busy: a blank in it, which no folded comm has (profile_comm_tidy()
 * makes blanks '_'), so that it names no process.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define PROFILE_IRQ_IN_IDLE_KEY "[irq in idle]"

typedef enum ProfileKernelFrame {
        PROFILE_KERNEL_FRAME_OTHER,
        PROFILE_KERNEL_FRAME_IRQ,  /* an interrupt's entry or handler, or softirq handling */
        PROFILE_KERNEL_FRAME_IDLE, /* the idle loop itself, down to its halt */
} ProfileKernelFrame;

/* What a kernel frame's function (len bytes of name; a compiler clone's ".isra.0" or ".cold"
 * suffix is looked past) says of the sample. */
ProfileKernelFrame profile_kernel_frame(const char *name, size_t len);

/* A sample of the idle task ran interrupt work when, walking its frames from the leaf, a
 * PROFILE_KERNEL_FRAME_IRQ comes before any PROFILE_KERNEL_FRAME_IDLE (folded_stack_irq_in_idle()
 * over a folded line, the bundle writer over a sample's frames). */

/* Whether a comm is the idle task's as perf names it ("swapper", or "swapper/N"). */
bool profile_comm_is_idle(const char *comm, size_t len);

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Interrupt work. An interrupt runs its handler, and the softirqs on its way out, in the context of
 * the task it interrupted: on an idle CPU the idle task, pid 0, whose samples perf names
 * "swapper"; on a busy one whichever process ran, whose samples they become. Such a sample is
 * interrupt work (a NIC's receive storm is that, wherever it lands: on a busy host spread over
 * whichever processes happened to run, a little each), not idle nor that process's; what tells it
 * is the kernel frames between the task's own and the leaf. perf's kernel call chain starts at the
 * registers the sampling interrupt interrupted, so that interrupt itself is never among them: an
 * idle CPU's sample ends in the halt ("...;default_idle;pv_native_safe_halt").
 *
 * PROFILE_IRQ_KEY is the name such samples count under where processes are ranked, "[irq]":
 * brackets, as perf names what is no process of its own ("[unknown]"). A program that calls
 * itself "[irq]" counts with it, as one that calls itself "swapper" counts as the idle task.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define PROFILE_IRQ_KEY "[irq]"

typedef enum ProfileKernelFrame {
        PROFILE_KERNEL_FRAME_OTHER,
        PROFILE_KERNEL_FRAME_IRQ_ENTRY,  /* an interrupt's entry or a handler only one runs: it arrived */
        PROFILE_KERNEL_FRAME_SOFTIRQ,    /* an interrupt's exit, or softirq handling: also a task's own,
                                          * at local_bh_enable (do_softirq) */
        PROFILE_KERNEL_FRAME_IRQ_RETURN, /* the interrupted task's own work on its way back from one:
                                          * preemption, signals, task work on the way to user mode */
        PROFILE_KERNEL_FRAME_IDLE,       /* the idle loop itself, down to its halt */
} ProfileKernelFrame;

/* What a kernel frame's function (len bytes of name; a compiler clone's ".isra.0" or ".cold"
 * suffix is looked past) says of the sample. */
ProfileKernelFrame profile_kernel_frame(const char *name, size_t len);

/* A sample ran interrupt work when, walking its frames from the leaf towards the root, a frame
 * says so before one says not: of the idle task (idle), an interrupt's entry or a softirq before
 * the idle loop (it runs no softirq on its own behalf that counts as idle); of any other task, an
 * interrupt's entry before the task's own way back from one (a softirq the task ran itself at
 * local_bh_enable stays its own). profile_irq_step() is one step of that walk: 1 interrupt work,
 * -1 not, 0 the frame does not say (so is a sample none of whose frames says). Used over a folded
 * line (folded_stack_irq()), a sample's frames (the bundle writer) and the page's call tree. */
int profile_irq_step(bool idle, ProfileKernelFrame kind);

/* Whether a comm is the idle task's as perf names it ("swapper", or "swapper/N"). */
bool profile_comm_is_idle(const char *comm, size_t len);

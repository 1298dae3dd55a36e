/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What bundle-analyze.c (the rankings) and bundle-answer.c (the one-line answer and the fall)
 * share: the per-key sample counts of two folded sets and the key a stack is counted under.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "basic/hashmap.h"
#include "bundle/bundle-analyze.h"
#include "profile/profile-irq.h"

typedef struct Counts {
        char *key;
        uint64_t slice, baseline;
        size_t depth;   /* folded_rise_under(): the deepest it was seen at */
        uint64_t stamp; /* folded_rise_under(): the last stack it was counted in, + 1 */
} Counts;

typedef struct CountTable {
        Hashmap *h;
        Counts *c;
        size_t n, allocated;
} CountTable;

void count_table_done(CountTable *t);

/* Each key's samples in a (as slice) and in b (as baseline), into a table made here. */
int count_both(CountTable *t, const Folded *a, const Folded *b, RiseKind kind);

/* Whether c rose, as folded_rises() lists a rise: a larger share of the slice's slice_total samples
 * than of the baseline's baseline_total, by z >= RISE_Z_MIN, with RISE_SAMPLES_MIN samples. */
bool counts_rose(const Counts *c, uint64_t slice_total, uint64_t baseline_total);

/* A stack's key as the rankings count it. Process: the comm, a per-CPU kernel thread's merged
 * ("ksoftirqd/" "*", folded_comm_prefix()), interrupt work, whichever task it ran in,
 * PROFILE_IRQ_KEY (folded_stack_irq(), as the line's irq_tail has it). Function: "comm;leaf" with that comm (the comm alone when
 * the stack has no frame), built in buf where it is not a run of stack itself. */
/* "[irq]" is longer than a comm such as "sh" it stands for: a line of a long leaf under it is a
 * key longer than the line. */
#define STACK_KEY_MAX (FOLDED_LINE_MAX + sizeof(PROFILE_IRQ_KEY) + 2)
void stack_key(const FoldedLine *l, RiseKind kind, char buf[static STACK_KEY_MAX], const char **ret, size_t *ret_len);

/* Whether a stack's leaf may be named as a function that rose (a process's top function, a
 * function's rise as the answer): not a frame that names nothing ("[unknown]", "[libfoo.so]"), nor
 * one every thread starts from (start_thread, kthread), nor a system call's way in or out (the
 * kernel's entry, do_syscall_64(); the C library's wrapper is told by folded_rises() from the
 * process's stacks), nor where the softirqs land (handle_softirqs, __do_softirq, irq_exit). */
bool leaf_names_function(const char *f, size_t len);

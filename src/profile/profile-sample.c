/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tags for SampleStackSlot: one counter for every consumer in the process, so no two tables or
 * memos ever share a tag.
 */
#include "profile/profile-sample.h"

static uint64_t tag_last;

uint64_t sample_stack_tag_new(void) {
        return __atomic_add_fetch(&tag_last, 1, __ATOMIC_RELAXED);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tprofd --once: sample every CPU (or one process) for a while and print folded stacks on out and
 * a summary (samples, lost, CPUs, event) on err. Stands alone: no ring, no state directory.
 */
#pragma once

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "profile/profile-cgroup.h"

typedef struct OnceOptions {
        uint64_t duration_usec;
        uint32_t freq_hz;
        pid_t pid; /* 0: every process */
        int unwind; /* UnwindMode */
        uint32_t unwind_stack_bytes; /* 0: default */
        CgroupBy by; /* what roots each stack: the process name, or its cgroup's unit, container or pod */
        bool cgroups_from_proc;
        uint64_t symbol_cache_bytes, unwind_cache_bytes; /* 0: defaults (SamplerOptions) */
} OnceOptions;

int sampler_once_run(const OnceOptions *o, FILE *out, FILE *err);

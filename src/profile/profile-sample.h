/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The symbolized sample: what the sampler and symbolizer hand to the ring writer, what the ring
 * reader hands back, and what every exporter consumes. Plain data, no ownership: strings and the
 * frame array belong to whoever produced the Sample and stay valid until they say otherwise
 * (the symbolizer's caches, a window reader's string table).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

/* Deepest call chain kept per sample (perf's default sysctl kernel.perf_event_max_stack is 127). */
#define PROFILE_STACK_DEPTH_MAX 127U
/* Longest symbol or DSO name we keep; longer names are cut (C++ templates can run to kilobytes). */
#define PROFILE_NAME_BYTES_MAX 1024U

typedef struct Frame {
        const char *symbol; /* "mem_cgroup_nr_lru_pages", or "[unknown]" */
        const char *dso;    /* "[kernel.kallsyms]", "[ena]", "/usr/lib/x86_64-linux-gnu/libc.so.6", "[unknown]" */
        uint64_t addr;      /* the instruction pointer as sampled */
        uint64_t offset;    /* addr minus the symbol's start; 0 when unknown */
        /* The DSO's ELF build id (NT_GNU_BUILD_ID) in lowercase hex, as perf, pprof and debuginfod
         * write it; NULL when unknown (no file, no note, a file that could not be read). */
        const char *build_id;
        bool kernel;
} Frame;

/*
 * Where a consumer that interns stacks (the window writer) remembers what it made of a sample's
 * frames, so that the next sample of the same call chain skips the work. The producer (the
 * sampler's stack cache) hands the same slot for every sample whose frames are the same, and a
 * fresh slot (tag 0) whenever they may differ. The consumer owns the contents: a tag of its own
 * that says for which of its tables stack is valid.
 */
typedef struct SampleStackSlot {
        uint64_t tag; /* 0 = nothing remembered */
        uint32_t stack;
} SampleStackSlot;

/* A tag no other consumer in the process has: for each set of tables (or memo) a consumer keeps. */
uint64_t sample_stack_tag_new(void);

typedef struct Sample {
        uint64_t t_ns; /* perf clock (local_clock), the clock printk stamps kmsg records with */
        uint32_t cpu;
        uint32_t pid;
        uint32_t tid;
        const char *comm;
        uint64_t period; /* event period, for perf-script output; 0 if unknown */
        uint32_t n_frames;
        const Frame *frames; /* leaf first, as perf script prints them */
        const char *cgroup;  /* the cgroup v2 path it ran in ("/system.slice/x.service"); NULL if unknown */
        SampleStackSlot *stack_slot; /* NULL when the producer keeps none */
        /* The same for the frames after the leaf (frames[1..n_frames)): the producer hands one slot
         * for every sample whose frames past the leaf are the same, though leaves differ. NULL
         * when it keeps none. A consumer that finds no use in stack_slot interns only the leaf. */
        SampleStackSlot *callers_slot;
} Sample;
